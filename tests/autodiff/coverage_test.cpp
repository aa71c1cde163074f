// Every op has a VJP rule (a real one, no_grad for ops whose results carry no cotangent to
// their operands, or a rule that refuses by name) except the terminators, which the engine
// skips. An op added to ops.def without one fails here, not when a net first reaches it.
#include <gtest/gtest.h>

#include "autodiff/rules.h"

namespace netspec::autodiff {
namespace {

using hlo::OpKind;

TEST(VjpCoverage, EveryOpHasARuleOrAnExplicitMark) {
  for (size_t i = 0; i < hlo::kNumOpKinds; ++i) {
    const auto k = static_cast<OpKind>(i);
    if (k == OpKind::kReturn || k == OpKind::kFuncReturn) {
      EXPECT_EQ(vjp_rule_for(k), nullptr) << op_name(k);
      continue;
    }
    EXPECT_NE(vjp_rule_for(k), nullptr) << op_name(k) << " has no VJP rule and no no_grad mark";
  }
}

TEST(VjpCoverage, PiecewiseConstantAndIntegerOpsAreMarkedNoGrad) {
  for (OpKind k : {OpKind::kFloor, OpKind::kSign, OpKind::kCompare, OpKind::kIota,
                   OpKind::kConstant, OpKind::kRngBitGenerator, OpKind::kAnd})
    EXPECT_EQ(vjp_rule_for(k), &no_grad) << op_name(k);
  for (OpKind k : {OpKind::kTanh, OpKind::kAdd, OpKind::kSort, OpKind::kAllReduce})
    EXPECT_NE(vjp_rule_for(k), &no_grad) << op_name(k);
}

}  // namespace
}  // namespace netspec::autodiff
