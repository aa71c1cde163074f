// Calls nested as deep as the verifier allows (hlo::kMaxCallDepth, issue 40 item 3) run on ref
// and cpu without exhausting the stack and give the chain's sum; a chain one deeper is refused
// before it reaches an executor.
#include <gtest/gtest.h>

#include <string>

#include "exec/backend.h"
#include "hlo/text/parser.h"
#include "hlo/verify.h"
#include "tests/exec/test_util.h"
#include "tests/support/generated_text.h"

namespace netspec::testing {
namespace {

using test_support::call_chain_mlir;

class CallChain : public ::testing::TestWithParam<std::string> {};

TEST_P(CallChain, RunsAtTheDepthCap) {
  std::shared_ptr<hlo::Module> m = hlo::parse_module(call_chain_mlir(hlo::kMaxCallDepth), "chain.mlir");
  const std::vector<Tensor> out = run_module(GetParam(), m, {f32({}, {0.5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data<float>()[0], 0.5f + static_cast<float>(hlo::kMaxCallDepth));
  EXPECT_THROW(hlo::parse_module(call_chain_mlir(hlo::kMaxCallDepth + 1), "chain.mlir"), Error);
}

INSTANTIATE_TEST_SUITE_P(Backends, CallChain, ::testing::Values("ref", "cpu"));

}  // namespace
}  // namespace netspec::testing
