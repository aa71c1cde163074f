// Random programs (tests/support/random_program.h) on the cpu executor against the ref
// interpreter. The cpu results must match ref's (f32: to rounding from reordered sums; f64:
// 1e-12), on a first run, on a second run of the same executable with other inputs (stale arena
// or loop state), and on a run donating every input.
#include <cmath>
#include <cstdlib>

#include "hlo/text/printer.h"
#include "tests/exec/test_util.h"
#include "tests/support/random_program.h"

namespace netspec::testing {
namespace {

using hlo::Module;

double max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(t.as_double(i)));
  return m;
}

// got against want: f64 to 1e-12, f32 to 2e-5 of the result's largest magnitude (sums reordered).
// One failure per result, naming the first element off and how many are.
void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, DType dt,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].type_str(), want[i].type_str()) << what << " result " << i;
    const double tol = (dt == DType::kF64 ? 1e-12 : 2e-5) * (1 + max_abs(want[i]));
    int64_t bad = 0, first = -1;
    for (int64_t j = 0; j < want[i].numel(); ++j) {
      const double g = got[i].as_double(j), w = want[i].as_double(j);
      if (!(std::fabs(g - w) <= tol) && !(std::isnan(g) && std::isnan(w))) {
        if (bad++ == 0) first = j;
      }
    }
    EXPECT_EQ(bad, 0) << what << " result " << i << ": " << bad << " of " << want[i].numel()
                      << " elements off by more than " << tol << ", the first at " << first
                      << ": got " << (first >= 0 ? got[i].as_double(first) : 0) << ", ref "
                      << (first >= 0 ? want[i].as_double(first) : 0);
  }
}

// Seeds kSeeds·p + 1 .. kSeeds·(p + 1) per parameter p (ctest runs the eight in parallel);
// NETSPEC_RANDOM_PROGRAMS=N runs N per parameter instead (by hand: 1000 take ~45 s).
const int kSeeds = [] {
  const char* e = std::getenv("NETSPEC_RANDOM_PROGRAMS");
  return e && std::atoi(e) > 0 ? std::atoi(e) : 100;
}();
class CpuRandomPrograms : public ::testing::TestWithParam<int> {};

TEST_P(CpuRandomPrograms, MatchRef) {
  for (int k = 1; k <= kSeeds && !HasFailure(); ++k)
  for (DType dt : {DType::kF32, DType::kF64}) {
    const uint32_t seed = static_cast<uint32_t>(kSeeds * GetParam() + k);
    RandomProgram gen(seed, dt);
    auto m = std::make_shared<Module>();
    gen.build(*m, m->add_func("main", {}));
    const std::string what = std::string("seed ") + std::to_string(seed) + " " + std::string(dtype_name(dt));
    auto ref = exec::make_backend("ref")->load(m);
    auto cpu = exec::make_backend("cpu")->load(m);
    for (uint32_t run = 0; run < 2; ++run) {  // the second run on other inputs
      const std::vector<Tensor> in = gen.inputs(seed * 7 + run * 101);
      const std::vector<Tensor> want = ref->run("main", in);
      expect_close(cpu->run("main", in), want, dt, what + " run " + std::to_string(run));
      std::vector<Tensor> donated;
      for (const Tensor& t : in) donated.push_back(t.clone());
      expect_close(cpu->run_donating("main", donated, std::vector<bool>(in.size(), true)), want, dt,
                   what + " donating run " + std::to_string(run));
    }
    if (HasFailure()) {
      std::cerr << what << "'s module:\n" << hlo::print_module(*m) << "\n";
      return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, CpuRandomPrograms, ::testing::Range(0, 8));

}  // namespace
}  // namespace netspec::testing
