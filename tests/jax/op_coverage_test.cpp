// Every op in ops.def has a JAX translation or an explicit refusal with its reason (jax/ops.h),
// as every op has a ref kernel (tests/exec/op_coverage_test.cpp) and a VJP rule
// (tests/autodiff/coverage_test.cpp): an op added to ops.def without either fails here, not when
// a net first reaches it in `netspec emit --jax`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jax/ops.h"

namespace netspec::jax {
namespace {

using hlo::OpKind;

// The ops (by name, in ops.def order) whose rule satisfies `pred`.
template <typename Pred>
std::vector<std::string> ops_where(Pred pred) {
  std::vector<std::string> out;
  for (size_t i = 0; i < hlo::kNumOpKinds; ++i) {
    const auto k = static_cast<OpKind>(i);
    if (pred(op_rule(k))) out.emplace_back(op_name(k));
  }
  return out;
}

TEST(JaxOpCoverage, EveryOpHasATranslationOrARefusal) {
  for (size_t i = 0; i < hlo::kNumOpKinds; ++i) {
    const auto k = static_cast<OpKind>(i);
    const OpRule& r = op_rule(k);
    EXPECT_TRUE(r.expr || !r.refusal.empty())
        << op_name(k) << " (family " << op_family(k)
        << ") has neither a JAX translation nor a refusal: add one in src/jax/ops_<family>.cpp";
    EXPECT_FALSE(r.expr && !r.refusal.empty()) << op_name(k) << " is translated and refused";
  }
}

// The refused ops are those no forward, loss or optimizer lowers to; any other refusal would
// make a net's program fail.
TEST(JaxOpCoverage, RefusedOpsAreTheOnesNoLoweringEmits) {
  EXPECT_EQ(ops_where([](const OpRule& r) { return !r.expr; }),
            (std::vector<std::string>{"stablehlo.select_and_scatter", "stablehlo.map",
                                      "stablehlo.return", "func.return",
                                      "stablehlo.rng_bit_generator", "stablehlo.all_reduce"}));
}

// Ops whose Python value is a tuple even with one result are unpacked `t0, = ...`; a rank-0
// constant is read inline where used.
TEST(JaxOpCoverage, TupleValuedAndInlineOps) {
  EXPECT_EQ(ops_where([](const OpRule& r) { return r.tuple; }),
            (std::vector<std::string>{"stablehlo.sort", "stablehlo.while", "stablehlo.if",
                                      "stablehlo.case", "stablehlo.optimization_barrier"}));
  EXPECT_EQ(ops_where([](const OpRule& r) { return r.inline_scalar; }),
            (std::vector<std::string>{"stablehlo.constant"}));
}

}  // namespace
}  // namespace netspec::jax
