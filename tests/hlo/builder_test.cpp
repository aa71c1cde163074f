// Builder: every op function builds its op with the right attributes and infers the result
// types by hand-computed shapes.
#include "hlo/builder.h"

#include <gtest/gtest.h>

#include "hlo/verify.h"
#include "tests/hlo/builder_fixture.h"

namespace netspec::hlo {
namespace {

using namespace testing;  // Fx, t, f32, i32

TEST(Builder, CreateAppendsOpWithLinkedResults) {
  Fx x({f32({2, 3}), f32({2, 3})});
  Value* s = x.b.add(x.arg(0), x.arg(1));
  ASSERT_EQ(x.f->body->ops.size(), 1u);
  Op* op = x.f->body->ops[0].get();
  EXPECT_EQ(op->kind, OpKind::kAdd);
  EXPECT_EQ(s->def, op);
  EXPECT_EQ(s->index, 0);
  EXPECT_EQ(op->parent, x.f->body.get());
  EXPECT_EQ(s->type, f32({2, 3}));
  x.b.func_return({s});
  EXPECT_EQ(x.f->result_types, std::vector<Type>{f32({2, 3})});
  EXPECT_NO_THROW(verify_module(x.m));
}

TEST(Builder, FailedCreateAppendsNothing) {
  Fx x({f32({2, 3}), f32({3, 2})});
  EXPECT_THROW(x.b.add(x.arg(0), x.arg(1)), Error);
  EXPECT_TRUE(x.f->body->ops.empty());
}

TEST(Builder, Constants) {
  Fx x({});
  // A splat is one scalar literal broadcast to the shape (the module never stores numel copies).
  Value* c = x.b.constant_splat(2.5, f32({2, 2}));
  EXPECT_EQ(c->type, f32({2, 2}));
  ASSERT_EQ(c->def->kind, OpKind::kBroadcastInDim);
  EXPECT_TRUE(c->def->attrs.get_i64s("broadcast_dimensions").empty());
  const auto& d = c->def->operand(0)->def->attrs.get<DenseAttr>("value").value;
  ASSERT_EQ(d.numel(), 1);
  EXPECT_EQ(d.as_double(0), 2.5);
  EXPECT_EQ(x.b.constant_splat(1.5, f32({}))->def->kind, OpKind::kConstant);
  Value* s = x.b.scalar(7, DType::kI32);
  EXPECT_EQ(s->type, t(DType::kI32, {}));
  EXPECT_EQ(s->def->attrs.get<DenseAttr>("value").value.as_int64(0), 7);
  Value* io = x.b.iota(t(DType::kI64, {4, 5}), 1);
  EXPECT_EQ(io->type, t(DType::kI64, {4, 5}));
  EXPECT_EQ(io->def->attrs.get<IntAttr>("iota_dimension"), (IntAttr{1, DType::kI64}));
  x.check();  // every op re-verifies with its stated result types
}

TEST(Builder, UnaryTypes) {
  Fx x({f32({3}), t(DType::kI32, {3}), t(DType::kI1, {3})});
  EXPECT_EQ(x.b.exponential(x.arg(0))->type, f32({3}));
  EXPECT_EQ(x.b.is_finite(x.arg(0))->type, t(DType::kI1, {3}));
  EXPECT_EQ(x.b.popcnt(x.arg(1))->type, t(DType::kI32, {3}));
  EXPECT_EQ(x.b.not_(x.arg(2))->type, t(DType::kI1, {3}));
  EXPECT_EQ(x.b.convert(x.arg(1), DType::kF64)->type, t(DType::kF64, {3}));
  EXPECT_EQ(x.b.bitcast_convert(x.arg(0), t(DType::kI32, {3}))->type, t(DType::kI32, {3}));
  Value* rp = x.b.reduce_precision(x.arg(0), 5, 10);
  EXPECT_EQ(rp->def->attrs.get<IntAttr>("exponent_bits"), (IntAttr{5, DType::kI32}));
  EXPECT_EQ(x.b.unary(OpKind::kTanh, x.arg(0))->def->kind, OpKind::kTanh);
  x.check();  // every op re-verifies with its stated result types
}

TEST(Builder, CompareDefaultsCompareType) {
  Fx x({f32({2}), t(DType::kI32, {2}), t(DType::kUI8, {2}), t(DType::kI1, {2})});
  auto ct = [&](Value* v) { return v->def->attrs.get<EnumAttr>("compare_type").value; };
  Value* c = x.b.compare(x.arg(0), x.arg(0), "LT");
  EXPECT_EQ(c->type, t(DType::kI1, {2}));
  EXPECT_EQ(c->def->attrs.get<EnumAttr>("comparison_direction"),
            (EnumAttr{"comparison_direction", "LT"}));
  EXPECT_EQ(c->def->attrs.get<EnumAttr>("compare_type").kind, "comparison_type");
  EXPECT_EQ(ct(c), "FLOAT");
  EXPECT_EQ(ct(x.b.compare(x.arg(1), x.arg(1), "GE")), "SIGNED");
  EXPECT_EQ(ct(x.b.compare(x.arg(2), x.arg(2), "EQ")), "UNSIGNED");
  EXPECT_EQ(ct(x.b.compare(x.arg(3), x.arg(3), "NE")), "UNSIGNED");
  EXPECT_EQ(ct(x.b.compare(x.arg(0), x.arg(0), "EQ", "TOTALORDER")), "TOTALORDER");
  x.check();  // every op re-verifies with its stated result types
}

TEST(Builder, ClampSelect) {
  Fx x({f32({}), f32({4}), t(DType::kI1, {4})});
  EXPECT_EQ(x.b.clamp(x.arg(0), x.arg(1), x.arg(0))->type, f32({4}));
  EXPECT_EQ(x.b.select(x.arg(2), x.arg(1), x.arg(1))->type, f32({4}));
  x.check();  // every op re-verifies with its stated result types
}

TEST(Builder, ShapeOps) {
  Fx x({f32({2, 3, 4}), f32({}), t(DType::kI32, {})});
  auto& b = x.b;
  EXPECT_EQ(b.reshape(x.arg(0), {6, 4})->type, f32({6, 4}));
  Value* bc = b.broadcast_in_dim(x.arg(0), {5, 2, 3, 4}, {1, 2, 3});
  EXPECT_EQ(bc->type, f32({5, 2, 3, 4}));
  EXPECT_EQ(bc->def->attrs.get_i64s("broadcast_dimensions"), (I64s{1, 2, 3}));
  EXPECT_EQ(b.transpose(x.arg(0), {2, 0, 1})->type, f32({4, 2, 3}));
  // ceil((4-1)/2) = 2 along the last dim.
  Value* sl = b.slice(x.arg(0), {0, 1, 1}, {2, 3, 4}, {1, 1, 2});
  EXPECT_EQ(sl->type, f32({2, 2, 2}));
  EXPECT_EQ(b.slice(x.arg(0), {0, 0, 0}, {1, 3, 4})->def->attrs.get_i64s("strides"),
            (I64s{1, 1, 1}));
  Value* i = x.arg(2);
  EXPECT_EQ(b.dynamic_slice(x.arg(0), {i, i, i}, {1, 2, 2})->type, f32({1, 2, 2}));
  Value* upd = b.constant_splat(0, f32({1, 1, 4}));
  EXPECT_EQ(b.dynamic_update_slice(x.arg(0), upd, {i, i, i})->type, f32({2, 3, 4}));
  EXPECT_EQ(b.concatenate({x.arg(0), x.arg(0), x.arg(0)}, 1)->type, f32({2, 9, 4}));
  // dim 0: 1 + 2 + 1*1 + 0 = 4; dim 1: 0 + 3 + 0 + (-1) = 2; dim 2: 2 + 4 + 3*2 + 2 = 14.
  Value* p = b.pad(x.arg(0), x.arg(1), {1, 0, 2}, {0, -1, 2}, {1, 0, 2});
  EXPECT_EQ(p->type, f32({4, 2, 14}));
  EXPECT_EQ(b.reverse(x.arg(0), {0, 2})->type, f32({2, 3, 4}));
  x.check();  // every op re-verifies with its stated result types
}

TEST(Builder, DotGeneral) {
  Fx x({f32({8, 32, 784}), f32({8, 784, 10}), f32({784, 512})});
  DotDims d{{0}, {0}, {2}, {1}};
  Value* r = x.b.dot_general(x.arg(0), x.arg(1), d);
  EXPECT_EQ(r->type, f32({8, 32, 10}));
  EXPECT_FALSE(r->def->attrs.has("precision_config"));
  Value* r2 = x.b.dot_general(x.arg(2), x.arg(2), DotDims{{}, {}, {0}, {0}}, {"HIGHEST", "DEFAULT"},
                              DType::kF64);
  EXPECT_EQ(r2->type, t(DType::kF64, {512, 512}));
  EXPECT_EQ(r2->def->attrs.get<std::vector<EnumAttr>>("precision_config")[0],
            (EnumAttr{"precision", "HIGHEST"}));
  x.check();  // every op re-verifies with its stated result types
}

TEST(Builder, Convolution) {
  Fx x({f32({8, 3, 32, 32}), f32({16, 3, 3, 3})});
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.window_strides = {2, 2};
  o.padding = {{1, 1}, {1, 1}};
  // out = floor((32 + 2 - 3) / 2) + 1 = 16
  Value* y = x.b.convolution(x.arg(0), x.arg(1), o);
  EXPECT_EQ(y->type, f32({8, 16, 16, 16}));
  const auto& pad = y->def->attrs.get<DenseAttr>("padding").value;
  EXPECT_EQ(pad.shape(), (Shape{2, 2}));
  EXPECT_EQ(pad.dtype(), DType::kI64);
  EXPECT_FALSE(y->def->attrs.has("lhs_dilation"));
  EXPECT_EQ(y->def->attrs.get<IntAttr>("feature_group_count"), (IntAttr{1, DType::kI64}));
  x.check();  // every op re-verifies with its stated result types
}

TEST(Builder, ReduceAndWindows) {
  Fx x({f32({4, 6, 6}), f32({})});
  auto& b = x.b;
  Value* s = b.reduce(x.arg(0), x.arg(1), {0, 2}, OpKind::kAdd);
  EXPECT_EQ(s->type, f32({6}));
  Op* red = s->def;
  ASSERT_EQ(red->regions.size(), 1u);
  EXPECT_EQ(red->region(0)->parent_op, red);
  EXPECT_EQ(red->region(0)->arg_types(), (std::vector<Type>{f32({}), f32({})}));
  ASSERT_NE(red->region(0)->terminator(), nullptr);
  EXPECT_EQ(red->region(0)->ops[0]->kind, OpKind::kAdd);
  WindowOptions w;
  w.window_dimensions = {1, 2, 2};
  w.window_strides = {1, 2, 2};
  Value* mp = b.reduce_window(x.arg(0), x.arg(1), w, OpKind::kMaximum);
  EXPECT_EQ(mp->type, f32({4, 3, 3}));
  Value* src = b.constant_splat(1, f32({4, 3, 3}));
  Value* ss = b.select_and_scatter(
      x.arg(0), src, x.arg(1), w,
      [](Builder& r, const std::vector<Value*>& a) {
        return std::vector<Value*>{r.compare(a[0], a[1], "GE")};
      },
      [](Builder& r, const std::vector<Value*>& a) {
        return std::vector<Value*>{r.add(a[0], a[1])};
      });
  EXPECT_EQ(ss->type, f32({4, 6, 6}));
  auto mapped =
      b.map({x.arg(0), x.arg(0)}, {0, 1, 2}, [](Builder& r, const std::vector<Value*>& a) {
        return std::vector<Value*>{r.compare(a[0], a[1], "LT")};
      });
  EXPECT_EQ(mapped[0]->type, t(DType::kI1, {4, 6, 6}));
  b.func_return({s});
  EXPECT_NO_THROW(verify_module(x.m));
}

TEST(Builder, GatherScatterSort) {
  Fx x({f32({5, 7}), t(DType::kI32, {3, 1}), f32({3, 7}), f32({})});
  GatherDims g;
  g.offset_dims = {1};
  g.collapsed_slice_dims = {0};
  g.start_index_map = {0};
  g.index_vector_dim = 1;
  Value* rows = x.b.gather(x.arg(0), x.arg(1), g, {1, 7});
  EXPECT_EQ(rows->type, f32({3, 7}));
  ScatterDims sd;
  sd.update_window_dims = {1};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  sd.index_vector_dim = 1;
  auto sc = x.b.scatter({x.arg(0)}, x.arg(1), {x.arg(2)}, sd,
                        [](Builder& r, const std::vector<Value*>& a) {
                          return std::vector<Value*>{r.add(a[0], a[1])};
                        });
  EXPECT_EQ(sc[0]->type, f32({5, 7}));
  EXPECT_FALSE(sc[0]->def->attrs.get<bool>("unique_indices"));
  auto so = x.b.sort({x.arg(0), x.arg(0)}, 1, true, [](Builder& r, const std::vector<Value*>& a) {
    EXPECT_EQ(a.size(), 4u);
    return std::vector<Value*>{r.compare(a[0], a[1], "LT")};
  });
  EXPECT_EQ(so.size(), 2u);
  EXPECT_EQ(so[1]->type, f32({5, 7}));
  x.check();  // every op re-verifies with its stated result types
}

TEST(Builder, ControlFlowAndCalls) {
  Module m;
  Func* helper = m.add_func("helper", {f32({2})}, false);
  Builder hb(helper->body.get());
  hb.func_return({hb.negate(helper->arg(0))});
  Func* f = m.add_func("main", {f32({2}), t(DType::kI32, {})});
  Builder b(f->body.get());
  auto w = b.while_(
      {f->arg(1), f->arg(0)},
      [](Builder& r, const std::vector<Value*>& a) {
        return std::vector<Value*>{r.compare(a[0], r.scalar(10, DType::kI32), "LT")};
      },
      [](Builder& r, const std::vector<Value*>& a) {
        return std::vector<Value*>{r.add(a[0], r.scalar(1, DType::kI32)), a[1]};
      });
  EXPECT_EQ(w[1]->type, f32({2}));
  Value* pred = b.compare(f->arg(1), f->arg(1), "EQ");
  auto branch = [&](double v) {
    return [v](Builder& r, const std::vector<Value*>&) {
      return std::vector<Value*>{r.constant_splat(v, Type::tensor(DType::kF32, {2}))};
    };
  };
  auto iff = b.if_(pred, branch(1), branch(2));
  EXPECT_EQ(iff[0]->type, f32({2}));
  auto cs = b.case_(f->arg(1), {branch(1), branch(2), branch(3)});
  EXPECT_EQ(cs[0]->def->regions.size(), 3u);
  Value* tup = b.tuple({f->arg(0), f->arg(1)});
  EXPECT_EQ(tup->type, Type::tuple({f32({2}), t(DType::kI32, {})}));
  EXPECT_EQ(b.get_tuple_element(tup, 1)->type, t(DType::kI32, {}));
  EXPECT_EQ(b.optimization_barrier({f->arg(0)})[0]->type, f32({2}));
  auto c = b.call(*helper, {w[1]});
  EXPECT_EQ(c[0]->type, f32({2}));
  EXPECT_EQ(c[0]->def->attrs.get<SymbolRef>("callee").name, "helper");
  auto [st, out] = b.rng_bit_generator(b.constant_splat(1, t(DType::kUI64, {2})),
                                       t(DType::kUI32, {4, 4}), "THREE_FRY");
  EXPECT_EQ(st->type, t(DType::kUI64, {2}));
  EXPECT_EQ(out->type, t(DType::kUI32, {4, 4}));
  auto ar = b.all_reduce({c[0]}, {{0, 1}, {2, 3}}, OpKind::kAdd);
  EXPECT_EQ(ar[0]->type, f32({2}));
  EXPECT_EQ(ar[0]->def->attrs.get<DenseAttr>("replica_groups").value.shape(), (Shape{2, 2}));
  b.func_return({ar[0], iff[0], cs[0]});
  EXPECT_EQ(f->result_types.size(), 3u);
  EXPECT_NO_THROW(verify_module(m));
}

// Every op kind has a type rule: an empty op fails on its operands/attributes, not on a
// missing rule.
TEST(Builder, EveryOpKindHasARule) {
  for (size_t k = 0; k < kNumOpKinds; ++k) {
    Op op(static_cast<OpKind>(k));
    try {
      infer_result_types(op, {});
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.find("no type rule"), std::string::npos) << msg;
      EXPECT_EQ(msg.rfind(fmt::format("[{}]", op_mnemonic(op.kind)), 0), 0u) << msg;
    }
  }
}

TEST(Builder, NothingAfterTerminator) {
  Module m;
  Func* f = m.add_func("main", {Type::tensor(DType::kF32, {2})});
  Builder b(f->body.get());
  b.func_return({f->arg(0)});
  try {
    b.negate(f->arg(0));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "[negate] block already ends with func.return; nothing may follow it");
  }
  EXPECT_EQ(f->body->ops.size(), 1u);
}

}  // namespace
}  // namespace netspec::hlo
