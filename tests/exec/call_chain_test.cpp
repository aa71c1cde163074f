// Calls nested as deep as the verifier allows (hlo::kMaxCallDepth, issue 40 item 3) run on ref
// and cpu without exhausting the stack and give the chain's sum; a chain one deeper is refused
// before it reaches an executor.
#include <gtest/gtest.h>

#include <string>

#include "exec/backend.h"
#include "hlo/text/parser.h"
#include "hlo/verify.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

// @main -> @f1 -> ... -> @fn, each adding 1 before it calls the next (n calls deep).
std::string chain(int n) {
  std::string t;
  for (int k = 0; k <= n; ++k) {
    t += "func.func " + std::string(k == 0 ? "@main" : "private @f" + std::to_string(k)) +
         "(%a: tensor<f32>) -> tensor<f32> {\n";
    if (k == n) {
      t += "  return %a : tensor<f32>\n}\n";
      continue;
    }
    t += "  %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
         "  %s = stablehlo.add %a, %c : tensor<f32>\n"
         "  %0 = call @f" +
         std::to_string(k + 1) +
         "(%s) : (tensor<f32>) -> tensor<f32>\n"
         "  return %0 : tensor<f32>\n}\n";
  }
  return t;
}

class CallChain : public ::testing::TestWithParam<std::string> {};

TEST_P(CallChain, RunsAtTheDepthCap) {
  std::shared_ptr<hlo::Module> m = hlo::parse_module(chain(hlo::kMaxCallDepth), "chain.mlir");
  const std::vector<Tensor> out = run_module(GetParam(), m, {f32({}, {0.5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data<float>()[0], 0.5f + static_cast<float>(hlo::kMaxCallDepth));
  EXPECT_THROW(hlo::parse_module(chain(hlo::kMaxCallDepth + 1), "chain.mlir"), Error);
}

INSTANTIATE_TEST_SUITE_P(Backends, CallChain, ::testing::Values("ref", "cpu"));

}  // namespace
}  // namespace netspec::testing
