// hlo::rematerialize (src/hlo/remat.cpp): which values are recomputed near a late use and which
// stay alive. Values are 64x512 f32 (128 KiB, above the 64 KiB threshold) unless said otherwise;
// "filler" is a chain of tanh ops that puts more than min_gap ops between two uses.
#include <gtest/gtest.h>

#include "hlo/builder.h"
#include "hlo/passes.h"
#include "hlo/verify.h"

namespace netspec::hlo {
namespace {

Type f32(Shape s) { return Type::tensor(DType::kF32, std::move(s)); }
const Shape kBig = {64, 512};

int count(const Func& f, OpKind k) {
  int n = 0;
  walk(*f.body, [&](const Op& op) { n += op.kind == k; });
  return n;
}

// Index of `op` in the function body.
size_t index_of(const Func& f, const Op* op) {
  for (size_t i = 0; i < f.body->ops.size(); ++i)
    if (f.body->ops[i].get() == op) return i;
  return SIZE_MAX;
}

// n tanh ops in a chain from x (not cheap: never recomputed).
Value* filler(Builder& b, Value* x, int n) {
  for (int i = 0; i < n; ++i) x = b.tanh(x);
  return x;
}

Value* matmul(Builder& b, Value* x, Value* w) {
  DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  return b.dot_general(x, w, d);
}

TEST(Remat, LateElementwiseReaderGetsAClone) {
  Module m;
  Func* f = m.add_func("main", {f32(kBig), f32(kBig)});
  Builder b(f->body.get());
  Value* c = b.multiply(f->arg(0), f->arg(1));  // cheap, from arguments
  Value* early = b.tanh(c);
  Value* late = b.add(c, filler(b, early, 20));
  b.func_return({late});
  ASSERT_EQ(rematerialize(*f->body), 1);
  verify_module(m);
  EXPECT_EQ(count(*f, OpKind::kMultiply), 2);
  // The late add reads a copy defined right before it, from the same arguments.
  const Op* add = late->def;
  const Value* copy = add->operand(0);
  ASSERT_NE(copy, c);
  EXPECT_EQ(copy->def->kind, OpKind::kMultiply);
  EXPECT_EQ(copy->def->operands, c->def->operands);
  EXPECT_EQ(index_of(*f, copy->def) + 1, index_of(*f, add));
  // The original's only reader is now the early tanh.
  EXPECT_EQ(early->def->operand(0), c);
}

TEST(Remat, NearUsesAndSmallValuesStay) {
  Module m;
  Func* f = m.add_func("main", {f32(kBig), f32(kBig), f32({16, 16})});
  Builder b(f->body.get());
  Value* near = b.multiply(f->arg(0), f->arg(1));
  Value* small = b.multiply(f->arg(2), f->arg(2));  // 1 KiB
  Value* x = filler(b, b.tanh(near), 10);           // gap of 10 <= min_gap
  Value* y = b.add(near, x);
  Value* s = b.add(filler(b, b.tanh(small), 20), small);
  b.func_return({y, s});
  EXPECT_EQ(rematerialize(*f->body), 0);
}

TEST(Remat, NoCloneForAContractionReader) {
  // Recomputing for a dot would write the value out again: a pass more, nothing fused.
  Module m;
  Func* f = m.add_func("main", {f32(kBig), f32(kBig), f32({512, 512})});
  Builder b(f->body.get());
  Value* c = b.multiply(f->arg(0), f->arg(1));
  Value* late = matmul(b, c, f->arg(2));
  b.func_return({b.add(late, filler(b, b.tanh(c), 20))});
  EXPECT_EQ(rematerialize(*f->body), 0);
}

TEST(Remat, NoCloneWhenAnOperandDiedLongBefore) {
  // t (a dot, not cheap) is read only by c; recomputing c late would keep t alive instead.
  Module m;
  Func* f = m.add_func("main", {f32(kBig), f32({512, 512})});
  Builder b(f->body.get());
  Value* t = matmul(b, f->arg(0), f->arg(1));
  Value* c = b.multiply(t, t);
  Value* late = b.add(c, filler(b, b.tanh(c), 20));
  b.func_return({late});
  EXPECT_EQ(rematerialize(*f->body), 0);
}

TEST(Remat, SharedRootKeptForTwoLateValues) {
  // GELU's backward in miniature: a = t·c1 and h = t·c2 are read early and late, t (a dot) only
  // early. Keeping t alive and recomputing a and h late holds one tensor instead of two.
  Module m;
  Func* f = m.add_func("main", {f32(kBig), f32({512, 512})});
  Builder b(f->body.get());
  Value* t = matmul(b, f->arg(0), f->arg(1));
  auto splat = [&](float v) {
    return b.broadcast_in_dim(b.constant(Tensor::scalar_f32(v)), kBig, {});
  };
  Value* a = b.multiply(t, splat(0.5f));
  Value* h = b.multiply(t, splat(0.7f));
  Value* fwd = filler(b, b.add(b.tanh(a), b.tanh(h)), 20);
  Value* late = b.add(b.multiply(fwd, a), h);
  b.func_return({late});
  const int n = rematerialize(*f->body);
  verify_module(m);
  EXPECT_GE(n, 2);
  EXPECT_EQ(count(*f, OpKind::kMultiply), 5);  // a, h, their clones, fwd·a
  const Value* a2 = late->def->operand(0)->def->operand(1);  // fwd·(clone of a)
  const Value* h2 = late->def->operand(1);
  ASSERT_NE(a2, a);
  ASSERT_NE(h2, h);
  EXPECT_EQ(a2->def->operand(0), t);
  EXPECT_EQ(h2->def->operand(0), t);
}

TEST(Remat, SharedRootNotKeptForOneLateValue) {
  // The same with only a read late: keeping t instead of a frees nothing.
  Module m;
  Func* f = m.add_func("main", {f32(kBig), f32({512, 512})});
  Builder b(f->body.get());
  Value* t = matmul(b, f->arg(0), f->arg(1));
  Value* splat = b.broadcast_in_dim(b.constant(Tensor::scalar_f32(0.5f)), kBig, {});
  Value* a = b.multiply(t, splat);
  Value* h = b.multiply(t, splat);
  Value* fwd = filler(b, b.add(b.tanh(a), b.tanh(h)), 20);
  b.func_return({b.multiply(fwd, a)});
  EXPECT_EQ(rematerialize(*f->body), 0);
}

TEST(Remat, ChainIsRecomputedFromAValueAliveThere) {
  // conv -> BN -> ReLU in miniature: y = x*s, r = max(y, 0) with x (a dot) read late anyway;
  // late elementwise readers of y and r get clones of the chain, built from x.
  Module m;
  Func* f = m.add_func("main", {f32(kBig), f32({512, 512}), f32({512})});
  Builder b(f->body.get());
  Value* x = matmul(b, f->arg(0), f->arg(1));
  Value* s = b.broadcast_in_dim(f->arg(2), kBig, {1});
  Value* y = b.multiply(x, s);
  Value* zero = b.broadcast_in_dim(b.constant(Tensor::scalar_f32(0)), kBig, {});
  Value* r = b.maximum(y, zero);
  Value* fwd = filler(b, b.tanh(r), 20);
  Value* late = b.add(b.add(b.multiply(fwd, r), y), x);  // late readers of r, y and x
  b.func_return({late});
  const int n = rematerialize(*f->body);
  verify_module(m);
  EXPECT_GE(n, 2);  // y and r (and the broadcasts feeding them)
  // y and r die young: their only readers are the forward ones.
  EXPECT_EQ(count(*f, OpKind::kMaximum), 2);
  int r_readers = 0, y_readers = 0;
  walk(*f->body, [&](const Op& op) {
    for (const Value* v : op.operands) {
      r_readers += v == r;
      y_readers += v == y;
    }
  });
  EXPECT_EQ(r_readers, 1);  // the forward tanh
  EXPECT_EQ(y_readers, 1);  // the original max
}

TEST(Remat, ResultsAndRegionReadersKeepTheOriginal) {
  Module m;
  Func* f = m.add_func("main", {f32(kBig), f32(kBig)});
  Builder b(f->body.get());
  Value* c = b.multiply(f->arg(0), f->arg(1));
  Value* x = filler(b, b.tanh(c), 20);
  b.func_return({x, c});  // c is a result: alive to the end anyway
  EXPECT_EQ(rematerialize(*f->body), 0);
}

}  // namespace
}  // namespace netspec::hlo
