// verify_module refuses recursive call graphs (a function reaching itself through func.call),
// naming the cycle, and accepts a call DAG where functions are called more than once.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "hlo/text/parser.h"
#include "hlo/verify.h"
#include "tests/support/generated_text.h"

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

std::string chain(int n) { return test_support::call_chain_mlir(n); }

// Issue 40 item 3: a chain of 16,000 calls is acyclic, so it passed the recursion check and the
// executors' recursion overflowed the stack. Calls (plus the regions they sit in) nest at most
// kMaxCallDepth deep.
TEST(VerifyCalls, ACallChainDeeperThanTheCapIsRefused) {
  EXPECT_EQ(parse_error(chain(kMaxCallDepth)), "");
  std::string e = parse_error(chain(kMaxCallDepth + 1));
  EXPECT_NE(e.find("calls nest 257 deep below @main (counting the regions they sit in; expected "
                   "at most 256)"),
            std::string::npos)
      << e;
  e = parse_error(chain(16000));
  EXPECT_NE(e.find("calls nest 257 deep below @f15743"), std::string::npos) << e;
  // A call inside a while body counts the region too: 255 calls below it, 1 region, 1 call.
  std::string in_while = chain(kMaxCallDepth);
  const std::string call1 = "  %0 = call @f1(%s) : (tensor<f32>) -> tensor<f32>\n";
  const size_t at = in_while.find(call1);
  ASSERT_NE(at, std::string::npos);
  in_while.replace(at, call1.size(),
                   "  %0 = stablehlo.while(%it = %s) : tensor<f32>\n"
                   "   cond {\n"
                   "    %b = stablehlo.constant dense<false> : tensor<i1>\n"
                   "    stablehlo.return %b : tensor<i1>\n"
                   "  } do {\n"
                   "    %1 = func.call @f1(%it) : (tensor<f32>) -> tensor<f32>\n"
                   "    stablehlo.return %1 : tensor<f32>\n"
                   "  }\n");
  EXPECT_NE(parse_error(in_while).find("calls nest 257 deep below @main"), std::string::npos);
}

// A chain of 100k calls spent > 120 s in quadratic name look-ups (redefinition checks, call
// resolution) before anything was refused; now its refusal comes in linear time.
TEST(VerifyCalls, AHugeCallChainIsRefusedInLinearTime) {
  const std::string text = chain(100000);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = parse_error(text);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(e.find("calls nest 257 deep"), std::string::npos) << e;
  EXPECT_LT(s, 40.0);  // quadratic look-ups took minutes; linear, 9 s on 2 loaded cores
}

}  // namespace
}  // namespace netspec::hlo
