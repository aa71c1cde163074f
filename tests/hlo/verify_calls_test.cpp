// verify_module refuses recursive call graphs (a function reaching itself through func.call),
// naming the cycle, and accepts a call DAG where functions are called more than once.
#include <gtest/gtest.h>

#include <string>

#include "hlo/text/parser.h"

namespace netspec::hlo {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_module(text, "calls.mlir");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A 4-line function @name(%a: tensor<f32>) that returns call @callee(%a) (line 2).
std::string caller(const std::string& name, const std::string& callee) {
  return "func.func " + std::string(name == "main" ? "" : "private ") + "@" + name +
         "(%a: tensor<f32>) -> tensor<f32> {\n"
         "  %0 = call @" +
         callee +
         "(%a) : (tensor<f32>) -> tensor<f32>\n"
         "  return %0 : tensor<f32>\n"
         "}\n";
}

TEST(VerifyCalls, SelfCallIsRefused) {
  std::string e = parse_error(caller("main", "main"));
  EXPECT_NE(e.find("calls.mlir:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("recursive call: @main -> @main"), std::string::npos) << e;
}

TEST(VerifyCalls, CycleThroughOtherFunctionsAndRegionsIsRefused) {
  // @main -> @f -> @g -> @f, the last call inside a while body.
  std::string e = parse_error(caller("main", "f") + caller("f", "g") +
                              "func.func private @g(%a: tensor<f32>) -> tensor<f32> {\n"
                              "  %0 = stablehlo.while(%iterArg = %a) : tensor<f32>\n"
                              "   cond {\n"
                              "    %c = stablehlo.constant dense<false> : tensor<i1>\n"
                              "    stablehlo.return %c : tensor<i1>\n"
                              "  } do {\n"
                              "    %1 = func.call @f(%iterArg) : (tensor<f32>) -> tensor<f32>\n"
                              "    stablehlo.return %1 : tensor<f32>\n"
                              "  }\n"
                              "  return %0 : tensor<f32>\n"
                              "}\n");
  EXPECT_NE(e.find("calls.mlir:15:"), std::string::npos) << e;
  EXPECT_NE(e.find("recursive call: @f -> @g -> @f"), std::string::npos) << e;
}

TEST(VerifyCalls, SharedCalleesAreNotACycle) {
  std::string e = parse_error(
      "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = call @f(%a) : (tensor<f32>) -> tensor<f32>\n"
      "  %1 = call @f(%0) : (tensor<f32>) -> tensor<f32>\n"
      "  %2 = call @g(%1) : (tensor<f32>) -> tensor<f32>\n"
      "  return %2 : tensor<f32>\n"
      "}\n" +
      caller("f", "g") +
      "func.func private @g(%a: tensor<f32>) -> tensor<f32> {\n"
      "  return %a : tensor<f32>\n"
      "}\n");
  EXPECT_EQ(e, "");
}

}  // namespace
}  // namespace netspec::hlo
