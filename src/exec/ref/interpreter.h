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

struct RunContext {
  int replica_id = 0;
  ReplicaComm* comm = nullptr;  // null for a single replica
};

// Kernel for one op: operand tensors in, result tensors out (one per op result).
using Kernel = std::vector<Tensor> (*)(const hlo::Op& op, const std::vector<Tensor>& operands, RunContext& ctx);

// Table indexed by OpKind; an entry is null when no kernel exists (running it is an Error
// naming the op).
const Kernel* kernel_table();
Kernel kernel_for(hlo::OpKind k);

// Runs a block (function body or region) on argument tensors; returns the terminator's operands.
std::vector<Tensor> run_block(const hlo::Block& block, const std::vector<Tensor>& args, RunContext& ctx);
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
