// Reference kernels: while, if, case, optimization_barrier, func.call. Regions run through
// run_block and see enclosing values via ctx.scope. (tuple / get_tuple_element: run_block.)
#include "exec/limits.h"
#include "exec/ref/kernel_util.h"
#include "hlo/op_family.h"

namespace netspec::exec::ref {
namespace {

// while: vals = operands; while cond(vals): vals = body(vals). Bounded by run_limits()
// (iteration cap and deadline) so that a condition that never turns false ends in an Error.
std::vector<Tensor> eval_while(const hlo::Op& op, const std::vector<Tensor>& in, RunContext& ctx) {
  std::vector<Tensor> vals = in;
  for (int64_t it = 0; pred_at(run_block(*op.region(0), vals, ctx).at(0)); ++it) {
    check_while_iteration(it);
    vals = run_block(*op.region(1), vals, ctx);
  }
  return vals;
}

// if: the true branch (region 0) or the false branch (region 1), no arguments.
std::vector<Tensor> eval_if(const hlo::Op& op, const std::vector<Tensor>& in, RunContext& ctx) {
  return run_block(*op.region(pred_at(in[0]) ? 0 : 1), {}, ctx);
}

// case: branch `index`; an index outside [0, N) runs the last branch (spec).
std::vector<Tensor> eval_case(const hlo::Op& op, const std::vector<Tensor>& in, RunContext& ctx) {
  int64_t n = static_cast<int64_t>(op.regions.size());
  int64_t i = int_at(in[0]);
  if (i < 0 || i >= n) i = n - 1;
  return run_block(*op.region(static_cast<size_t>(i)), {}, ctx);
}

std::vector<Tensor> eval_optimization_barrier(const hlo::Op&, const std::vector<Tensor>& in,
                                              RunContext&) {
  return in;
}

// func.call @callee(args): runs the callee in the same module.
std::vector<Tensor> eval_call(const hlo::Op& op, const std::vector<Tensor>& in, RunContext& ctx) {
  const std::string& name = op.attrs.get<hlo::SymbolRef>("callee").name;
  const hlo::Module* m = op.module();
  const hlo::Func* f = m ? m->find(name) : nullptr;
  if (!f) fail("call", "no function named @{} in the module", name);
  return run_func(*f, in, ctx);
}

}  // namespace

void register_control_kernels(Kernel* t) {
  hlo::FamilyTable<Kernel> ft(t, "control.cpp", {"control"});
  using K = hlo::OpKind;
  ft.set(K::kWhile, eval_while);
  ft.set(K::kIf, eval_if);
  ft.set(K::kCase, eval_case);
  ft.set(K::kOptimizationBarrier, eval_optimization_barrier);
  ft.set(K::kCall, eval_call);
}

}  // namespace netspec::exec::ref
