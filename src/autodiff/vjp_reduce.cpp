// VJP rules of reduce (single input with an add / maximum / minimum / multiply body) and sort.
// Variadic reduces (argmax-style pairs) are refused with a message pointing at custom VJPs.
#include <algorithm>

#include "autodiff/rules.h"
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

// y_i = sort(x_i) along d: re-sort with an extra iota operand to get the permutation p, then
// dx_i = the dy_i sorted back by p (a second sort keyed on p; no scatter, no one-hot).
std::vector<Value*> sort(VjpCtx& c) {
  hlo::Builder& b = c.b;
  int64_t dim = c.op.attrs.get_int("dimension");
  bool stable = c.op.attrs.get_bool_or("is_stable", false);
  const hlo::Type& t0 = c.x(0)->type;
  std::vector<Value*> ins(c.op.operands.begin(), c.op.operands.end());
  ins.push_back(b.iota(hlo::Type::tensor(DType::kI64, t0.shape()), dim));
  const hlo::Block& cmp = *c.op.region(0);
  // Same comparator; the two extra (iota) arguments are unused.
  auto comparator = [&](hlo::Builder& rb, const std::vector<Value*>& args) {
    hlo::ValueMap map;
    for (size_t i = 0; i < cmp.args.size(); ++i) map[cmp.arg(i)] = args[i];
    std::vector<Value*> out;
    for (const auto& op : cmp.ops) {
      if (op->kind == OpKind::kReturn) {
        for (Value* v : op->operands) out.push_back(hlo::lookup(map, v));
        break;
      }
      hlo::clone_op(rb.block(), *op, map);
    }
    return out;
  };
  std::vector<Value*> sorted = b.sort(ins, dim, stable, comparator);
  Value* perm = sorted.back();
  std::vector<Value*> keyed{perm};
  std::vector<size_t> which;
  for (size_t i = 0; i < c.op.operands.size(); ++i)
    if (c.wants[i]) {
      keyed.push_back(c.dy_or_zero(i));
      which.push_back(i);
    }
  std::vector<Value*> out(c.op.operands.size(), nullptr);
  if (which.empty()) return out;
  auto by_perm = [](hlo::Builder& rb, const std::vector<Value*>& args) {
    return std::vector<Value*>{rb.compare(args[0], args[1], "LT")};
  };
  std::vector<Value*> back = b.sort(keyed, dim, false, by_perm);
  for (size_t k = 0; k < which.size(); ++k) out[which[k]] = back[k + 1];
  return out;
}

}  // namespace

void register_reduce_vjps(VjpRule* t) {
  t[static_cast<size_t>(OpKind::kReduce)] = reduce;
  t[static_cast<size_t>(OpKind::kSort)] = sort;
}

}  // namespace netspec::autodiff
