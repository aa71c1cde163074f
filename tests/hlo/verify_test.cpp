// Type rules and verify_module: inferred types of edge cases, and ill-formed ops that must throw
// an Error naming the op mnemonic and what is wrong.
#include "hlo/verify.h"

#include <gtest/gtest.h>

#include "hlo/builder.h"
#include "tests/hlo/builder_fixture.h"

namespace netspec::hlo {
namespace {

using namespace testing;  // Fx, t, f32, i32
using Vs = std::vector<Value*>;

// Runs fn, expects an Error whose message contains every piece.
template <typename F>
void expect_error(F&& fn, std::initializer_list<std::string_view> pieces) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    std::string msg = e.what();
    for (auto p : pieces)
      EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

RegionFn ret_add() {
  return [](Builder& r, const Vs& a) { return Vs{r.add(a[0], a[1])}; };
}

// --- elementwise ---

TEST(Verify, ElementwiseTypeClasses) {
  Fx x({f32({2}), i32({2}), t(DType::kI1, {2}), t(DType::kUI32, {2}), f32({3})});
  expect_error([&] { x.b.add(x.arg(0), x.arg(4)); },
               {"[add]", "operand types differ", "tensor<2xf32>", "tensor<3xf32>"});
  expect_error([&] { x.b.add(x.arg(0), x.arg(1)); }, {"[add]", "differ"});
  expect_error([&] { x.b.exponential(x.arg(1)); },
               {"[exponential]", "floating-point", "tensor<2xi32>"});
  expect_error([&] { x.b.abs(x.arg(3)); }, {"[abs]", "signed integer or floating-point"});
  expect_error([&] { x.b.popcnt(x.arg(0)); }, {"[popcnt]", "integer"});
  expect_error([&] { x.b.and_(x.arg(0), x.arg(0)); }, {"[and]", "integer or boolean"});
  expect_error([&] { x.b.shift_left(x.arg(2), x.arg(2)); }, {"[shift_left]", "integer"});
  expect_error([&] { x.b.atan2(x.arg(1), x.arg(1)); }, {"[atan2]", "floating-point"});
  expect_error([&] { x.b.subtract(x.arg(2), x.arg(2)); }, {"[subtract]"});
  // Booleans are valid for add / multiply / maximum (logical or / and / or).
  EXPECT_EQ(x.b.add(x.arg(2), x.arg(2))->type, t(DType::kI1, {2}));
  EXPECT_EQ(x.b.not_(x.arg(1))->type, i32({2}));
  EXPECT_EQ(x.b.abs(x.arg(1))->type, i32({2}));
  EXPECT_EQ(x.b.shift_right_logical(x.arg(3), x.arg(3))->type, t(DType::kUI32, {2}));
  expect_error([&] { x.b.reduce_precision(x.arg(0), 0, 3); },
               {"[reduce_precision]", "exponent_bits", "got 0"});
  expect_error([&] { x.b.reduce_precision(x.arg(0), 5, -1); },
               {"[reduce_precision]", "mantissa_bits"});
}

TEST(Verify, ConvertAndBitcast) {
  Fx x({f32({2, 3}), t(DType::kF64, {4}), t(DType::kI8, {4, 4})});
  EXPECT_EQ(x.b.convert(x.arg(0), DType::kI1)->type, t(DType::kI1, {2, 3}));
  expect_error(
      [&] {
        x.b.create(OpKind::kConvert, {x.arg(0)}, {}, {i32({3, 2})});
      },
      {"[convert]", "shape differs"});
  expect_error([&] { x.b.create(OpKind::kConvert, {x.arg(0)}); }, {"[convert]", "must be stated"});
  // f64 -> i32 splits into a minor dim of 2; i8 x4 -> i32 drops the minor dim of 4.
  EXPECT_EQ(x.b.bitcast_convert(x.arg(1), i32({4, 2}))->type, i32({4, 2}));
  EXPECT_EQ(x.b.bitcast_convert(x.arg(2), i32({4}))->type, i32({4}));
  expect_error([&] { x.b.bitcast_convert(x.arg(1), i32({4})); },
               {"[bitcast_convert]", "tensor<4x2xi32>"});
  expect_error([&] { x.b.bitcast_convert(x.arg(0), t(DType::kF64, {2})); },
               {"[bitcast_convert]", "last dim must be 2"});
}

TEST(Verify, Compare) {
  Fx x({f32({2}), i32({2}), t(DType::kUI8, {2}), t(DType::kI1, {2})});
  expect_error([&] { x.b.compare(x.arg(0), x.arg(0), "LTE"); },
               {"[compare]", "comparison_direction", "LTE"});
  expect_error([&] { x.b.compare(x.arg(0), x.arg(0), "LT", "SIGNED"); },
               {"[compare]", "compare_type", "f32", "FLOAT or TOTALORDER"});
  expect_error([&] { x.b.compare(x.arg(1), x.arg(1), "LT", "UNSIGNED"); },
               {"[compare]", "expected SIGNED"});
  expect_error([&] { x.b.compare(x.arg(2), x.arg(2), "LT", "SIGNED"); },
               {"[compare]", "expected UNSIGNED"});
  expect_error([&] { x.b.compare(x.arg(3), x.arg(3), "EQ", "FLOAT"); },
               {"[compare]", "expected UNSIGNED"});
  expect_error([&] { x.b.compare(x.arg(0), x.arg(1), "EQ"); },
               {"[compare]", "operand types differ"});
  // Without compare_type (as in parsed files) the op is valid.
  Attrs a;
  a.set("comparison_direction", EnumAttr{"comparison_direction", "GT"});
  EXPECT_EQ(x.b.create(OpKind::kCompare, {x.arg(1), x.arg(1)}, a)->result()->type,
            t(DType::kI1, {2}));
}

TEST(Verify, ClampSelect) {
  Fx x({f32({}), f32({4}), f32({3}), t(DType::kI1, {4}), t(DType::kI1, {}), i32({4})});
  expect_error([&] { x.b.clamp(x.arg(2), x.arg(1), x.arg(0)); }, {"[clamp]", "scalars or match"});
  expect_error([&] { x.b.clamp(x.arg(5), x.arg(1), x.arg(0)); },
               {"[clamp]", "element types differ"});
  EXPECT_EQ(x.b.select(x.arg(4), x.arg(1), x.arg(1))->type, f32({4}));  // scalar pred
  expect_error([&] { x.b.select(x.arg(1), x.arg(1), x.arg(1)); }, {"[select]", "pred must be i1"});
  expect_error([&] { x.b.select(x.arg(3), x.arg(2), x.arg(2)); }, {"[select]", "pred shape"});
  expect_error([&] { x.b.select(x.arg(3), x.arg(1), x.arg(5)); }, {"[select]", "differ"});
}

// --- shape ---

TEST(Verify, ShapeOpErrors) {
  Fx x({f32({2, 3}), f32({}), i32({}), t(DType::kI64, {}), f32({2, 4}), t(DType::kI1, {})});
  auto& b = x.b;
  expect_error([&] { b.reshape(x.arg(0), {5}); }, {"[reshape]", "element count", "6 vs 5"});
  expect_error(
      [&] {
        b.broadcast_in_dim(x.arg(0), {2, 4}, {0, 1});
      },
      {"[broadcast_in_dim]", "operand dim 1 (size 3)", "result dim 1 (size 4)"});
  expect_error(
      [&] {
        b.broadcast_in_dim(x.arg(0), {2, 3, 4}, {0});
      },
      {"[broadcast_in_dim]", "broadcast_dimensions", "wrong size"});
  expect_error(
      [&] {
        b.broadcast_in_dim(x.arg(0), {2, 3, 4}, {0, 3});
      },
      {"[broadcast_in_dim]", "out of range"});
  expect_error(
      [&] {
        b.broadcast_in_dim(x.arg(0), {2, 3, 3}, {1, 1});
      },
      {"[broadcast_in_dim]", "repeated"});
  EXPECT_EQ(b.broadcast_in_dim(b.reshape(x.arg(0), {1, 6}), {4, 6, 5}, {2, 1})->type,
            f32({4, 6, 5}));  // size-1 dims broadcast anywhere
  expect_error([&] { b.transpose(x.arg(0), {0, 0}); }, {"[transpose]", "permutation", "repeated"});
  expect_error([&] { b.transpose(x.arg(0), {1}); }, {"[transpose]", "permutation", "wrong size"});
  expect_error([&] { b.slice(x.arg(0), {0, 2}, {2, 1}); }, {"[slice]", "start 2 limit 1"});
  expect_error([&] { b.slice(x.arg(0), {0, 0}, {2, 4}); }, {"[slice]", "<= 3"});
  expect_error(
      [&] {
        b.slice(x.arg(0), {0, 0}, {2, 3}, {1, 0});
      },
      {"[slice]", "strides must be > 0"});
  EXPECT_EQ(b.slice(x.arg(0), {0, 1}, {0, 1})->type, f32({0, 0}));
  expect_error(
      [&] {
        b.dynamic_slice(x.arg(0), {x.arg(2)}, {1, 1});
      },
      {"[dynamic_slice]", "start_indices", "wrong size"});
  expect_error(
      [&] {
        b.dynamic_slice(x.arg(0), {x.arg(2), x.arg(3)}, {1, 1});
      },
      {"[dynamic_slice]", "share one type"});
  expect_error(
      [&] {
        b.dynamic_slice(x.arg(0), {x.arg(5), x.arg(5)}, {1, 1});
      },
      {"[dynamic_slice]", "0-d integer"});
  expect_error(
      [&] {
        b.dynamic_slice(x.arg(0), {x.arg(2), x.arg(2)}, {3, 1});
      },
      {"[dynamic_slice]", "slice size out of range", "got 3"});
  expect_error(
      [&] {
        b.dynamic_update_slice(x.arg(0), x.arg(4), {x.arg(2), x.arg(2)});
      },
      {"[dynamic_update_slice]", "update larger", "got 4"});
  expect_error(
      [&] {
        b.concatenate({x.arg(0), x.arg(4)}, 0);
      },
      {"[concatenate]", "differs on dim 1"});
  expect_error([&] { b.concatenate({x.arg(0)}, 2); }, {"[concatenate]", "dimension out of range"});
  EXPECT_EQ(b.concatenate({x.arg(0), x.arg(4)}, 1)->type, f32({2, 7}));
  expect_error([&] { b.pad(x.arg(0), x.arg(2), {0, 0}, {0, 0}); }, {"[pad]", "padding_value"});
  expect_error(
      [&] {
        b.pad(x.arg(0), x.arg(1), {0, 0}, {0, 0}, {-1, 0});
      },
      {"[pad]", "interior_padding"});
  expect_error(
      [&] {
        b.pad(x.arg(0), x.arg(1), {0, -4}, {0, 0});
      },
      {"[pad]", "negative result size"});
  EXPECT_EQ(b.pad(x.arg(0), x.arg(1), {-1, -1}, {0, -1})->type, f32({1, 1}));
  expect_error([&] { b.reverse(x.arg(0), {2}); }, {"[reverse]", "out of range"});
}

// --- dot_general / convolution ---

TEST(Verify, DotGeneralErrors) {
  Fx x({f32({32, 784}), f32({512, 10}), f32({4, 2, 3}), f32({5, 3, 2}), i32({784, 10})});
  auto& b = x.b;
  expect_error(
      [&] {
        b.dot_general(x.arg(0), x.arg(1), DotDims{{}, {}, {1}, {0}});
      },
      {"[dot_general] contracting dims differ (got 784 vs 512)"});
  expect_error(
      [&] {
        b.dot_general(x.arg(2), x.arg(3), DotDims{{0}, {0}, {2}, {1}});
      },
      {"[dot_general] batching dims differ (got 4 vs 5)"});
  expect_error(
      [&] {
        b.dot_general(x.arg(0), x.arg(1), DotDims{{}, {}, {1}, {}});
      },
      {"[dot_general]", "contracting dim counts differ"});
  expect_error(
      [&] {
        b.dot_general(x.arg(2), x.arg(3), DotDims{{1}, {2}, {1}, {0}});
      },
      {"[dot_general]", "lhs batching+contracting dims", "repeated"});
  expect_error(
      [&] {
        b.dot_general(x.arg(0), x.arg(1), DotDims{{}, {}, {2}, {0}});
      },
      {"[dot_general]", "out of range"});
  expect_error(
      [&] {
        b.dot_general(x.arg(0), x.arg(4), DotDims{{}, {}, {1}, {0}});
      },
      {"[dot_general]", "element types differ"});
  expect_error(
      [&] {
        b.dot_general(x.arg(0), x.arg(0), DotDims{{}, {}, {1}, {1}}, {"DEFAULT"});
      },
      {"[dot_general]", "precision_config"});
  expect_error(
      [&] {
        b.dot_general(x.arg(0), x.arg(0), DotDims{{}, {}, {1}, {1}}, {"LOW", "HIGH"});
      },
      {"[dot_general]", "unknown precision"});
  // Outer product (no contraction): 32x784 . 512x10 -> 32x784x512x10.
  EXPECT_EQ(b.dot_general(x.arg(0), x.arg(1), DotDims{})->type, f32({32, 784, 512, 10}));
  // Batched with free dims on both sides: [4,2,3] x [4? no] -> use rhs transposed batching.
  EXPECT_EQ(b.dot_general(x.arg(2), x.arg(3), DotDims{{1}, {2}, {2}, {1}})->type, f32({2, 4, 5}));
  // A stated result with a wrong shape is rejected.
  Attrs a;
  a.set("dot_dimension_numbers", DotDims{{}, {}, {1}, {1}});
  expect_error(
      [&] {
        b.create(OpKind::kDotGeneral, {x.arg(0), x.arg(0)}, a, {f32({32, 33})});
      },
      {"[dot_general]", "result shape mismatch", "tensor<32x32xf32>"});
}

TEST(Verify, ConvolutionShapes) {
  Fx x({f32({2, 4, 10, 9}), f32({6, 2, 3, 3}), f32({8, 4, 5, 5}), f32({3, 3, 4, 6}),
        f32({6, 4, 3, 3})});
  auto& b = x.b;
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.feature_group_count = 2;  // 4 input features in 2 groups of 2; 6 outputs (3 per group)
  o.lhs_dilation = {2, 1};    // H: (10-1)*2+1 = 19
  o.rhs_dilation = {1, 2};    // W window: (3-1)*2+1 = 5
  o.padding = {{1, 0}, {2, 2}};
  o.window_strides = {3, 2};
  // H: floor((19+1-3)/3)+1 = 6; W: floor((9+4-5)/2)+1 = 5.
  EXPECT_EQ(b.convolution(x.arg(0), x.arg(1), o)->type, f32({2, 6, 6, 5}));
  // batch_group_count = 2: batch 8 -> 4; kernel output features 6 divisible by 2.
  ConvOptions bg;
  bg.dims = ConvOptions::nchw(2);
  bg.batch_group_count = 2;
  EXPECT_EQ(b.convolution(x.arg(2), x.arg(4), bg)->type, f32({4, 6, 3, 3}));
  // NHWC / HWIO / NHWC dims: lhs [2,10,9,4] is built by transposing.
  Value* nhwc = b.transpose(x.arg(0), {0, 2, 3, 1});
  ConvOptions h;
  h.dims = ConvDims{0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  EXPECT_EQ(b.convolution(nhwc, x.arg(3), h)->type, f32({2, 8, 7, 6}));
  // Window larger than the padded input -> empty spatial dim.
  ConvOptions big;
  big.dims = ConvOptions::nchw(2);
  big.rhs_dilation = {5, 1};  // (3-1)*5+1 = 11 > 10
  EXPECT_EQ(b.convolution(x.arg(0), x.arg(4), big)->type, f32({2, 6, 0, 7}));
}

TEST(Verify, ConvolutionErrors) {
  Fx x({f32({2, 4, 10, 9}), f32({6, 2, 3, 3}), f32({6, 4, 3, 3}), f32({6, 4, 3})});
  auto& b = x.b;
  auto opts = [] {
    ConvOptions o;
    o.dims = ConvOptions::nchw(2);
    return o;
  };
  expect_error([&] { b.convolution(x.arg(0), x.arg(1), opts()); },
               {"[convolution]", "kernel input features differ (got 2, expected 4"});
  expect_error([&] { b.convolution(x.arg(0), x.arg(3), opts()); },
               {"[convolution]", "ranks differ"});
  auto o = opts();
  o.window_strides = {1};
  expect_error([&] { b.convolution(x.arg(0), x.arg(2), o); },
               {"[convolution]", "window_strides", "wrong size"});
  o = opts();
  o.window_strides = {1, 0};
  expect_error([&] { b.convolution(x.arg(0), x.arg(2), o); },
               {"[convolution]", "window_strides must be > 0"});
  o = opts();
  o.lhs_dilation = {0, 1};
  expect_error([&] { b.convolution(x.arg(0), x.arg(2), o); }, {"[convolution]", "lhs_dilation"});
  o = opts();
  o.padding = {{1, 1}};
  expect_error([&] { b.convolution(x.arg(0), x.arg(2), o); },
               {"[convolution]", "padding has the wrong shape"});
  o = opts();
  o.window_reversal = {true};
  expect_error([&] { b.convolution(x.arg(0), x.arg(2), o); }, {"[convolution]", "window_reversal"});
  o = opts();
  o.feature_group_count = 3;
  expect_error([&] { b.convolution(x.arg(0), x.arg(2), o); },
               {"[convolution]", "input features 4 not divisible by feature_group_count 3"});
  o = opts();
  o.feature_group_count = 2;
  o.batch_group_count = 2;
  expect_error([&] { b.convolution(x.arg(0), x.arg(1), o); },
               {"[convolution]", "cannot both exceed 1"});
  o = opts();
  o.batch_group_count = 4;
  expect_error([&] { b.convolution(x.arg(0), x.arg(2), o); },
               {"[convolution]", "input batch 2 not divisible"});
  o = opts();
  o.dims.input_spatial = {2, 1};  // collides with the input feature dim
  expect_error([&] { b.convolution(x.arg(0), x.arg(2), o); },
               {"[convolution]", "input dimension numbers", "repeated"});
  o = opts();
  o.dims.kernel_spatial = {2};
  expect_error([&] { b.convolution(x.arg(0), x.arg(2), o); },
               {"[convolution]", "kernel spatial dimensions"});
}

// --- reductions / windows ---

TEST(Verify, ReduceRules) {
  Fx x({f32({3, 4}), f32({}), i32({3, 4}), i32({}), t(DType::kF64, {})});
  auto& b = x.b;
  // Variadic argmax-style reduce: values and indices together.
  auto r = b.reduce({x.arg(0), x.arg(2)}, {x.arg(1), x.arg(3)}, {1}, [](Builder& rb, const Vs& a) {
    return Vs{rb.maximum(a[0], a[2]), rb.minimum(a[1], a[3])};
  });
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0]->type, f32({3}));
  EXPECT_EQ(r[1]->type, i32({3}));
  expect_error([&] { b.reduce(x.arg(0), x.arg(3), {0}, OpKind::kAdd); },
               {"[reduce]", "init_value #0 must be tensor<f32>"});
  expect_error([&] { b.reduce(x.arg(0), x.arg(1), {2}, OpKind::kAdd); },
               {"[reduce]", "dimensions", "out of range"});
  expect_error(
      [&] {
        b.reduce(x.arg(0), x.arg(1), {0, 0}, OpKind::kAdd);
      },
      {"[reduce]", "repeated"});
  expect_error(
      [&] {
        b.reduce(Vs{x.arg(0)}, Vs{x.arg(1)}, {0},
                 [](Builder& rb, const Vs& a) { return Vs{rb.compare(a[0], a[1], "LT")}; });
      },
      {"[reduce]", "region 'body' returns wrong types", "tensor<i1>"});
  // Promotable accumulator: f32 inputs reduced in f64 (init must still be f32 by C2).
  Op* op = b.block()->ops.back().get();
  (void)op;
  auto blk = b.region({t(DType::kF64, {}), t(DType::kF64, {})}, ret_add());
  std::vector<std::unique_ptr<Block>> regs;
  regs.push_back(std::move(blk));
  Attrs a;
  a.set("dimensions", I64s{0, 1});
  Op* pr = b.create(OpKind::kReduce, {x.arg(0), x.arg(1)}, a, {}, std::move(regs));
  EXPECT_EQ(pr->result()->type, t(DType::kF64, {}));
}

TEST(Verify, ReduceWindowShapes) {
  Fx x({f32({2, 7, 7}), f32({}), f32({2, 3, 3}), f32({2, 4, 4})});
  auto& b = x.b;
  WindowOptions w;
  w.window_dimensions = {1, 3, 3};
  w.window_strides = {1, 2, 2};
  w.padding = {{0, 0}, {1, 1}, {0, 0}};
  w.base_dilations = {1, 2, 1};    // dim1: (7-1)*2+1 = 13, padded 15
  w.window_dilations = {1, 1, 2};  // dim2 window (3-1)*2+1 = 5
  // dim1: floor((15-3)/2)+1 = 7; dim2: floor((7-5)/2)+1 = 2.
  EXPECT_EQ(b.reduce_window(x.arg(0), x.arg(1), w, OpKind::kAdd)->type, f32({2, 7, 2}));
  WindowOptions bad = w;
  bad.window_dimensions = {1, 3};
  expect_error([&] { b.reduce_window(x.arg(0), x.arg(1), bad, OpKind::kAdd); },
               {"[reduce_window]", "window_dimensions", "wrong size"});
  bad = w;
  bad.window_strides = {1, 0, 1};
  expect_error([&] { b.reduce_window(x.arg(0), x.arg(1), bad, OpKind::kAdd); },
               {"[reduce_window]", "window_strides must be > 0"});
  bad = w;
  bad.padding = {{0, 0}};
  expect_error([&] { b.reduce_window(x.arg(0), x.arg(1), bad, OpKind::kAdd); },
               {"[reduce_window]", "padding has the wrong shape"});
  // select_and_scatter: 7x7 with 3x3 stride 2 windows -> source 3x3.
  WindowOptions sw;
  sw.window_dimensions = {1, 3, 3};
  sw.window_strides = {1, 2, 2};
  auto ge = [](Builder& r, const Vs& a) { return Vs{r.compare(a[0], a[1], "GE")}; };
  EXPECT_EQ(b.select_and_scatter(x.arg(0), x.arg(2), x.arg(1), sw, ge, ret_add())->type,
            f32({2, 7, 7}));
  expect_error([&] { b.select_and_scatter(x.arg(0), x.arg(3), x.arg(1), sw, ge, ret_add()); },
               {"[select_and_scatter]", "source shape differs", "tensor<2x3x3xf32>"});
  expect_error(
      [&] { b.select_and_scatter(x.arg(0), x.arg(2), x.arg(1), sw, ret_add(), ret_add()); },
      {"[select_and_scatter]", "region 'select' returns wrong types"});
}

TEST(Verify, MapRules) {
  Fx x({f32({2, 3}), i32({2, 3}), f32({3, 2})});
  auto conv = [](Builder& r, const Vs& a) { return Vs{r.add(r.convert(a[1], DType::kF32), a[0])}; };
  EXPECT_EQ(x.b.map({x.arg(0), x.arg(1)}, {0, 1}, conv)[0]->type, f32({2, 3}));
  expect_error([&] { x.b.map({x.arg(0), x.arg(1)}, {0}, conv); }, {"[map]", "dimensions"});
  expect_error(
      [&] {
        x.b.map({x.arg(0), x.arg(2)}, {0, 1}, ret_add());
      },
      {"[map]", "share a shape"});
}

// --- gather / scatter / sort ---

TEST(Verify, GatherShapes) {
  // Spec example: operand [2,3,4,2], indices [2,2,3,2] with batching dims -> [2,2,3,2,2].
  Fx x({t(DType::kI32, {2, 3, 4, 2}), t(DType::kI64, {2, 2, 3, 2}), f32({5, 7}), i32({4}),
        f32({2, 3})});
  GatherDims g;
  g.offset_dims = {3, 4};
  g.collapsed_slice_dims = {1};
  g.operand_batching_dims = {0};
  g.start_indices_batching_dims = {1};
  g.start_index_map = {2, 1};
  g.index_vector_dim = 3;
  EXPECT_EQ(x.b.gather(x.arg(0), x.arg(1), g, {1, 1, 2, 2})->type, t(DType::kI32, {2, 2, 3, 2, 2}));
  // Embedding lookup with an implicit index vector dim (= rank of indices): [4] -> [4, 7].
  GatherDims e;
  e.offset_dims = {1};
  e.collapsed_slice_dims = {0};
  e.start_index_map = {0};
  e.index_vector_dim = 1;
  EXPECT_EQ(x.b.gather(x.arg(2), x.arg(3), e, {1, 7})->type, f32({4, 7}));
  auto bad = [&](GatherDims d, I64s ss, std::initializer_list<std::string_view> msg) {
    expect_error([&] { x.b.gather(x.arg(0), x.arg(1), d, ss); }, msg);
  };
  GatherDims d = g;
  d.start_indices_batching_dims = {3};
  bad(d, {1, 1, 2, 2}, {"[gather]", "index_vector_dim"});
  d = g;
  d.start_index_map = {2, 0};
  bad(d, {1, 1, 2, 2}, {"[gather]", "start_index_map contains operand batching dim 0"});
  d = g;
  d.start_index_map = {2};
  bad(d, {1, 1, 2, 2}, {"[gather]", "start_index_map size differs", "expected 2"});
  bad(g, {1, 2, 2, 2}, {"[gather]", "collapsed/batching dim 1 must be <= 1"});
  bad(g, {1, 1, 5, 2}, {"[gather]", "slice_sizes out of range"});
  d = g;
  d.offset_dims = {4, 3};
  bad(d, {1, 1, 2, 2}, {"[gather]", "offset_dims must be sorted"});
  d = g;
  d.offset_dims = {3};
  bad(d, {1, 1, 2, 2}, {"[gather]", "cover the operand rank"});
  d = g;
  d.start_indices_batching_dims = {2};  // size 3 vs operand batch dim size 2
  bad(d, {1, 1, 2, 2}, {"[gather]", "batching dim sizes differ"});
  expect_error(
      [&] {
        x.b.gather(x.arg(2), x.arg(4), e, {1, 7});
      },
      {"[gather]", "indices must be integer"});
}

TEST(Verify, ScatterRules) {
  Fx x({t(DType::kI64, {2, 3, 4, 2}), t(DType::kI64, {2, 2, 3, 2}), t(DType::kI64, {2, 2, 3, 2, 2}),
        t(DType::kI64, {2, 2, 3, 2, 5}), f32({2, 2, 3, 2, 2})});
  ScatterDims d;
  d.update_window_dims = {3, 4};
  d.inserted_window_dims = {1};
  d.input_batching_dims = {0};
  d.scatter_indices_batching_dims = {1};
  d.scatter_dims_to_operand_dims = {2, 1};
  d.index_vector_dim = 3;
  EXPECT_EQ(x.b.scatter({x.arg(0)}, x.arg(1), {x.arg(2)}, d, ret_add())[0]->type,
            t(DType::kI64, {2, 3, 4, 2}));
  expect_error([&] { x.b.scatter({x.arg(0)}, x.arg(1), {x.arg(3)}, d, ret_add()); },
               {"[scatter]", "window dim 4 too large (got 5, expected <= 2)"});
  expect_error([&] { x.b.scatter({x.arg(0)}, x.arg(1), {x.arg(4)}, d, ret_add()); },
               {"[scatter]", "element type differs"});
  ScatterDims e = d;
  e.inserted_window_dims = {0};
  expect_error([&] { x.b.scatter({x.arg(0)}, x.arg(1), {x.arg(2)}, e, ret_add()); },
               {"[scatter]", "inserted_window_dims + operand batching dims", "repeated"});
  expect_error(
      [&] {
        x.b.scatter({x.arg(0)}, x.arg(1), {x.arg(2)}, d, [](Builder&, const Vs& a) {
          return Vs{a[0], a[1]};
        });
      },
      {"[scatter]", "update_computation", "returns wrong types"});
}

TEST(Verify, SortRules) {
  Fx x({f32({4, 5}), i32({4, 5}), i32({4})});
  auto lt = [](Builder& r, const Vs& a) { return Vs{r.compare(a[0], a[1], "LT")}; };
  EXPECT_EQ(x.b.sort({x.arg(0), x.arg(1)}, -1, false, lt)[1]->type, i32({4, 5}));
  expect_error([&] { x.b.sort({x.arg(0)}, 2, false, lt); },
               {"[sort]", "dimension out of range", "[-2, 2)"});
  expect_error([&] { x.b.sort({x.arg(0), x.arg(2)}, 0, false, lt); }, {"[sort]", "share a shape"});
  expect_error([&] { x.b.sort({x.arg(0)}, 0, false, ret_add()); },
               {"[sort]", "comparator", "returns wrong types"});
}

// --- control flow, calls, misc ---

TEST(Verify, ControlFlowErrors) {
  Fx x({f32({2}), i32({}), t(DType::kI1, {}), t(DType::kI64, {})});
  auto& b = x.b;
  auto cst = [](double v, Type ty) {
    return [v, ty](Builder& r, const Vs&) { return Vs{r.constant_splat(v, ty)}; };
  };
  expect_error([&] { b.if_(x.arg(2), cst(1, f32({2})), cst(1, f32({3}))); },
               {"[if]", "branches return different types"});
  expect_error([&] { b.if_(x.arg(1), cst(1, f32({2})), cst(1, f32({2}))); },
               {"[if]", "pred must be tensor<i1>"});
  expect_error([&] { b.case_(x.arg(3), {cst(1, f32({2}))}); },
               {"[case]", "index must be tensor<i32>"});
  expect_error([&] { b.case_(x.arg(1), {}); }, {"[case]", "at least one branch"});
  expect_error(
      [&] {
        b.while_(
            {x.arg(0)}, [](Builder&, const Vs& a) { return Vs{a[0]}; },
            [](Builder&, const Vs& a) { return Vs{a[0]}; });
      },
      {"[while]", "region 'cond' returns wrong types"});
  expect_error(
      [&] {
        b.while_({x.arg(0)}, cst(1, t(DType::kI1, {})), [](Builder& r, const Vs&) {
          return Vs{r.constant_splat(0, Type::tensor(DType::kF32, {3}))};
        });
      },
      {"[while]", "region 'body' returns wrong types"});
  Value* tup = b.tuple({x.arg(0)});
  expect_error([&] { b.get_tuple_element(tup, 1); }, {"[get_tuple_element]", "index out of range"});
  expect_error([&] { b.get_tuple_element(x.arg(0), 0); },
               {"[get_tuple_element]", "must be a tuple"});
}

TEST(Verify, MiscRules) {
  Fx x({t(DType::kUI64, {2}), t(DType::kUI64, {3}), t(DType::kI64, {2}), f32({2}), i32({2})});
  auto& b = x.b;
  expect_error([&] { b.iota(f32({2, 3}), 2); }, {"[iota]", "iota_dimension out of range"});
  expect_error([&] { b.iota(t(DType::kI1, {2}), 0); }, {"[iota]", "integer or float"});
  expect_error([&] { b.rng_bit_generator(x.arg(1), f32({2}), "THREE_FRY"); },
               {"[rng_bit_generator]", "THREE_FRY state size (got 3, expected 2)"});
  EXPECT_EQ(b.rng_bit_generator(x.arg(1), f32({2}), "PHILOX").second->type, f32({2}));
  expect_error([&] { b.rng_bit_generator(x.arg(2), f32({2}), "DEFAULT"); },
               {"[rng_bit_generator]", "ui64"});
  expect_error([&] { b.rng_bit_generator(x.arg(0), f32({2}), "MT"); },
               {"[rng_bit_generator]", "rng_algorithm"});
  expect_error(
      [&] {
        b.all_reduce({x.arg(3)}, {{0, 1}, {1, 2}}, OpKind::kAdd);
      },
      {"[all_reduce]", "replica id 1 appears twice"});
  expect_error(
      [&] {
        b.all_reduce({x.arg(3), x.arg(4)}, {}, OpKind::kAdd);
      },
      {"[all_reduce]", "share an element type"});
  auto ar =
      b.all_reduce({x.arg(3)}, {{0, 1, 2}, {3}}, OpKind::kMaximum);  // ragged rows padded with -1
  const auto& rg = ar[0]->def->attrs.get<DenseAttr>("replica_groups").value;
  EXPECT_EQ(rg.shape(), (Shape{2, 3}));
  EXPECT_EQ(rg.as_int64(4), -1);
  Attrs a;
  a.set("value", DenseAttr{Tensor::scalar_f32(1)});
  expect_error([&] { b.create(OpKind::kConstant, {}, a, {f32({1})}); },
               {"[constant]", "result type mismatch"});
}

// --- verify_module ---

TEST(VerifyModule, AcceptsBuiltModuleAndChecksReturn) {
  Fx x({f32({2})});
  x.b.func_return({x.b.negate(x.arg(0))});
  EXPECT_NO_THROW(verify_module(x.m));
  x.f->result_types = {f32({3})};
  expect_error([&] { verify_module(x.m); }, {"@main", "func.return types differ"});
}

TEST(VerifyModule, MissingTerminator) {
  Fx x({f32({2})});
  x.b.negate(x.arg(0));
  expect_error([&] { verify_module(x.m); }, {"@main", "must end with func.return"});
}

TEST(VerifyModule, Dominance) {
  Fx x({f32({2})});
  Value* n = x.b.negate(x.arg(0));
  Value* a = x.b.add(n, n);
  x.b.func_return({a});
  // Swap the two ops: add now uses a value defined after it.
  std::swap(x.f->body->ops[0], x.f->body->ops[1]);
  expect_error([&] { verify_module(x.m); }, {"[add] operand #0 is not defined before its use"});
}

TEST(VerifyModule, RegionSeesEnclosingValuesButNotSiblings) {
  Module m;
  Func* f = m.add_func("main", {f32({2}), t(DType::kI1, {})});
  Builder b(f->body.get());
  Value* outer = b.negate(f->arg(0));
  Value* inner_leak = nullptr;
  auto r = b.if_(
      f->arg(1),
      [&](Builder& rb, const Vs&) {
        inner_leak = rb.exponential(outer);  // uses an enclosing value: fine
        return Vs{inner_leak};
      },
      [&](Builder&, const Vs&) { return Vs{outer}; });
  b.func_return({r[0]});
  EXPECT_NO_THROW(verify_module(m));
  // Using a value from inside the region after the op is a dominance error.
  Func* g = m.add_func("bad", {f32({2})});
  Builder gb(g->body.get());
  gb.func_return({inner_leak});
  expect_error([&] { verify_module(m); }, {"@bad", "not defined before its use"});
}

TEST(VerifyModule, WrongStatedResultType) {
  Fx x({f32({2})});
  Value* n = x.b.negate(x.arg(0));
  x.b.func_return({n});
  n->type = f32({3});
  x.f->result_types = {f32({3})};
  expect_error([&] { verify_module(x.m); }, {"[negate]", "result type mismatch"});
}

TEST(VerifyModule, CallsAndNames) {
  Module m;
  Func* h = m.add_func("h", {f32({2})}, false);
  Builder hb(h->body.get());
  hb.func_return({h->arg(0)});
  Func* f = m.add_func("main", {f32({2})});
  Builder b(f->body.get());
  auto c = b.call(*h, {f->arg(0)});
  b.func_return({c[0]});
  EXPECT_NO_THROW(verify_module(m));
  // Wrong argument type is caught when the call is built.
  Func* f2 = m.add_func("main2", {f32({3})});
  Builder b2(f2->body.get());
  expect_error([&] { b2.call(*h, {f2->arg(0)}); }, {"[call]", "argument types of '@h' differ"});
  b2.func_return({});
  EXPECT_NO_THROW(verify_module(m));
  // Unknown callee.
  c[0]->def->attrs.set("callee", SymbolRef{"nope"});
  expect_error([&] { verify_module(m); }, {"[call]", "unknown callee '@nope'"});
  c[0]->def->attrs.set("callee", SymbolRef{"h"});
  // Duplicate names.
  m.add_func("h", {});
  expect_error([&] { verify_module(m); }, {"duplicate function name '@h'"});
}

TEST(VerifyModule, ReturnKindsInTheirPlace) {
  Fx x({f32({2})});
  x.b.return_({x.arg(0)});
  expect_error([&] { verify_module(x.m); }, {"@main"});
}

TEST(VerifyModule, ErrorCarriesOpLocation) {
  Module m;
  Func* f = m.add_func("main", {Type::tensor(DType::kF32, {2})});
  Builder b(f->body.get());
  b.set_location(Location{7, 3});
  Value* n = b.negate(f->arg(0));
  b.set_location(Location{8, 3});
  b.func_return({n});
  n->type = Type::tensor(DType::kF32, {5});
  f->result_types = {n->type};
  try {
    verify_module(m);
    ADD_FAILURE() << "no error";
  } catch (const VerifyError& e) {
    EXPECT_EQ(e.location().line, 7);
    EXPECT_EQ(e.location().col, 3);
    EXPECT_NE(std::string(e.what()).find("[negate]"), std::string::npos);
  }
}

TEST(Verify, MissingAttributeNamesTheOp) {
  Module m;
  Func* f = m.add_func("main", {Type::tensor(DType::kF32, {2, 3})});
  Builder b(f->body.get());
  try {
    b.create(OpKind::kTranspose, {f->arg(0)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[transpose] missing attribute 'permutation'");
  }
  try {
    b.create(OpKind::kReshape, {f->arg(0)}, {}, {Type::tensor(DType::kF32, {-1, 6})});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[reshape] result type has a negative dimension"),
              std::string::npos);
  }
}

TEST(Verify, HugeAttributesFailInsteadOfOverflowing) {
  Module m;
  Func* f = m.add_func("main", {Type::tensor(DType::kF32, {3, 5}), Type::tensor(DType::kF32, {})});
  Builder b(f->body.get());
  constexpr int64_t kBig = INT64_MAX / 2;
  try {
    b.pad(f->arg(0), f->arg(1), {kBig, 0}, {kBig, 0}, {0, 0});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[pad] size overflows int64"), std::string::npos);
  }
  WindowOptions w;
  w.window_dimensions = {1, 1};
  w.base_dilations = {INT64_MAX, 1};
  try {
    b.reduce_window(f->arg(0), f->arg(1), w, OpKind::kAdd);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[reduce_window] size overflows"), std::string::npos);
  }
  // Stride larger than the slice: ceil(2 / INT64_MAX) = 1 without overflow.
  EXPECT_EQ(b.slice(f->arg(0), {0, 1}, {3, 3}, {1, INT64_MAX})->type,
            Type::tensor(DType::kF32, {3, 1}));
  try {
    b.reshape(f->arg(0), {kBig, 4});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[reshape] size overflows"), std::string::npos);
  }
}

TEST(Verify, OptionalAttributeKinds) {
  Module m;
  Func* f = m.add_func("main", {Type::tensor(DType::kF32, {4, 5})});
  Builder b(f->body.get());
  auto lt = [](Builder& r, const std::vector<Value*>& a) {
    return std::vector<Value*>{r.compare(a[0], a[1], "LT")};
  };
  Value* s = b.sort({f->arg(0)}, 0, true, lt)[0];
  Op* op = s->def;
  op->attrs.set("is_stable", IntAttr{1, DType::kI64});
  try {
    infer_result_types(*op, op->result_types());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[sort] attribute 'is_stable' must be a boolean");
  }
}

TEST(Verify, RegionCounts) {
  Module m;
  Func* f = m.add_func("main", {Type::tensor(DType::kF32, {2})});
  Builder b(f->body.get());
  std::vector<std::unique_ptr<Block>> regs;
  regs.push_back(b.region(
      {}, [&](Builder&, const std::vector<Value*>&) { return std::vector<Value*>{f->arg(0)}; }));
  try {
    b.create(OpKind::kAdd, {f->arg(0), f->arg(0)}, {}, {}, std::move(regs));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[add] wrong number of regions (got 1, expected 0)");
  }
  Attrs a;
  a.set("dimensions", I64s{0});
  try {
    b.create(OpKind::kReduce, {f->arg(0), b.scalar(0, DType::kF32)}, a);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[reduce] wrong number of regions (got 0, expected 1)");
  }
}

}  // namespace
}  // namespace netspec::hlo
