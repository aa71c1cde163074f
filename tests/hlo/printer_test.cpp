// Printer: the exact pretty spellings StableHLO's tools use, float formatting that reads back
// bit-exactly, and the generic form of functions and ops.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hlo/builder.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"

namespace netspec::hlo {
namespace {

Type f32(Shape s) { return Type::tensor(DType::kF32, std::move(s)); }

std::string find_line(const std::string& text, const std::string& needle) {
  size_t p = text.find(needle);
  if (p == std::string::npos) return "<not found: " + needle + ">\n" + text;
  size_t b = text.rfind('\n', p) + 1, e = text.find('\n', p);
  std::string l = text.substr(b, e - b);
  return l.substr(l.find_first_not_of(' '));
}

TEST(Printer, CustomSyntaxOfCommonOps) {
  Module m;
  Func* f = m.add_func("main", {f32({2, 3}), f32({2, 3})});
  Builder b(f->body.get());
  Value *x = f->arg(0), *y = f->arg(1);
  b.compare(x, y, "LT");
  b.broadcast_in_dim(b.slice(x, {0, 1}, {2, 3}, {1, 2}), {4, 2, 1}, {1, 2});
  Value* a3 = b.reshape(x, {1, 2, 3});
  b.dot_general(a3, b.reshape(y, {1, 3, 2}), DotDims{{0}, {0}, {2}, {1}}, {"DEFAULT", "DEFAULT"});
  b.reduce(x, b.scalar(0, DType::kF32), {1}, OpKind::kAdd);
  b.iota(Type::tensor(DType::kI32, {4}), 0);
  b.pad(x, b.scalar(0, DType::kF32), {0, 1}, {2, 1}, {1, 0});
  b.concatenate({x, y}, 0);
  b.transpose(x, {1, 0});
  b.get_tuple_element(b.tuple({x, y}), 1);
  b.func_return({x});
  std::string t = print_module(m);
  EXPECT_EQ(find_line(t, "compare"),
            "%0 = stablehlo.compare  LT, %arg0, %arg1,  FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>");
  EXPECT_EQ(find_line(t, "slice"), "%1 = stablehlo.slice %arg0 [0:2, 1:3:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>");
  EXPECT_EQ(find_line(t, "broadcast_in_dim"),
            "%2 = stablehlo.broadcast_in_dim %1, dims = [1, 2] : (tensor<2x1xf32>) -> tensor<4x2x1xf32>");
  EXPECT_EQ(find_line(t, "dot_general"),
            "%5 = stablehlo.dot_general %3, %4, batching_dims = [0] x [0], contracting_dims = [2] x [1], "
            "precision = [DEFAULT, DEFAULT] : (tensor<1x2x3xf32>, tensor<1x3x2xf32>) -> tensor<1x2x2xf32>");
  EXPECT_EQ(find_line(t, "reduce("),
            "%7 = stablehlo.reduce(%arg0 init: %6) applies stablehlo.add across dimensions = [1] : "
            "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>");
  EXPECT_EQ(find_line(t, "iota"), "%8 = stablehlo.iota dim = 0 : tensor<4xi32>");
  EXPECT_EQ(find_line(t, "pad"),
            "%10 = stablehlo.pad %arg0, %9, low = [0, 1], high = [2, 1], interior = [1, 0] : "
            "(tensor<2x3xf32>, tensor<f32>) -> tensor<5x5xf32>");
  EXPECT_EQ(find_line(t, "concatenate"),
            "%11 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>");
  EXPECT_EQ(find_line(t, "transpose"), "%12 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>");
  EXPECT_EQ(find_line(t, "stablehlo.tuple"), "%13 = stablehlo.tuple %arg0, %arg1 : tuple<tensor<2x3xf32>, tensor<2x3xf32>>");
  EXPECT_EQ(find_line(t, "get_tuple_element"),
            "%14 = stablehlo.get_tuple_element %13[1] : (tuple<tensor<2x3xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32>");
  EXPECT_EQ(find_line(t, "return"), "return %arg0 : tensor<2x3xf32>");
  EXPECT_EQ(t.rfind("module {\n  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> "
                    "tensor<2x3xf32> {\n",
                    0),
            0u)
      << t;
}

// A call inside a stablehlo region must carry its dialect (the region's default dialect is
// stablehlo; XLA and IREE reject a bare `call` there), while top-level calls print bare.
TEST(Printer, CallInsideRegionSpellsFuncCall) {
  Module m;
  Func* h = m.add_func("helper", {f32({3})}, /*is_public=*/false);
  {
    Builder hb(h->body.get());
    hb.func_return({hb.tanh(h->arg(0))});
  }
  Func* f = m.add_func("main", {f32({3}), Type::tensor(DType::kI1, {})});
  Builder b(f->body.get());
  Value* top = b.call(*h, {f->arg(0)})[0];
  auto r = b.if_(
      f->arg(1), [&](Builder& rb, const std::vector<Value*>&) { return rb.call(*h, {top}); },
      [&](Builder&, const std::vector<Value*>&) { return std::vector<Value*>{top}; });
  b.func_return({r[0]});
  std::string text = print_module(m);
  EXPECT_NE(text.find("%0 = call @helper("), std::string::npos) << text;
  EXPECT_NE(text.find("func.call @helper(%0)"), std::string::npos) << text;
  EXPECT_EQ(print_module(*parse_module(text)), text);
}

TEST(Printer, ConvolutionWindowAndGroupCounts) {
  Module m;
  Func* f = m.add_func("main", {f32({1, 2, 5, 5}), f32({4, 2, 3, 3})});
  Builder b(f->body.get());
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.window_strides = {2, 2};
  o.padding = {{1, 1}, {0, 0}};
  o.lhs_dilation = {1, 1};
  o.rhs_dilation = {1, 1};
  o.window_reversal = {false, false};
  b.func_return({b.convolution(f->arg(0), f->arg(1), o)});
  std::string t = print_module(m);
  EXPECT_EQ(find_line(t, "convolution"),
            "%0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], "
            "window = {stride = [2, 2], pad = [[1, 1], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], "
            "reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
            "(tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x2xf32>");
}

TEST(Printer, FloatsReadBackExactly) {
  Module m;
  Func* f = m.add_func("main", {});
  Builder b(f->body.get());
  float next1 = std::nextafter(1.0f, 2.0f);
  b.constant(Tensor::from<float>(DType::kF32, {6},
                                 {1.0f, 0.1f, next1, std::numeric_limits<float>::quiet_NaN(),
                                  -std::numeric_limits<float>::infinity(), -0.0f}));
  b.constant(Tensor::from<double>(DType::kF64, {2}, {0.1, std::numeric_limits<double>::infinity()}));
  b.constant(Tensor::from<int>(DType::kI1, {2, 2}, {1, 0, 0, 1}));
  b.constant(Tensor::from<float>(DType::kF32, {2, 2}, {7.0f, 7.0f, 7.0f, 7.0f}));
  b.func_return({});
  std::string t = print_module(m);
  EXPECT_EQ(find_line(t, "tensor<6xf32>"),
            "%0 = stablehlo.constant dense<[1.000000e+00, 1.000000e-01, 1.0000001e+00, 0x7FC00000, 0xFF800000, "
            "-0.000000e+00]> : tensor<6xf32>");
  EXPECT_EQ(find_line(t, "f64"), "%1 = stablehlo.constant dense<[1.000000e-01, 0x7FF0000000000000]> : tensor<2xf64>");
  EXPECT_EQ(find_line(t, "i1>"), "%2 = stablehlo.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>");
  EXPECT_EQ(find_line(t, "%3"), "%3 = stablehlo.constant dense<7.000000e+00> : tensor<2x2xf32>");
  auto m2 = parse_module(t);
  const Tensor& v = m2->funcs[0]->body->ops[0]->attrs.get<DenseAttr>("value").value;
  EXPECT_EQ(v.data<float>()[2], next1);
  EXPECT_TRUE(std::signbit(v.data<float>()[5]));
}

TEST(Printer, GenericForm) {
  Module m;
  Func* f = m.add_func("main", {f32({2})});
  Builder b(f->body.get());
  Value* s = b.reduce(f->arg(0), b.scalar(1, DType::kF32), {0}, OpKind::kMultiply);
  b.func_return({s});
  std::string t = print_module(m, {.generic = true});
  EXPECT_EQ(t,
            "\"builtin.module\"() ({\n"
            "  \"func.func\"() <{function_type = (tensor<2xf32>) -> tensor<f32>, sym_name = \"main\"}> ({\n"
            "  ^bb0(%arg0: tensor<2xf32>):\n"
            "    %0 = \"stablehlo.constant\"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>\n"
            "    %1 = \"stablehlo.reduce\"(%arg0, %0) <{dimensions = array<i64: 0>}> ({\n"
            "    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):\n"
            "      %2 = \"stablehlo.multiply\"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
            "      \"stablehlo.return\"(%2) : (tensor<f32>) -> ()\n"
            "    }) : (tensor<2xf32>, tensor<f32>) -> tensor<f32>\n"
            "    \"func.return\"(%1) : (tensor<f32>) -> ()\n"
            "  }) : () -> ()\n"
            "}) : () -> ()\n");
  EXPECT_EQ(print_module(*parse_module(t), {.generic = true}), t);
}

TEST(Printer, PrintFuncAlone) {
  Module m;
  Func* f = m.add_func("helper", {f32({})}, false);
  Builder b(f->body.get());
  b.func_return({b.sqrt(f->arg(0))});
  EXPECT_EQ(print_func(*f),
            "func.func private @helper(%arg0: tensor<f32>) -> tensor<f32> {\n"
            "  %0 = stablehlo.sqrt %arg0 : tensor<f32>\n"
            "  return %0 : tensor<f32>\n"
            "}\n");
}

}  // namespace
}  // namespace netspec::hlo
