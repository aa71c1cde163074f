// VJP rules of control flow, tuples and calls. if/case: a new if/case on the same
// predicate whose branches re-emit the forward branch and differentiate it, returning the
// cotangents of the outer values the branches use. func.call: the callee's registered custom
// backward (plain calls were inlined before differentiation). while: refused unless wrapped.
#include "autodiff/rules.h"
#include "hlo/op_family.h"

namespace netspec::autodiff {
namespace {

using hlo::Block;
using hlo::Builder;
using hlo::OpKind;
using hlo::Value;
using V = std::vector<Value*>;

// Builds the backward of branch region `r`: forward re-emitted inside the new region (branch
// values are not visible outside it), seeded with the op's result cotangents.
hlo::RegionFn branch_backward(VjpCtx& c, size_t r, const V& caps) {
  return [&c, r, caps](Builder& rb, const V&) {
    Block* blk = rb.block();
    hlo::ValueMap map;
    V outs = c.engine.clone_forward(blk, *c.op.region(r), map);
    size_t n = blk->ops.size();
    c.engine.mark_active(*blk, 0, n);
    CotMap cot;
    for (size_t i = 0; i < outs.size(); ++i)
      if (c.dy[i] && c.engine.is_active(outs[i])) c.engine.accumulate(rb, cot, outs[i], c.dy[i]);
    c.engine.backprop(rb, *blk, n, cot);
    V ret;
    for (Value* v : caps) {
      auto it = cot.find(v);
      ret.push_back(it != cot.end() ? it->second : zeros(rb, v->type));
    }
    return ret;
  };
}

// y = if(p) {A} else {B}: (d captures) = if(p) {∂A} else {∂B}; dp = 0.
V if_(VjpCtx& c) {
  V caps = c.engine.active_captures(c.op);
  V out(c.op.operands.size(), nullptr);
  if (caps.empty()) return out;
  V r = c.b.if_(c.x(0), branch_backward(c, 0, caps), branch_backward(c, 1, caps));
  for (size_t i = 0; i < caps.size(); ++i) c.captured_cots.push_back({caps[i], r[i]});
  return out;
}

// y = case(i) {B0, B1, ...}: (d captures) = case(i) {∂B0, ∂B1, ...}; di = 0.
V case_(VjpCtx& c) {
  V caps = c.engine.active_captures(c.op);
  V out(c.op.operands.size(), nullptr);
  if (caps.empty()) return out;
  std::vector<hlo::RegionFn> branches;
  for (size_t k = 0; k < c.op.regions.size(); ++k) branches.push_back(branch_backward(c, k, caps));
  V r = c.b.case_(c.x(0), branches);
  for (size_t i = 0; i < caps.size(); ++i) c.captured_cots.push_back({caps[i], r[i]});
  return out;
}

// func.call @f with a custom VJP: d args = backward(args, results, d results).
V call(VjpCtx& c) {
  const std::string& name = c.op.attrs.get<hlo::SymbolRef>("callee").name;
  const CustomVjpFn* fn = c.engine.custom_for(name);
  if (!fn) fail("vjp", "func.call @{} has no custom VJP and was not inlined", name);
  CustomVjpArgs a;
  a.args.assign(c.op.operands.begin(), c.op.operands.end());
  for (size_t i = 0; i < c.op.results.size(); ++i) {
    a.results.push_back(c.y(i));
    a.result_cots.push_back(c.dy_or_zero(i));
  }
  a.wants = c.wants;
  V r = (*fn)(c.b, a);
  if (r.size() != a.args.size())
    fail("vjp", "custom VJP of @{} returned {} cotangents (expected {})", name, r.size(),
         a.args.size());
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i] && r[i]->type != a.args[i]->type)
      fail("vjp", "custom VJP of @{}: cotangent {} has type {} (expected {})", name, i,
           r[i]->type.str(), a.args[i]->type.str());
  return r;
}

V while_(VjpCtx&) {
  fail("vjp",
       "stablehlo.while is not differentiable by rules: put the loop in a function with a "
       "custom VJP (autodiff::call_with_custom_vjp) that supplies its backward");
}

V tuple(VjpCtx& c) {  // dx_i = get_tuple_element(dy, i)
  V out;
  for (size_t i = 0; i < c.op.operands.size(); ++i)
    out.push_back(c.wants[i] ? c.b.get_tuple_element(c.dy[0], static_cast<int64_t>(i)) : nullptr);
  return out;
}

V get_tuple_element(VjpCtx& c) {  // dt = tuple(0, ..., dy at index, ..., 0)
  int64_t idx = c.op.attrs.get_int("index");
  const hlo::Type& tt = c.x(0)->type;
  V es;
  for (size_t i = 0; i < tt.elems().size(); ++i)
    es.push_back(static_cast<int64_t>(i) == idx ? c.dy[0] : zeros(c.b, tt.elems()[i]));
  return {c.b.tuple(es)};
}

V optimization_barrier(VjpCtx& c) { return c.dy; }  // dx_i = dy_i

}  // namespace

void register_control_vjps(VjpRule* t) {
  hlo::FamilyTable<VjpRule> ft(t, "vjp_control.cpp", {"control"});
  ft.set(OpKind::kIf, if_);
  ft.set(OpKind::kCase, case_);
  ft.set(OpKind::kCall, call);
  ft.set(OpKind::kWhile, while_);
  ft.set(OpKind::kTuple, tuple);
  ft.set(OpKind::kGetTupleElement, get_tuple_element);
  ft.set(OpKind::kOptimizationBarrier, optimization_barrier);
}

}  // namespace netspec::autodiff
