// Cleanup passes: DCE removes dead ops (also inside regions), CSE merges duplicates (also
// structurally equal regions, and across scopes), each identity fold, the f32 -> f64 rewrite,
// cloning and inlining.
#include "hlo/passes.h"

#include <gtest/gtest.h>

#include <functional>

#include "hlo/builder.h"
#include "hlo/verify.h"

namespace netspec::hlo {
namespace {

Type f32(Shape s) { return Type::tensor(DType::kF32, std::move(s)); }

int count(const Func& f, OpKind k) {
  int n = 0;
  walk(*f.body, [&](const Op& op) { n += op.kind == k; });
  return n;
}

size_t num_ops(const Func& f) {
  size_t n = 0;
  walk(*f.body, [&](const Op&) { ++n; });
  return n;
}

TEST(Passes, DceRemovesDeadOpsOnly) {
  Module m;
  Func* f = m.add_func("main", {f32({3})});
  Builder b(f->body.get());
  Value* x = f->arg(0);
  b.exponential(x);    // dead
  b.negate(b.log(x));  // dead chain
  Value* live = b.tanh(x);
  b.func_return({live});
  EXPECT_TRUE(dce(*f));
  EXPECT_EQ(num_ops(*f), 2u);  // tanh + return
  EXPECT_EQ(count(*f, OpKind::kTanh), 1);
  EXPECT_FALSE(dce(*f));
  verify_module(m);
}

TEST(Passes, DceKeepsValuesUsedInsideRegions) {
  Module m;
  Func* f = m.add_func("main", {f32({3})});
  Builder b(f->body.get());
  Value* x = f->arg(0);
  Value* used_in_region = b.sine(x);
  Value* p = b.constant(Tensor::from<int>(DType::kI1, {}, {1}));
  auto r = b.if_(
      p,
      [&](Builder& rb, auto) {
        rb.cosine(x);  // dead inside the region
        return std::vector<Value*>{used_in_region};
      },
      [&](Builder&, auto) { return std::vector<Value*>{x}; });
  b.func_return({r[0]});
  EXPECT_TRUE(dce(*f));
  EXPECT_EQ(count(*f, OpKind::kSine), 1);
  EXPECT_EQ(count(*f, OpKind::kCosine), 0);
  verify_module(m);
}

TEST(Passes, CseMergesDuplicatesIncludingConstantsAndRegions) {
  Module m;
  Func* f = m.add_func("main", {f32({2, 3})});
  Builder b(f->body.get());
  Value* x = f->arg(0);
  Value* a1 = b.exponential(x);
  Value* a2 = b.exponential(x);
  Value* s1 = b.reduce(a1, b.scalar(0, DType::kF32), {1}, OpKind::kAdd);
  Value* s2 = b.reduce(a2, b.scalar(0, DType::kF32), {1}, OpKind::kAdd);
  Value* m1 = b.reduce(a2, b.scalar(0, DType::kF32), {1}, OpKind::kMaximum);  // different body
  b.func_return({b.add(b.add(s1, s2), m1)});
  EXPECT_TRUE(cse(*f));
  dce(*f);
  EXPECT_EQ(count(*f, OpKind::kExponential), 1);
  EXPECT_EQ(count(*f, OpKind::kConstant), 1);  // the two zero scalars merged
  int reduces = 0;
  for (const auto& op : f->body->ops) reduces += op->kind == OpKind::kReduce;
  EXPECT_EQ(reduces, 2);  // add-reduce merged, max-reduce kept
  // add(s1, s2) now reads add(s, s).
  const Op* ret = f->body->terminator();
  const Op* outer = ret->operand(0)->def;
  const Op* inner = outer->operand(0)->def;
  EXPECT_EQ(inner->operand(0), inner->operand(1));
  verify_module(m);
}

TEST(Passes, CseReusesEnclosingValueInsideRegion) {
  Module m;
  Func* f = m.add_func("main", {f32({3})});
  Builder b(f->body.get());
  Value* x = f->arg(0);
  Value* outer = b.sine(x);
  Value* p = b.constant(Tensor::from<int>(DType::kI1, {}, {0}));
  auto r = b.if_(
      p, [&](Builder& rb, auto) { return std::vector<Value*>{rb.multiply(rb.sine(x), outer)}; },
      [&](Builder&, auto) { return std::vector<Value*>{outer}; });
  b.func_return({r[0]});
  EXPECT_TRUE(cse(*f));
  dce(*f);
  EXPECT_EQ(count(*f, OpKind::kSine), 1);
  verify_module(m);
}

TEST(Passes, FoldsTrivialIdentities) {
  Module m;
  Func* f = m.add_func("main", {f32({2, 3})});
  Builder b(f->body.get());
  Value* x = f->arg(0);
  Value* one = b.constant_splat(1, x->type);
  Value* zero = b.constant_splat(0, x->type);
  Value* y = b.add(b.multiply(x, one), zero);                              // x*1 + 0 -> x
  y = b.subtract(b.multiply(one, y), zero);                                // 1*y - 0 -> y
  Value* t = b.transpose(b.transpose(y, {1, 0}), {1, 0});                  // double transpose -> y
  Value* r = b.reshape(b.reshape(t, {6}), {3, 2});                         // -> one reshape of t
  Value* bc = b.broadcast_in_dim(b.scalar(2.5, DType::kF32), {3, 2}, {});  // -> splat constant
  b.func_return({b.add(r, bc)});
  run_cleanup(*f);
  verify_module(m);
  EXPECT_EQ(count(*f, OpKind::kMultiply), 0);
  EXPECT_EQ(count(*f, OpKind::kSubtract), 0);
  EXPECT_EQ(count(*f, OpKind::kTranspose), 0);
  EXPECT_EQ(count(*f, OpKind::kReshape), 1);
  EXPECT_EQ(count(*f, OpKind::kBroadcastInDim), 0);
  // What remains: constant(2.5 splat 3x2), reshape(x), add, return.
  EXPECT_EQ(num_ops(*f), 4u);
  const Op* add = f->body->terminator()->operand(0)->def;
  ASSERT_EQ(add->kind, OpKind::kAdd);
  EXPECT_EQ(add->operand(0)->def->kind, OpKind::kReshape);
  EXPECT_EQ(add->operand(0)->def->operand(0), x);
  const auto& c = add->operand(1)->def->attrs.get<DenseAttr>("value").value;
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_EQ(c.as_double(5), 2.5);
}

// pad(v, lo) along dim 1 of a [2, 12] result, zero padding.
Value* pad_cols(Builder& b, Value* v, int64_t lo, int64_t width = 12) {
  const int64_t n = v->type.shape()[1];
  return b.pad(v, b.scalar(0.0, DType::kF32), {0, lo}, {0, width - lo - n});
}

TEST(Passes, SumOfPadsTilingADimBecomesOneConcatenate) {
  Module m;
  Func* f = m.add_func("main", {f32({2, 4}), f32({2, 4}), f32({2, 4})});
  Builder b(f->body.get());
  Value *q = f->arg(0), *k = f->arg(1), *v = f->arg(2);
  // The VJP of q, k, v = slices of one [2, 12] value, summed in another order.
  Value* s = b.add(b.add(pad_cols(b, k, 4), pad_cols(b, q, 0)), pad_cols(b, v, 8));
  b.func_return({s});
  run_cleanup(*f);
  verify_module(m);
  EXPECT_EQ(count(*f, OpKind::kPad), 0);
  EXPECT_EQ(count(*f, OpKind::kAdd), 0);
  const Op* c = f->body->terminator()->operand(0)->def;
  ASSERT_EQ(c->kind, OpKind::kConcatenate);
  EXPECT_EQ(c->attrs.get_int_or("dimension", -1), 1);
  ASSERT_EQ(c->operands.size(), 3u);
  EXPECT_EQ(c->operand(0), q);
  EXPECT_EQ(c->operand(1), k);
  EXPECT_EQ(c->operand(2), v);
}

TEST(Passes, SumsOfPadsThatDoNotTileStayAdds) {
  auto adds_left = [](const std::function<Value*(Builder&, Value*, Value*)>& sum) {
    Module m;
    Func* f = m.add_func("main", {f32({2, 4}), f32({2, 4})});
    Builder b(f->body.get());
    b.func_return({sum(b, f->arg(0), f->arg(1))});
    run_cleanup(*f);
    verify_module(m);
    return count(*f, OpKind::kAdd) == 1 && count(*f, OpKind::kConcatenate) == 0;
  };
  // A gap ([0, 4) and [8, 12) of 12), an overlap, a padding value of 1, two padded dims.
  EXPECT_TRUE(adds_left([](Builder& b, Value* x, Value* y) {
    return b.add(pad_cols(b, x, 0), pad_cols(b, y, 8));
  }));
  EXPECT_TRUE(adds_left([](Builder& b, Value* x, Value* y) {
    return b.add(pad_cols(b, x, 0, 6), pad_cols(b, y, 2, 6));
  }));
  EXPECT_TRUE(adds_left([](Builder& b, Value* x, Value* y) {
    return b.add(b.pad(x, b.scalar(1.0, DType::kF32), {0, 0}, {0, 4}), pad_cols(b, y, 4, 8));
  }));
  EXPECT_TRUE(adds_left([](Builder& b, Value* x, Value* y) {
    Value* zero = b.scalar(0.0, DType::kF32);
    return b.add(b.pad(x, zero, {0, 0}, {2, 4}), b.pad(y, zero, {2, 4}, {0, 0}));
  }));
}

TEST(Passes, TransposeCompositionAndNonIdentityStay) {
  Module m;
  Func* f = m.add_func("main", {f32({2, 3, 4})});
  Builder b(f->body.get());
  // transpose(transpose(x, [1,2,0]), [1,2,0]) = transpose(x, [2,0,1])
  Value* t = b.transpose(b.transpose(f->arg(0), {1, 2, 0}), {1, 2, 0});
  b.func_return({t});
  run_cleanup(*f);
  verify_module(m);
  ASSERT_EQ(count(*f, OpKind::kTranspose), 1);
  const Op* op = f->body->terminator()->operand(0)->def;
  EXPECT_EQ(op->attrs.get_i64s("permutation"), (I64s{2, 0, 1}));
  EXPECT_EQ(op->result(0)->type.shape(), (Shape{4, 2, 3}));
}

// dot(transpose(x, p)) reads x with its batching/contracting dims mapped through p, when the
// free dims keep their order (the result's layout); otherwise the transpose stays.
TEST(Passes, TransposesFoldIntoDotsWhenFreeDimsKeepTheirOrder) {
  Module m;
  Func* f = m.add_func("main", {f32({2, 5, 3, 4}), f32({2, 5, 3, 4}), f32({6, 7, 8})});
  Builder b(f->body.get());
  DotDims d;  // [B, H, T, D] x [B, H, T', D] -> [B, H, T, T']
  d.lhs_batching = d.rhs_batching = {0, 1};
  d.lhs_contracting = d.rhs_contracting = {3};
  Value* q = b.transpose(f->arg(0), {0, 2, 1, 3});
  Value* k = b.transpose(f->arg(1), {0, 2, 1, 3});
  Value* s = b.dot_general(q, k, d);
  DotDims e;  // contract dim 0 of [8, 7, 6] (= x's dim 2) with nothing batched: free 7, 6 swap
  e.lhs_contracting = {0};
  e.rhs_contracting = {0};
  Value* xt = b.transpose(f->arg(2), {2, 1, 0});
  Value* y = b.dot_general(xt, xt, e);  // [7, 6, 7, 6]
  b.func_return({s, y});
  EXPECT_EQ(fold_transposes_into_dots(*f), 2);
  verify_module(m);
  EXPECT_EQ(count(*f, OpKind::kTranspose), 1);  // xt's free dims (7, 6) are reversed in x: kept
  const Op* dot = f->body->terminator()->operand(0)->def;
  EXPECT_EQ(dot->operand(0), f->arg(0));
  EXPECT_EQ(dot->operand(1), f->arg(1));
  const auto& nd = dot->attrs.get<DotDims>("dot_dimension_numbers");
  EXPECT_EQ(nd.lhs_batching, (I64s{0, 2}));
  EXPECT_EQ(nd.rhs_batching, (I64s{0, 2}));
  EXPECT_EQ(nd.lhs_contracting, (I64s{3}));
  EXPECT_EQ(nd.rhs_contracting, (I64s{3}));
  EXPECT_EQ(dot->result(0)->type.shape(), (Shape{2, 3, 5, 5}));
  const Op* kept = f->body->terminator()->operand(1)->def;
  EXPECT_EQ(kept->operand(0)->def->kind, OpKind::kTranspose);
}

// A bf16 convolution with an f32 result becomes an f32 convolution of converted operands, with
// its own converts right before it; f32 and bf16-result ones stay.
TEST(Passes, Bf16ConvolutionsWidenToF32WithTheirOwnConverts) {
  Module m;
  Func* f = m.add_func("main", {f32({1, 2, 5, 5}), f32({3, 2, 3, 3})});
  Builder b(f->body.get());
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  Value* x = b.convert(f->arg(0), DType::kBF16);
  Value* w = b.convert(f->arg(1), DType::kBF16);
  Value* y1 = b.convolution(x, w, o, DType::kF32);  // rewritten
  Value* y2 = b.convolution(x, w, o, DType::kF32);  // rewritten, with converts of its own
  Value* y3 = b.convolution(f->arg(0), f->arg(1), o);   // f32: kept
  Value* y4 = b.convolution(x, w, o);                   // bf16 result: kept
  b.func_return({y1, y2, y3, y4});
  EXPECT_EQ(widen_bf16_convolutions(*f), 2);
  verify_module(m);
  EXPECT_EQ(count(*f, OpKind::kConvert), 2 + 4);
  for (int i = 0; i < 2; ++i) {
    const Op* conv = f->body->terminator()->operand(static_cast<size_t>(i))->def;
    for (size_t k = 0; k < 2; ++k) {
      const Op* cv = conv->operand(k)->def;
      ASSERT_EQ(cv->kind, OpKind::kConvert);
      EXPECT_EQ(cv->result(0)->type.dtype(), DType::kF32);
      EXPECT_EQ(cv->operand(0), k == 0 ? x : w);
      // right before the convolution
      const auto& ops = f->body->ops;
      size_t at = 0;
      while (ops[at].get() != conv) ++at;
      EXPECT_TRUE(ops[at - 1].get() == cv || ops[at - 2].get() == cv);
    }
  }
  EXPECT_EQ(f->body->terminator()->operand(2)->def->operand(0), f->arg(0));
  EXPECT_EQ(f->body->terminator()->operand(3)->def->operand(0), x);
}

// Folding a broadcast of a splat into a literal must not grow the module: above 256 elements
// the scalar + broadcast_in_dim stays, and x * broadcast(1) still folds to x.
TEST(Passes, LargeSplatBroadcastStaysCompact) {
  Module m;
  Func* f = m.add_func("main", {f32({64, 64})});
  Builder b(f->body.get());
  Value* x = f->arg(0);
  Value* y = b.multiply(x, b.constant_splat(1, x->type));                  // -> x
  b.func_return({b.maximum(y, b.constant_splat(0, x->type))});            // relu keeps its zero
  run_cleanup(*f);
  verify_module(m);
  EXPECT_EQ(count(*f, OpKind::kMultiply), 0);
  EXPECT_EQ(count(*f, OpKind::kBroadcastInDim), 1);
  for (const auto& op : f->body->ops) {
    if (op->kind == OpKind::kConstant) {
      EXPECT_EQ(op->attrs.get<DenseAttr>("value").value.numel(), 1);
    }
  }
}

TEST(Passes, ConvertToF64AndCloneAndInline) {
  Module m;
  Func* g = m.add_func("helper", {f32({2})}, false);
  {
    Builder b(g->body.get());
    b.func_return({b.multiply(g->arg(0), b.constant_splat(0.1, g->arg(0)->type))});
  }
  Func* f = m.add_func("main", {f32({2})});
  {
    Builder b(f->body.get());
    b.func_return({b.call(*g, {f->arg(0)})[0]});
  }
  auto copy = clone_module(m);
  convert_float_types(*copy);
  verify_module(*copy);
  Func* cf = copy->find("main");
  EXPECT_EQ(cf->arg(0)->type, Type::tensor(DType::kF64, {2}));
  EXPECT_EQ(cf->result_types[0], Type::tensor(DType::kF64, {2}));
  const Op* mul = copy->find("helper")->body->ops[2].get();  // constant, broadcast, multiply
  ASSERT_EQ(mul->kind, OpKind::kMultiply);
  const Tensor& c = mul->operand(1)->def->operand(0)->def->attrs.get<DenseAttr>("value").value;
  EXPECT_EQ(c.dtype(), DType::kF64);
  EXPECT_EQ(c.data<double>()[0], static_cast<double>(0.1f));  // the f32 value, widened
  // The original is untouched.
  EXPECT_EQ(f->arg(0)->type, f32({2}));
  // Inlining the call leaves the multiply in main's body.
  Func* h = m.add_func("inlined", {f32({2})});
  Builder b(h->body.get());
  auto outs = inline_call(h->body.get(), *g, {h->arg(0)});
  b.func_return(outs);
  verify_module(m);
  EXPECT_EQ(count(*h, OpKind::kMultiply), 1);
  EXPECT_EQ(count(*h, OpKind::kCall), 0);
}

// inline_calls: every call (nested ones too, and one inside a loop body) becomes its callee's
// ops at the call's place, uses remapped, the module still verifies; a budget of added ops or a
// depth limit leaves the calls past it in place.
TEST(Passes, InlineCallsReplacesCallsInPlaceWithinBudgetAndDepth) {
  auto build = [] {
    auto m = std::make_unique<Module>();
    Func* leaf = m->add_func("leaf", {f32({2})}, false);
    {
      Builder b(leaf->body.get());
      b.func_return({b.multiply(leaf->arg(0), leaf->arg(0))});
    }
    Func* mid = m->add_func("mid", {f32({2})}, false);
    {
      Builder b(mid->body.get());
      b.func_return({b.negate(b.call(*leaf, {mid->arg(0)})[0])});
    }
    Func* f = m->add_func("main", {f32({2})});
    Builder b(f->body.get());
    Value* y = b.call(*mid, {f->arg(0)})[0];
    auto w = b.while_({b.scalar(0, DType::kI32), y},
                      [](Builder& c, const std::vector<Value*>& s) {
                        return std::vector<Value*>{c.compare(s[0], c.scalar(3, DType::kI32), "LT")};
                      },
                      [&](Builder& c, const std::vector<Value*>& s) {
                        return std::vector<Value*>{c.add(s[0], c.scalar(1, DType::kI32)),
                                                   c.add(s[1], c.call(*leaf, {y})[0])};
                      });
    b.func_return({b.add(w[1], y)});
    return m;
  };
  auto m = build();
  Func* f = m->find("main");
  EXPECT_EQ(inline_calls(*f), 3);  // mid and the loop's leaf, then mid's leaf
  verify_module(*m);
  EXPECT_EQ(count(*f, OpKind::kCall), 0);
  EXPECT_EQ(count(*f, OpKind::kNegate), 1);
  const Op& ret = *f->body->ops.back();  // add(w, y): y is now the inlined negate
  EXPECT_EQ(ret.operand(0)->def->operand(1)->def->kind, OpKind::kNegate);
  auto shallow = build();
  EXPECT_EQ(inline_calls(*shallow->find("main"), 1), 2);  // one level: mid's leaf stays a call
  verify_module(*shallow);
  EXPECT_EQ(count(*shallow->find("main"), OpKind::kCall), 1);
  auto small = build();
  EXPECT_EQ(inline_calls(*small->find("main"), 8, 1), 0);  // every callee has more than 1 op
  EXPECT_EQ(count(*small->find("main"), OpKind::kCall), 2);
}

// counted_loop and state_written_whole_unread on a loop over t < 4 that writes row t of a [4, 3]
// stack: whole and unread as built; each variant that could observe the initial stack is not.
TEST(Passes, CountedLoopAndStatesItOverwritesWhole) {
  // variant 0: as described; 1: the body also reads the old stack; 2: 3 turns of a 4-row stack;
  // 3: the row lands at column 1 of a wider stack; 4: the row index is not the counter.
  auto build = [](int variant) {
    auto m = std::make_unique<Module>();
    Func* f = m->add_func("main", {f32({1, 3})});
    Builder b(f->body.get());
    const int64_t cols = variant == 3 ? 4 : 3;
    Value* zeros = b.broadcast_in_dim(b.scalar(0, DType::kF32), {4, cols}, {});
    auto w = b.while_(
        {b.scalar(0, DType::kI32), zeros},
        [&](Builder& c, const std::vector<Value*>& s) {
          return std::vector<Value*>{
              c.compare(s[0], c.scalar(variant == 2 ? 3 : 4, DType::kI32), "LT")};
        },
        [&](Builder& c, const std::vector<Value*>& s) {
          Value* row = f->arg(0);
          if (variant == 1) row = c.add(row, c.slice(s[1], {0, 0}, {1, 3}));
          Value* at = variant == 4 ? c.scalar(2, DType::kI32) : s[0];
          Value* col = c.scalar(variant == 3 ? 1 : 0, DType::kI32);
          return std::vector<Value*>{c.add(s[0], c.scalar(1, DType::kI32)),
                                     c.dynamic_update_slice(s[1], row, {at, col})};
        });
    b.func_return({w[1]});
    return m;
  };
  for (int variant = 0; variant <= 4; ++variant) {
    auto m = build(variant);
    verify_module(*m);
    const Op& w = *m->find("main")->body->ops.at(3);  // constant, broadcast, constant, while
    ASSERT_EQ(w.kind, OpKind::kWhile);
    auto loop = counted_loop(w);
    ASSERT_TRUE(loop.has_value()) << variant;
    EXPECT_EQ(loop->counter, 0u);
    EXPECT_EQ(loop->start, 0);
    EXPECT_EQ(loop->trips, variant == 2 ? 3 : 4);
    EXPECT_FALSE(state_written_whole_unread(w, 0)) << "the counter itself";
    EXPECT_EQ(state_written_whole_unread(w, 1), variant == 0) << variant;
  }
}

}  // namespace
}  // namespace netspec::hlo
