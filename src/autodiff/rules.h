// Internal contract between the VJP engine (vjp.cpp) and the per-family rule files
// vjp_<family>.cpp: a rule gets the forward op (already emitted in the generated function), the
// cotangents of its results, and returns one cotangent per operand (nullptr = zero). Control-flow
// rules recurse into the engine to differentiate region bodies.
#pragma once
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "autodiff/vjp.h"
#include "hlo/builder.h"
#include "hlo/passes.h"

namespace netspec::autodiff {

using CotMap = std::unordered_map<const hlo::Value*, hlo::Value*>;
class Engine;

struct VjpCtx {
  hlo::Builder& b;
  const hlo::Op& op;
  std::vector<hlo::Value*> dy;  // per result; nullptr = zero cotangent
  std::vector<bool> wants;      // per operand: active and of a differentiable type
  Engine& engine;
  // Cotangents of values from enclosing scopes that the op's regions use (if/case fill this).
  std::vector<std::pair<hlo::Value*, hlo::Value*>> captured_cots;

  hlo::Value* x(size_t i) const { return op.operand(i); }
  hlo::Value* y(size_t i = 0) const { return op.result(i); }
  hlo::Value* dy_or_zero(size_t i);
};

using VjpRule = std::vector<hlo::Value*> (*)(VjpCtx& c);

// Per-family registration (table indexed by OpKind; null = no rule = Error when reached).
void register_elementwise_vjps(VjpRule* t);
void register_shape_vjps(VjpRule* t);
void register_dot_vjps(VjpRule* t);
void register_conv_vjps(VjpRule* t);
void register_reduce_vjps(VjpRule* t);
void register_window_vjps(VjpRule* t);
void register_gather_sort_vjps(VjpRule* t);
void register_control_vjps(VjpRule* t);
void register_collective_vjps(VjpRule* t);

// The rule table; every op but the terminators has a rule (no_grad and refusing rules count),
// which tests/autodiff/coverage_test.cpp checks.
VjpRule vjp_rule_for(hlo::OpKind k);

// The rule for ops whose results carry no cotangent to their operands (compare, iota, integer
// and boolean ops, rng, piecewise-constant float ops like floor).
std::vector<hlo::Value*> no_grad(VjpCtx& c);

// --- helpers for rules ---
hlo::Value* zeros(hlo::Builder& b, const hlo::Type& t);  // tensors and tuples
// Sum over `dims` (result drops them).
hlo::Value* reduce_sum(hlo::Builder& b, hlo::Value* x, const hlo::I64s& dims);
hlo::Value* sum_all(hlo::Builder& b, hlo::Value* x);  // to a scalar
// A scalar of x's element type, broadcast to x's shape.
hlo::Value* splat_like(hlo::Builder& b, double v, hlo::Value* like);
// The single binary op a two-argument region applies to its arguments (reduce bodies), if any.
std::optional<hlo::OpKind> region_combiner(const hlo::Block& region);
hlo::I64s inverse_permutation(const hlo::I64s& p);

class Engine {
 public:
  Engine(const VjpOptions& opts, const hlo::Module& module) : opts_(opts), module_(module) {}

  // Forward propagation of activity over ops [begin, end) of `blk` (regions included).
  void mark_active(const hlo::Block& blk, size_t begin, size_t end);
  void set_active(const hlo::Value* v) { active_.insert(v); }
  bool is_active(const hlo::Value* v) const { return active_.count(v) != 0; }

  // Clones ops of `src` (except its terminator) into `into` through `map`, inlining func.call
  // ops whose callee has no custom VJP. Returns the mapped terminator operands.
  std::vector<hlo::Value*> clone_forward(hlo::Block* into, const hlo::Block& src,
                                         hlo::ValueMap& map);

  // Reverse pass over ops [0, n_ops) of `blk`, emitting through b (positioned at blk's end).
  void backprop(hlo::Builder& b, hlo::Block& blk, size_t n_ops, CotMap& cot);
  void accumulate(hlo::Builder& b, CotMap& cot, hlo::Value* primal, hlo::Value* c);

  // Values defined outside op's regions that its regions use, active and differentiable, in
  // first-use order.
  std::vector<hlo::Value*> active_captures(const hlo::Op& op) const;

  const CustomVjpFn* custom_for(std::string_view callee) const;
  const hlo::Module& module() const { return module_; }

 private:
  const VjpOptions& opts_;
  const hlo::Module& module_;
  std::unordered_set<const hlo::Value*> active_;
};

}  // namespace netspec::autodiff
