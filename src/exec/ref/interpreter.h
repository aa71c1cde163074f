// The reference interpreter: walks a function op by op and calls one kernel per op
// (eval_<mnemonic>, grouped by family in ref/<family>.cpp). Obvious per-element code, the
// oracle for every other executor. The cpu executor falls back to these kernels for ops it has
// no fast path for.
#pragma once
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "exec/replicas.h"
#include "hlo/ir.h"

namespace netspec::exec::ref {

// Values visible from enclosing scopes: StableHLO regions (while/if/case/...) may use values
// defined outside them. run_block pushes one Scope per block; another executor that calls a
// region-carrying ref kernel sets ctx.scope to a Scope that resolves its own values.
class Scope {
 public:
  explicit Scope(const Scope* parent = nullptr) : parent_(parent) {}
  virtual ~Scope() = default;
  // The tensor bound to v in this scope only, or nullptr.
  virtual const Tensor* find_local(const hlo::Value* v) const = 0;
  // Searches this scope, then the enclosing ones; nullptr when unbound everywhere.
  const Tensor* find(const hlo::Value* v) const {
    for (const Scope* s = this; s; s = s->parent_)
      if (const Tensor* t = s->find_local(v)) return t;
    return nullptr;
  }
  const Scope* parent() const { return parent_; }

 private:
  const Scope* parent_;
};

struct RunContext {
  int replica_id = 0;
  Communicator* comm = nullptr;  // null for a single replica
  const Scope* scope = nullptr;  // innermost scope of the block being run (see Scope)
};

// Kernel for one op: operand tensors in, result tensors out (one per op result).
using Kernel = std::vector<Tensor> (*)(const hlo::Op& op, const std::vector<Tensor>& operands,
                                       RunContext& ctx);

// Table indexed by OpKind; an entry is null when no kernel exists (running it is an Error
// naming the op).
const Kernel* kernel_table();
Kernel kernel_for(hlo::OpKind k);
// The ops run_block evaluates itself (terminators, tuple, get_tuple_element): no kernel.
// Every other op has one (tests/exec/op_coverage_test.cpp checks).
bool run_by_block(hlo::OpKind k);

// Runs a block (function body or region) on argument tensors; returns the terminator's operands.
// stablehlo.tuple / get_tuple_element values live only inside a block: run_block handles them
// itself (their table entries are null), so tuple-typed function arguments and results are
// refused.
std::vector<Tensor> run_block(const hlo::Block& block, const std::vector<Tensor>& args,
                              RunContext& ctx);
// Runs a function (checks inputs first).
std::vector<Tensor> run_func(const hlo::Func& f, const std::vector<Tensor>& args, RunContext& ctx);

// Family registration (each ref/<family>.cpp fills its ops).
void register_misc_kernels(Kernel* t);
void register_unary_kernels(Kernel* t);
void register_binary_kernels(Kernel* t);
void register_shape_kernels(Kernel* t);
void register_dot_conv_kernels(Kernel* t);
void register_reduce_window_kernels(Kernel* t);
void register_gather_sort_kernels(Kernel* t);
void register_control_kernels(Kernel* t);
void register_collective_kernels(Kernel* t);

}  // namespace netspec::exec::ref
