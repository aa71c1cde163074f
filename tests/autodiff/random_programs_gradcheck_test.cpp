// autodiff::vjp on random programs (tests/support/random_program.h, differentiable mode:
// in-range gathers) against finite differences in f64 (autodiff::gradcheck on ref):
// elementwise chains, broadcast reductions, softmax rows, transposes, slices and concatenates,
// reshape views, products and attention, dynamic slices, gathers and scatter-adds, calls, if,
// and counted while loops (nested, stacking rows, swapping carries, with an if inside), composed
// as no single-rule test composes them. 12 coordinates of
// each input are checked; a gradient of rounding-noise size (<= 1e-7) passes on its absolute
// error.
#include <gtest/gtest.h>

#include <cstdlib>

#include "gradcheck/gradcheck.h"
#include "hlo/text/printer.h"
#include "tests/support/random_program.h"

namespace netspec::testing {
namespace {

const int kSeeds = [] {
  const char* e = std::getenv("NETSPEC_RANDOM_PROGRAMS");
  return e && std::atoi(e) > 0 ? std::atoi(e) : 40;
}();

class RandomProgramsGradcheck : public ::testing::TestWithParam<int> {};

// Seeds kSeeds·p + 1 .. kSeeds·(p + 1); NETSPEC_RANDOM_PROGRAMS=N runs N a parameter.
// Every other seed runs on the cpu executor (its planner rewrites the generated backward: the
// reverse loops' stacks, fused groups), the rest on ref.
TEST_P(RandomProgramsGradcheck, VjpMatchesFiniteDifferences) {
  int with_loops = 0;
  for (int k = 1; k <= kSeeds && !HasFailure(); ++k) {
    const auto seed = static_cast<uint32_t>(kSeeds * GetParam() + k);
    RandomProgram p(seed, DType::kF64, /*differentiable=*/true);
    auto m = std::make_shared<hlo::Module>();
    p.build(*m, m->add_func("main", {}));
    autodiff::GradcheckOptions o;
    o.entry = "main";
    o.seed = seed;
    o.max_coords = 12;
    o.zero_abs = 1e-7;
    o.backend = k % 2 ? "cpu" : "ref";
    bool loop = false;
    hlo::walk(*m->find("main")->body,
              [&](const hlo::Op& op) { loop = loop || op.kind == hlo::OpKind::kWhile; });
    with_loops += loop;
    const autodiff::GradcheckReport r = autodiff::gradcheck(*m, o);
    EXPECT_TRUE(r.ok) << "seed " << seed << " on " << o.backend << ": " << r.str() << "\n"
                      << hlo::print_module(*m);
  }
  EXPECT_GE(with_loops, kSeeds / 4) << "too few programs with loops to differentiate";
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomProgramsGradcheck, ::testing::Range(0, 4));

}  // namespace
}  // namespace netspec::testing
