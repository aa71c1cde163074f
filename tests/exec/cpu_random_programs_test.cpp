// Random programs (tests/support/random_program.h) on the cpu executor against the ref
// interpreter. The cpu results must match ref's (f32: to rounding from reordered sums; f64:
// 1e-12), on a first run, on a second run of the same executable with other inputs (stale arena
// or loop state), on a run donating every input, and over three steps of a session that feeds
// results back into the arguments of their type.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "exec/cpu/cpu_backend.h"
#include "hlo/text/printer.h"
#include "tests/exec/test_util.h"
#include "tests/support/random_program.h"

namespace netspec::testing {
namespace {

using hlo::Module;

// f64 to 1e-12, f32 to 2e-5 of each result's largest magnitude (sums reordered).
void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, DType dt,
                  const std::string& what) {
  expect_close_to_scale(got, want, dt == DType::kF64 ? 1e-12 : 2e-5, what);
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
      const std::string what =
          std::string("seed ") + std::to_string(seed) + " " + std::string(dtype_name(dt));
      auto ref = exec::make_backend("ref")->load(m);
      auto cpu = exec::make_backend("cpu")->load(m);
      for (uint32_t run = 0; run < 2; ++run) {  // the second run on other inputs
        const std::vector<Tensor> in = gen.inputs(seed * 7 + run * 101);
        const std::vector<Tensor> want = ref->run("main", in);
        expect_close(cpu->run("main", in), want, dt, what + " run " + std::to_string(run));
        std::vector<Tensor> donated;
        for (const Tensor& t : in) donated.push_back(t.clone());
        expect_close(cpu->run_donating("main", donated, std::vector<bool>(in.size(), true)), want,
                     dt, what + " donating run " + std::to_string(run));
      }
      // As a session: each argument that some result of its type can replace is fed back from
      // the first such result not taken yet (a training step's state, which the executor may
      // update in place). Three steps; each must equal, bit for bit, a plain run on the values fed
      // back (the first also matches ref; later inputs are fed-back values of any size, where a
      // program's cancellations make a tolerance meaningless).
      const hlo::Func& f = *m->find("main");
      std::vector<exec::Feedback> fb;
      std::vector<bool> taken(f.result_types.size(), false);
      for (size_t i = 0; i < f.num_args(); ++i)
        for (size_t o = 0; o < taken.size(); ++o)
          if (!taken[o] && f.result_types[o] == f.arg(i)->type) {
            fb.push_back({i, o});
            taken[o] = true;
            break;
          }
      if (!fb.empty() && !HasFailure()) {
        auto session = cpu->open_session("main", fb);
        std::vector<Tensor> now = gen.inputs(seed * 7 + 555);
        for (const exec::Feedback& e : fb) session->set_state(e.input, now[e.input]);
        for (int step = 0; step < 3; ++step) {
          const std::string at = what + " session step " + std::to_string(step);
          const std::vector<Tensor> plain = cpu->run("main", now);
          if (step == 0)
            expect_close(plain, ref->run("main", now), dt, at + " (plain run against ref)");
          std::vector<Tensor> feed = now;
          for (const exec::Feedback& e : fb) feed[e.input] = Tensor();
          const std::vector<Tensor> got = session->step(feed);
          for (size_t o = 0; o < plain.size(); ++o)
            if (!taken[o]) expect_equal(got[o], plain[o], at + " result " + std::to_string(o));
          for (const exec::Feedback& e : fb) {
            expect_equal(session->state(e.input), plain[e.output],
                         at + " state " + std::to_string(e.input));
            now[e.input] = plain[e.output];
          }
        }
      }
      if (HasFailure()) {
        std::cerr << what << "'s module:\n" << hlo::print_module(*m) << "\n";
        return;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, CpuRandomPrograms, ::testing::Range(0, 8));

// The programs reach every planner rewrite the comparisons above are meant to check: if a change
// to the generator (or the planner) stopped one from firing, its wrong answers would go unseen.
// With the executor's defaults: skipped under a NETSPEC_ knob that turns a rewrite off.
TEST(CpuRandomPrograms, ReachEveryPlannerRewrite) {
  for (char** e = environ; *e; ++e) {
    const std::string_view kv(*e);
    if (kv.rfind("NETSPEC_", 0) == 0 && kv.rfind("NETSPEC_RANDOM_", 0) != 0)
      GTEST_SKIP() << "a knob is set: " << kv;
  }
  exec::cpu::PlanStats sum;
  int inlined = 0, folded = 0, sunk = 0, donated = 0, remat = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    RandomProgram gen(seed, DType::kF32);
    auto m = std::make_shared<Module>();
    gen.build(*m, m->add_func("main", {}));
    const hlo::Func& f = *m->find("main");
    const exec::cpu::PlanStats s = exec::cpu::plan_stats(f, std::vector<bool>(f.num_args(), true));
    sum.add(s);
    inlined += s.calls_inlined, folded += s.dot_transposes_folded, sunk += s.slices_sunk;
    remat += s.remat_clones;
    donated += s.donated;
  }
  EXPECT_GT(sum.inplace, 0) << "results written into a dying operand's or loop state's storage";
  EXPECT_GT(sum.views, 0) << "reshapes and slices read in place";
  EXPECT_GT(sum.fused_row_reduces, 0) << "row reductions folded into fused groups";
  EXPECT_GT(sum.fused_bcasts, 0) << "broadcasts read in place by fused groups";
  EXPECT_GT(sum.fused_generated, 0) << "fused groups run as generated code";
  EXPECT_GT(sum.unfilled_states, 0) << "zero stacks a loop overwrites whole left unfilled";
  EXPECT_GT(inlined, 0) << "calls inlined";
  EXPECT_GT(folded, 0) << "transposes folded into products";
  EXPECT_GT(sunk, 0) << "slices sunk into their producers";
  EXPECT_GT(remat, 0) << "cheap values recomputed near a late use";
  EXPECT_GT(donated, 0) << "results written into donated arguments";
}

}  // namespace
}  // namespace netspec::testing
