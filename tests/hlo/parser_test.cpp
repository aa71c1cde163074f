// Parser: real-world spellings (JAX exports, stablehlo-opt output, older generic attributes),
// literals, split files, and errors with file:line:col locations.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>

#include "hlo/text/parser.h"
#include "hlo/text/printer.h"

namespace netspec::hlo {
namespace {

const char* kJaxText = R"(#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {jax.arg_info = "x", mhlo.sharding = "{replicated}"} loc("x"), %arg1: tensor<3xf32>) -> (tensor<2xf32> {jax.result_info = ""}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc2)
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<2x3xf32> loc(#loc1)
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %3 = call @helper(%2) : (tensor<2xf32>) -> tensor<2xf32>
    return %3 : tensor<2xf32>
  }
  func.func private @helper(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<2xf32>
    func.return %0 : tensor<2xf32>
  }
}
#loc2 = loc("y")
)";

TEST(Parser, JaxExportWithAttributesLocationsAndLaterCallee) {
  auto m = parse_module(kJaxText, "jax.mlir");
  EXPECT_EQ(m->name, "jit_f");
  ASSERT_EQ(m->funcs.size(), 2u);
  EXPECT_TRUE(m->funcs[0]->is_public);
  EXPECT_FALSE(m->funcs[1]->is_public);
  EXPECT_EQ(m->entry()->name, "main");
  const Block& body = *m->funcs[0]->body;
  ASSERT_EQ(body.ops.size(), 6u);
  EXPECT_EQ(body.ops[3]->kind, OpKind::kReduce);
  EXPECT_EQ(body.ops[3]->attrs.get_i64s("dimensions"), (I64s{1}));
  EXPECT_EQ(body.ops[3]->loc.line, 7);
  EXPECT_EQ(body.ops[3]->loc.col, 10);
  EXPECT_EQ(body.ops[4]->attrs.get<SymbolRef>("callee").name, "helper");
  EXPECT_EQ(body.ops[1]->attrs.get_i64s("broadcast_dimensions"), (I64s{1}));
  EXPECT_EQ(print_module(*m),
            "module @jit_f {\n"
            "  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>) -> tensor<2xf32> {\n"
            "    %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
            "    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>\n"
            "    %2 = stablehlo.add %arg0, %1 : tensor<2x3xf32>\n"
            "    %3 = stablehlo.reduce(%2 init: %0) applies stablehlo.add across dimensions = [1] : "
            "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
            "    %4 = call @helper(%3) : (tensor<2xf32>) -> tensor<2xf32>\n"
            "    return %4 : tensor<2xf32>\n"
            "  }\n"
            "  func.func private @helper(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
            "    %0 = stablehlo.multiply %arg0, %arg0 : tensor<2xf32>\n"
            "    return %0 : tensor<2xf32>\n"
            "  }\n"
            "}\n");
}

std::string wrap(const std::string& body, const std::string& args = "%arg0: tensor<2x3xf32>",
                 const std::string& res = "tensor<2xf32>") {
  return "func.func @main(" + args + ") -> " + res + " {\n" + body + "}\n";
}

TEST(Parser, ReduceSpellingsAgree) {
  std::string applies = wrap(
      "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.maximum across dimensions = [1] : "
      "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n");
  std::string reducer = wrap(
      "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %0 = stablehlo.reduce(%arg0 init: %c) across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "   reducer(%a: tensor<f32>, %b: tensor<f32>) {\n"
      "    %m = stablehlo.maximum %a, %b : tensor<f32>\n"
      "    stablehlo.return %m : tensor<f32>\n"
      "  }\n"
      "  return %0 : tensor<2xf32>\n");
  std::string generic = wrap(
      "  %c = \"stablehlo.constant\"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>\n"
      "  %0 = \"stablehlo.reduce\"(%arg0, %c) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %m = \"stablehlo.maximum\"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "    \"stablehlo.return\"(%m) : (tensor<f32>) -> ()\n"
      "  }) {dimensions = dense<1> : tensor<1xi64>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "  \"func.return\"(%0) : (tensor<2xf32>) -> ()\n");
  std::string a = print_module(*parse_module(applies));
  EXPECT_NE(a.find("applies stablehlo.maximum across dimensions = [1]"), std::string::npos) << a;
  EXPECT_EQ(print_module(*parse_module(reducer)), a);
  EXPECT_EQ(print_module(*parse_module(generic)), a);
}

TEST(Parser, PropertiesAndTrailingAttributesAndOldDenseArrays) {
  std::string t = wrap(
      "  %0 = \"stablehlo.transpose\"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
      "  %1 = \"stablehlo.broadcast_in_dim\"(%arg0) {broadcast_dimensions = dense<[0, 1]> : tensor<2xi64>} : "
      "(tensor<2x3xf32>) -> tensor<2x3x1xf32>\n"
      "  %2 = \"stablehlo.slice\"(%arg0) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 1>, "
      "strides = array<i64: 1, 1>, mhlo.sharding = \"{replicated}\"} : (tensor<2x3xf32>) -> tensor<2x1xf32>\n"
      "  %3 = stablehlo.reshape %2 : (tensor<2x1xf32>) -> tensor<2xf32>\n"
      "  \"func.return\"(%3) : (tensor<2xf32>) -> ()\n");
  auto m = parse_module(t);
  const auto& ops = m->funcs[0]->body->ops;
  EXPECT_EQ(ops[0]->attrs.get_i64s("permutation"), (I64s{1, 0}));
  EXPECT_EQ(ops[1]->attrs.get_i64s("broadcast_dimensions"), (I64s{0, 1}));
  EXPECT_FALSE(ops[2]->attrs.has("mhlo.sharding"));
  EXPECT_EQ(ops[1]->result(0)->type.str(), "tensor<2x3x1xf32>");
}

float f32_at(const Module& m, size_t op, int64_t i) {
  const auto& t = m.funcs[0]->body->ops[op]->attrs.get<DenseAttr>("value").value;
  return t.data<float>()[i];
}

TEST(Parser, DenseLiteralSpellings) {
  std::string t = wrap(
      "  %0 = stablehlo.constant dense<\"0x0000803F00000040\"> : tensor<2xf32>\n"
      "  %1 = stablehlo.constant dense<\"0x0000C07F\"> : tensor<2xf32>\n"
      "  %2 = stablehlo.constant dense<0x7F800000> : tensor<2xf32>\n"
      "  %3 = stablehlo.constant dense<[0xFF800000, -1.5e+01]> : tensor<2xf32>\n"
      "  %4 = stablehlo.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>\n"
      "  %5 = stablehlo.constant dense<[-128, 127]> : tensor<2xi8>\n"
      "  %6 = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>\n"
      "  %7 = stablehlo.constant dense<> : tensor<0x3xf32>\n"
      "  %8 = stablehlo.constant dense<[1.0, 2.5]> : tensor<2xbf16>\n"
      "  return %0 : tensor<2xf32>\n",
      "", "tensor<2xf32>");
  auto m = parse_module(t);
  EXPECT_EQ(f32_at(*m, 0, 0), 1.0f);
  EXPECT_EQ(f32_at(*m, 0, 1), 2.0f);
  EXPECT_TRUE(std::isnan(f32_at(*m, 1, 1)));
  EXPECT_EQ(std::bit_cast<uint32_t>(f32_at(*m, 1, 1)), 0x7FC00000u);
  EXPECT_EQ(f32_at(*m, 2, 1), INFINITY);
  EXPECT_EQ(f32_at(*m, 3, 0), -INFINITY);
  EXPECT_EQ(f32_at(*m, 3, 1), -15.0f);
  const auto& ops = m->funcs[0]->body->ops;
  const Tensor& b = ops[4]->attrs.get<DenseAttr>("value").value;
  EXPECT_EQ(b.as_int64(0), 1);
  EXPECT_EQ(b.as_int64(1), 0);
  EXPECT_EQ(b.as_int64(3), 1);
  EXPECT_EQ(ops[5]->attrs.get<DenseAttr>("value").value.as_int64(0), -128);
  EXPECT_EQ(ops[6]->attrs.get<DenseAttr>("value").value.as_double(0), -INFINITY);
  EXPECT_EQ(ops[7]->attrs.get<DenseAttr>("value").value.numel(), 0);
  // bf16 2.5 is 0x4020.
  EXPECT_EQ(ops[8]->attrs.get<DenseAttr>("value").value.data<uint16_t>()[1], 0x4020);
  std::string printed = print_module(*m);
  EXPECT_NE(printed.find("dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>"), std::string::npos);
  EXPECT_NE(printed.find("dense<0x7FC00000> : tensor<2xf32>"), std::string::npos);
  EXPECT_NE(printed.find("dense<[0xFF800000, -1.500000e+01]>"), std::string::npos);
  EXPECT_NE(printed.find("dense<0xFFF0000000000000> : tensor<f64>"), std::string::npos);
  EXPECT_NE(printed.find("dense<[1.000000e+00, 2.500000e+00]> : tensor<2xbf16>"), std::string::npos);
  EXPECT_EQ(print_module(*parse_module(printed)), printed);
}

TEST(Parser, GenericFuncAndModule) {
  std::string t =
      "\"builtin.module\"() <{sym_name = \"g\"}> ({\n"
      "  \"func.func\"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = \"main\"}> ({\n"
      "  ^bb0(%x: tensor<2xf32>):\n"
      "    %0 = \"stablehlo.abs\"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "    \"func.return\"(%0) : (tensor<2xf32>) -> ()\n"
      "  }) : () -> ()\n"
      "}) : () -> ()\n";
  auto m = parse_module(t);
  EXPECT_EQ(m->name, "g");
  EXPECT_EQ(print_module(*m),
            "module @g {\n  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
            "    %0 = stablehlo.abs %arg0 : tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}\n");
}

TEST(Parser, WhileAndMultiResultNames) {
  std::string t = wrap(
      "  %c = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %s, %o = stablehlo.rng_bit_generator %k, algorithm = PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3xui32>)\n"
      "  %w:2 = stablehlo.while(%i = %c, %v = %o) : tensor<i32>, tensor<3xui32>\n"
      "   cond {\n"
      "    %lim = stablehlo.constant dense<4> : tensor<i32>\n"
      "    %p = stablehlo.compare  LT, %i, %lim,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %n = stablehlo.add %i, %one : tensor<i32>\n"
      "    stablehlo.return %n, %v : tensor<i32>, tensor<3xui32>\n"
      "  }\n"
      "  return %w#1 : tensor<3xui32>\n",
      "%k: tensor<2xui64>", "tensor<3xui32>");
  auto m = parse_module(t);
  const auto& ops = m->funcs[0]->body->ops;
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[2]->kind, OpKind::kWhile);
  EXPECT_EQ(ops[3]->operand(0), ops[2]->result(1));
  EXPECT_EQ(ops[1]->attrs.get_enum("rng_algorithm"), "PHILOX");
}

TEST(Parser, SplitModulesKeepFileLineNumbers) {
  std::string t = wrap("  %0 = stablehlo.abs %arg0 : tensor<2xf32>\n  return %0 : tensor<2xf32>\n",
                       "%arg0: tensor<2xf32>") +
                  "\n// -----\n\n" +
                  wrap("  %0 = stablehlo.negate %arg0 : tensor<2xf32>\n  return %0 : tensor<2xf32>\n",
                       "%arg0: tensor<2xf32>") +
                  "// -----\n" + "func.func @main() -> () {\n  %0 = stablehlo.bogus\n  return\n}\n";
  try {
    parse_split_modules(t, "split.mlir");
    FAIL() << "expected a ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.location().line, 14) << e.what();
    EXPECT_EQ(e.location().col, 8);
    EXPECT_NE(std::string(e.what()).find("split.mlir:14:8: error: unknown operation 'stablehlo.bogus'"),
              std::string::npos)
        << e.what();
  }
  std::string ok = t.substr(0, t.rfind("// -----"));
  auto mods = parse_split_modules(ok, "split.mlir");
  ASSERT_EQ(mods.size(), 2u);
  EXPECT_EQ(mods[1]->funcs[0]->body->ops[0]->kind, OpKind::kNegate);
  EXPECT_EQ(mods[1]->funcs[0]->body->ops[0]->loc.line, 9);
}

struct BadCase {
  std::string text;
  std::string message;  // substring of the error
  int line, col;
};

// The largest finite values parse (only a literal past them is refused); an underflow is 0.
TEST(Parser, FloatLiteralsUpToTheLargestFiniteValueParse) {
  auto value = [](const std::string& lit, const std::string& ty) {
    auto m = parse_module("func.func @main() -> tensor<" + ty +
                              "> {\n  %0 = stablehlo.constant dense<" + lit + "> : tensor<" + ty +
                              ">\n  return %0 : tensor<" + ty + ">\n}\n",
                          "ok.mlir");
    const hlo::Op& c = *m->entry("main")->body->ops.front();
    return c.attrs.get<hlo::DenseAttr>("value").value.as_double(0);
  };
  EXPECT_EQ(value("3.40282347e38", "f32"), double(std::numeric_limits<float>::max()));
  EXPECT_NO_THROW(parse_module(  // f16's largest finite value
      "func.func @main() -> () {\n  %0 = stablehlo.constant dense<65504.0> : tensor<f16>\n  "
      "return\n}\n",
      "ok.mlir"));
  EXPECT_EQ(value("1.0e-50", "f32"), 0.0);
  EXPECT_EQ(value("1.7976931348623157e308", "f64"), std::numeric_limits<double>::max());
}

TEST(Parser, BadInputGivesParseErrorsWithLocations) {
  std::string deep = "func.func @main(%a: ";
  for (int i = 0; i < 500; ++i) deep += "tuple<";
  std::vector<BadCase> cases = {
      {wrap("  %0 = stablehlo.frobnicate %arg0 : tensor<2xf32>\n"), "unknown operation 'stablehlo.frobnicate'", 2, 8},
      {wrap("  %0 = stablehlo.abs %nope : tensor<2xf32>\n"), "use of undefined value '%nope'", 2, 22},
      {wrap("  %0 = stablehlo.add %arg0, %arg1 : tensor<2x3xf32>\n  return %0 : tensor<2x3xf32>\n",
            "%arg0: tensor<2x3xf32>, %arg1: tensor<3x2xf32>", "tensor<2x3xf32>"),
       "operand #1 has type tensor<3x2xf32>", 2, 8},
      {wrap("  %0 = \"stablehlo.add\"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>\n"
            "  return %0 : tensor<2x3xf32>\n",
            "%arg0: tensor<2x3xf32>, %arg1: tensor<3x2xf32>", "tensor<2x3xf32>"),
       "[add]", 2, 8},
      {wrap("  %0 = stablehlo.abs %arg0 : tensor<2x3xf32>\n"), "block does not end with a return", 3, 1},
      {wrap("  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n  return %0 : tensor<2xf32>\n"),
       "does not match tensor<2xf32>", 2, 27},
      {wrap("  %0 = stablehlo.constant dense<[[1, 2], [3]]> : tensor<2x2xi32>\n"), "ragged", 2, 42},
      {wrap("  %0 = stablehlo.constant dense<300> : tensor<i8>\n"), "out of range for i8", 2, 33},
      {wrap("  %0 = stablehlo.constant dense<1.0e400> : tensor<f32>\n"), "1.0e400 is out of range for f32", 2, 33},
      {wrap("  %0 = stablehlo.constant dense<-1.0e39> : tensor<f32>\n"), "out of range for f32", 2, 33},
      {wrap("  %0 = stablehlo.constant dense<1.0e309> : tensor<f64>\n"), "out of range for f64", 2, 33},
      {wrap("  %0 = stablehlo.constant dense<70000.0> : tensor<f16>\n"), "out of range for f16", 2, 33},
      {wrap("  %0 = stablehlo.iota dim = 99999999999999999999 : tensor<2xi32>\n"), "out of range", 2, 29},
      {"func.func @main(%a: tensor<99999999999999999999xf32>) -> () {\n  return\n}\n", "bad dimension", 1, 28},
      {"func.func @main(%a: tensor<4294967296x4294967296x4294967296xf32>) -> () {\n  return\n}\n",
       "too many elements", 1, 28},
      {"func.func @main() -> () {\n  %0 = stablehlo.constant dense<1.0> : tensor<1000000000000xf32>\n}\n",
       "too large", 2, 40},
      {"func.func @main(%a: tensor<2xf32>) -> () {\n  %0 = stablehlo.abs %a : tensor<2xf32>\n  %0 = stablehlo.abs %a : tensor<2xf32>\n  return\n}\n",
       "redefinition of SSA value '%0'", 3, 3},
      {"func.func @main() -> () {\n  %0 = call @nowhere() : () -> tensor<f32>\n  return\n}\n", "nowhere", 2, 8},
      {"func.func @main() -> () {\n  %0 = stablehlo.constant dense<\"0x00\n", "unterminated string", 2, 33},
      {deep, "nesting deeper than", 1, 0},
      {"module {\n  func.func @main() -> () {\n    return\n  }\n", "expected a func.func", 5, 1},
      {wrap("  %0 = stablehlo.abs %arg0 : tensor<2x3xf32> ~\n"), "unexpected character '~'", 2, 46},
      {"func.func @main(%a: tensor<2x?xf32>) -> () {\n  return\n}\n", "dynamic shapes", 1, 28},
      {"func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n  return %a : tensor<2xf32>\n}\n", "", 0, 0},
  };
  for (const auto& c : cases) {
    try {
      parse_module(c.text, "bad.mlir");
      ADD_FAILURE() << "no error for:\n" << c.text;
    } catch (const ParseError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(c.message), std::string::npos) << what;
      EXPECT_EQ(what.rfind("bad.mlir:", 0), 0u) << what;
      if (c.line) {
        EXPECT_EQ(e.location().line, c.line) << what;
      }
      if (c.col) {
        EXPECT_EQ(e.location().col, c.col) << what;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a ParseError: " << e.what();
    }
  }
}

// `depth` case ops nested inside each other's single branch.
std::string nested_cases(int depth) {
  std::string t = "func.func @main(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {\n";
  for (int d = 0; d < depth; ++d) t += "%r" + std::to_string(d) + " = \"stablehlo.case\"(%i) ({\n";
  t += "\"stablehlo.return\"(%x) : (tensor<f32>) -> ()\n";
  for (int d = depth - 1; d >= 0; --d) {
    t += "}) : (tensor<i32>) -> tensor<f32>\n";
    t += d ? "\"stablehlo.return\"(%r" + std::to_string(d) + ") : (tensor<f32>) -> ()\n"
           : "return %r0 : tensor<f32>\n";
  }
  return t + "}\n";
}

TEST(Parser, DeepRegionNestingIsBounded) {
  auto m = parse_module(nested_cases(100));
  int n = 0;
  walk(*m->funcs[0]->body, [&](const Op& op) { n += op.kind == OpKind::kCase; });
  EXPECT_EQ(n, 100);
  EXPECT_EQ(print_module(*parse_module(print_module(*m))), print_module(*m));
  try {
    parse_module(nested_cases(400), "deep.mlir");
    FAIL() << "expected a ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("nesting deeper than"), std::string::npos) << e.what();
  }
}

TEST(Parser, ParseFileReadsTheFirstPart) {
  std::string path = ::testing::TempDir() + "/parser_test_split.mlir";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_TRUE(f);
    std::string t =
        wrap("  %0 = stablehlo.abs %arg0 : tensor<2xf32>\n  return %0 : tensor<2xf32>\n",
             "%arg0: tensor<2xf32>") +
        "// -----\nthis part is not parsed by parse_file\n";
    std::fwrite(t.data(), 1, t.size(), f);
    std::fclose(f);
  }
  auto m = parse_file(path);
  EXPECT_EQ(m->funcs[0]->body->ops[0]->kind, OpKind::kAbs);
  EXPECT_THROW(parse_split_modules("x\n// -----\n", path), ParseError);
  EXPECT_THROW(parse_file(path + ".missing"), Error);
}

}  // namespace
// Found by the fuzz test: a generic-form i32 attribute of 2^32 parsed, then printed as a pretty
// reduce_precision format that could not be parsed back.
TEST(Parser, IntegerAttributeMustFitItsWidth) {
  auto op = [](const std::string& e) {
    return wrap("  %0 = \"stablehlo.reduce_precision\"(%arg0) <{exponent_bits = " + e +
                    " : i32, mantissa_bits = 10 : i32}> : (tensor<2xf32>) -> tensor<2xf32>\n"
                    "  return %0 : tensor<2xf32>\n",
                "%arg0: tensor<2xf32>");
  };
  EXPECT_NO_THROW(parse_module(op("2147483647")));
  try {
    parse_module(op("4294967296"), "wide.mlir");
    FAIL() << "expected a ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit i32"), std::string::npos) << e.what();
  }
}

}  // namespace netspec::hlo
