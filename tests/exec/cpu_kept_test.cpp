// Kept operands on the cpu executor (Executable::run_kept, a session's kKeep state, module
// constants): a convolution reorders its weights into the kernel's layout once per set_state and
// reuses that copy, with results equal to a plain run bit for bit; new weights (set_state again)
// are never served from the old copy. netspec's own Winograd keeps its transformed weights the
// same way.
#include <cstring>

#include "exec/cpu/conv/winograd.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/kernels.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

const Shape kX{1, 32, 12, 12}, kW{32, 32, 3, 3};

hlo::Value* conv3x3(Builder& b, hlo::Value* x, hlo::Value* w) {
  hlo::ConvOptions o;
  o.dims = hlo::ConvOptions::nchw(2);
  o.padding = {{1, 1}, {1, 1}};
  return b.convolution(x, w, o, DType::kF32);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

int64_t refreshes(const exec::Backend& be) { return be.counters().at("kept_refreshes"); }

// With the channel-blocked layout (AVX-512 / AVX2 CPUs) the weights need a reorder: the first
// kept step makes one copy; without it (plain layout) there is nothing to keep.
int64_t expected_refresh() { return exec::cpu::layout_block_size() > 0 ? 1 : 0; }

// A session keeping the conv's weights (seeds w_seed, w_seed + 1): three steps on w1 equal plain
// runs bit for bit (and, with against_ref, the ref executor within Winograd's rounding) with
// `per_set` refreshes; after set_state(w2) the step uses w2, not the copy of w1.
void expect_kept_once_per_set_state(uint32_t w_seed, int64_t per_set, bool against_ref) {
  auto be = exec::make_backend("cpu");
  BodyFn body = [](Builder& b, const Values& a) { return Values{conv3x3(b, a[0], a[1])}; };
  auto exe = be->load(
      make_module({Type::tensor(DType::kF32, kX), Type::tensor(DType::kF32, kW)}, body));
  const Tensor w1 = random_f32(kW, w_seed), w2 = random_f32(kW, w_seed + 1);
  auto session = exe->open_session("main", {{1, exec::Feedback::kKeep}});
  session->set_state(1, w1);
  const int64_t r0 = refreshes(*be);
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Tensor x = random_f32(kX, seed);
    const Tensor got = session->step({x, Tensor()}).at(0);
    const Tensor want = exe->run("main", {x, w1}).at(0);  // plain run: nothing kept
    EXPECT_TRUE(same_bits(got, want)) << "step " << seed;
    if (against_ref) expect_near(got, run_fn("ref", {x, w1}, body).at(0), 1e-4, 1e-4, "ref");
  }
  EXPECT_EQ(refreshes(*be) - r0, per_set) << "three steps, one set_state";
  // New weights: the next step uses them, not the copy of w1.
  session->set_state(1, w2);
  const Tensor x = random_f32(kX, 9);
  const Tensor got = session->step({x, Tensor()}).at(0);
  EXPECT_TRUE(same_bits(got, exe->run("main", {x, w2}).at(0)));
  EXPECT_FALSE(same_bits(got, exe->run("main", {x, w1}).at(0)));
  EXPECT_EQ(refreshes(*be) - r0, 2 * per_set);
}

TEST(CpuKept, SessionReordersKeptWeightsOncePerSetState) {
  expect_kept_once_per_set_state(11, expected_refresh(), false);
}

// netspec's own Winograd (NETSPEC_CPU_WINOGRAD=own: taken wherever it applies, as the default
// takes it for training-sized batches) transforms kept weights once (U = G g G^T) per set_state.
TEST(CpuKept, OwnWinogradTransformsKeptWeightsOncePerSetState) {
  if (!exec::cpu::winograd_avx2_runs()) GTEST_SKIP() << "no AVX2 + FMA: no own Winograd here";
  ::setenv("NETSPEC_CPU_WINOGRAD", "own", 1);
  expect_kept_once_per_set_state(31, 1, true);
  ::unsetenv("NETSPEC_CPU_WINOGRAD");
}

TEST(CpuKept, PlainRunsKeepNothing) {
  auto be = exec::make_backend("cpu");
  BodyFn body = [](Builder& b, const Values& a) { return Values{conv3x3(b, a[0], a[1])}; };
  auto exe = be->load(
      make_module({Type::tensor(DType::kF32, kX), Type::tensor(DType::kF32, kW)}, body));
  const int64_t r0 = refreshes(*be);
  Tensor w = random_f32(kW, 5);
  const Tensor x = random_f32(kX, 6);
  const Tensor a = exe->run("main", {x, w}).at(0);
  // The caller may change an argument in place between plain runs: always read afresh.
  for (float& v : w.span<float>()) v = -v;
  const Tensor b = exe->run("main", {x, w}).at(0);
  for (int64_t i = 0; i < a.numel(); ++i)
    ASSERT_EQ(a.data<float>()[i], -b.data<float>()[i]) << "element " << i;
  EXPECT_EQ(refreshes(*be), r0);
}

TEST(CpuKept, ConstantWeightsAreReorderedOnce) {
  auto be = exec::make_backend("cpu");
  const Tensor w = random_f32(kW, 21);
  BodyFn body = [&](Builder& b, const Values& a) {
    return Values{conv3x3(b, a[0], b.constant(w))};
  };
  auto exe = be->load(make_module({Type::tensor(DType::kF32, kX)}, body));
  const int64_t r0 = refreshes(*be);
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Tensor x = random_f32(kX, seed);
    const Tensor want = run_fn("ref", {x, w}, [](Builder& b, const Values& a) {
                          return Values{conv3x3(b, a[0], a[1])};
                        }).at(0);
    expect_near(exe->run("main", {x}).at(0), want, 1e-4, 1e-4, "constant weights");
  }
  EXPECT_EQ(refreshes(*be) - r0, expected_refresh());
}

}  // namespace
}  // namespace netspec::testing
