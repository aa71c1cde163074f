// The JAX emitter's per-op table: each OpKind has either a translation (the Python expression of
// the op's results, written through a Translator) or a refusal that says why it has no JAX form.
// The family files ops_<family>.cpp fill it through hlo::FamilyTable, like the type rules, ref
// kernels and VJP rules; tests/jax/op_coverage_test.cpp fails for an op with neither.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hlo/ir.h"
#include "hlo/window_attrs.h"
#include "jax/translator.h"

namespace netspec::jax {

// The Python expression of op's results; it may write lines first (nested region functions,
// temporaries) through t.
using ExprFn = std::function<std::string(Translator& t, const hlo::Op& op)>;

struct OpRule {
  ExprFn expr;                 // empty when the op is refused
  std::string refusal;         // why the op has no JAX form (set exactly when expr is empty)
  bool tuple = false;          // expr is a Python tuple even for one result (`t0, = expr`)
  bool inline_scalar = false;  // a rank-0 result is used inline where read, not assigned
};

inline OpRule translated(ExprFn f) { return {std::move(f), "", false, false}; }
inline OpRule translated_tuple(ExprFn f) { return {std::move(f), "", true, false}; }
inline OpRule refused(std::string why) { return {nullptr, std::move(why), false, false}; }

// The table, built once from the family files.
const OpRule& op_rule(hlo::OpKind k);

// Per-family registration (the table is indexed by OpKind).
void register_misc_ops(OpRule* t);           // misc, collective
void register_elementwise_ops(OpRule* t);    // unary, binary
void register_shape_ops(OpRule* t);          // shape
void register_dot_conv_ops(OpRule* t);       // dot, conv
void register_reduce_window_ops(OpRule* t);  // reduce, window
void register_gather_sort_ops(OpRule* t);    // gather, sort
void register_control_ops(OpRule* t);        // control

// --- shared by the family files (ops.cpp) ---
// i64 array attributes with their defaults (hlo/window_attrs.h).
using hlo::attr_i64s_or;
// The `padding` attribute as ((lo, hi), ...) for n dims (zeros when absent).
std::string padding_pairs(const hlo::Op& op, size_t n);
// The jax.lax function of a binary elementwise op ("lax.add"), or nullptr (ops_elementwise.cpp).
const char* lax_binary(hlo::OpKind k);
// Monoid reductions. The identity of a monoid combiner as a concrete numpy scalar (JAX then
// picks its differentiable reduce_sum / reduce_max ...), or nullopt when `k` is no monoid.
std::optional<std::string> monoid_identity(hlo::OpKind k, DType d);
// The combiner of a region `(a, b) -> op(a, b)` with one monoid op, or nullopt.
std::optional<hlo::OpKind> monoid_body(const hlo::Block& r);
// Whether v is the identity of combiner k on dtype d (an init that changes nothing).
bool is_identity_value(hlo::OpKind k, double v, DType d);

}  // namespace netspec::jax
