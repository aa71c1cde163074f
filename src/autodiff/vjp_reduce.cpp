// VJP rules of reduce (single input with an add / maximum / minimum / multiply body).
// Variadic reduces (argmax-style pairs) are refused with a message pointing at custom VJPs.
#include <algorithm>

#include "autodiff/rules.h"
#include "hlo/op_family.h"
#include "hlo/passes.h"

namespace netspec::autodiff {
namespace {

using hlo::I64s;
using hlo::OpKind;
using hlo::Value;

// Broadcast a reduce result (dims `reduced` of x removed) back to x's shape.
Value* unreduce(hlo::Builder& b, Value* v, const hlo::Type& xt, const I64s& reduced) {
  I64s kept;
  for (int64_t d = 0; d < xt.rank(); ++d)
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  return b.broadcast_in_dim(v, xt.shape(), kept);
}

std::vector<Value*> reduce(VjpCtx& c) {
  if (c.op.operands.size() != 2)
    fail("vjp",
         "stablehlo.reduce with {} inputs is not differentiable (expected 1; use a custom VJP)",
         c.op.operands.size() / 2);
  auto comb = region_combiner(*c.op.region(0));
  if (!comb || (*comb != OpKind::kAdd && *comb != OpKind::kMaximum && *comb != OpKind::kMinimum &&
                *comb != OpKind::kMultiply))
    fail("vjp",
         "stablehlo.reduce body is not one of add/maximum/minimum/multiply (use a custom VJP)");
  hlo::Builder& b = c.b;
  Value* x = c.x(0);
  Value* init = c.x(1);
  Value* y = c.y();
  Value* dy = c.dy[0];
  const I64s& dims = c.op.attrs.get_i64s("dimensions");
  Value* dx = nullptr;
  Value* dinit = nullptr;
  switch (*comb) {
    case OpKind::kAdd:  // dx = broadcast(dy), dinit = sum(dy) (init enters each output once)
      if (c.wants[0]) dx = unreduce(b, dy, x->type, dims);
      if (c.wants[1]) dinit = sum_all(b, dy);
      break;
    case OpKind::kMaximum:
    case OpKind::kMinimum: {
      // dx = dy·[x == y] / count(x == y): ties share the cotangent (a subgradient).
      if (c.wants[1])
        fail("vjp", "stablehlo.reduce ({}) cannot differentiate its init value",
             *comb == OpKind::kMaximum ? "maximum" : "minimum");
      Value* mask = b.compare(x, unreduce(b, y, x->type, dims), "EQ");
      Value* count = reduce_sum(b, b.convert(mask, x->type.dtype()), dims);
      Value* share = unreduce(b, b.divide(dy, count), x->type, dims);
      dx = b.select(mask, share, splat_like(b, 0, x));
      break;
    }
    default: {  // multiply: dx = broadcast(dy·y) / x, dinit = sum(dy·y) / init
      Value* dyy = b.multiply(dy, y);
      if (c.wants[0]) dx = b.divide(unreduce(b, dyy, x->type, dims), x);
      if (c.wants[1]) dinit = b.divide(sum_all(b, dyy), init);
      break;
    }
  }
  return {dx, dinit};
}

// map: the engine lifts a map whose body is elementwise to whole-tensor ops before differentiating
// (vjp.cpp); any other map reaches this rule and is refused.
std::vector<Value*> map_refused(VjpCtx& c) {
  fail("vjp",
       "{} is differentiable only when its body is elementwise ops on its arguments (got a "
       "body with {} ops that could not be lifted; use a custom VJP)",
       c.op.name(), c.op.region(0)->ops.size());
}

}  // namespace

void register_reduce_vjps(VjpRule* t) {
  hlo::FamilyTable<VjpRule> ft(t, "vjp_reduce.cpp", {"reduce"});
  ft.set(OpKind::kReduce, reduce);
  ft.set(OpKind::kMap, map_refused);
}

}  // namespace netspec::autodiff
