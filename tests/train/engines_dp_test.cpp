// Data-parallel training on the xla backend (R PJRT CPU devices, cpu_device_count) against the
// cpu executor's replica threads: the replicated train step keeps one copy of the state per
// replica in a Session (device buffers on xla); per step losses, parameters and BN running
// statistics agree with cpu at the same R, with sync-BN and without, and with sync-BN they equal
// one replica on the global batch; `train --backend xla --replicas 2` equals `--backend cpu
// --replicas 2` over 30 steps; stop at every step + resume equals the uninterrupted run.
// Skipped with a message when the engines are not installed (scripts/install-engines.sh).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "data/idx_fixture.h"
#include "engine_util.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "train/evaluate.h"
#include "train/signals.h"
#include "train/stepper.h"
#include "train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

using test_util::bn_spec;
using test_util::scaled_diff;
using test_util::uniform_noise;

struct StepRun {
  std::vector<double> losses;
  std::vector<Tensor> params, running;
};

// 8 SGD-momentum steps of bnsmall at global batch 32 on noise, as `replicas` replicas.
StepRun run_steps(exec::Backend& be, int replicas, bool sync) {
  SpecFile spec = bn_spec(1, 32, sync);
  const ParamTable t = build_param_table(spec.net);
  DataParallel dp;
  dp.replicas = replicas;
  Stepper st(spec.net, *spec.train, be, &t, dp);
  auto cpu = exec::make_backend("cpu");
  Evaluator ev(spec.net, 32, *cpu, &t);
  TrainState s = make_state(init_params(t, InitKind::he, 5), st.state_manifest(), ev.manifest());
  StepRun r;
  for (int64_t step = 1; step <= 8; ++step) {
    Tensor x = uniform_noise({32, 1, 28, 28}, 40 + static_cast<uint64_t>(step % 3));
    Tensor y(DType::kI32, {32});
    for (int64_t i = 0; i < 32; ++i) y.data<int32_t>()[i] = static_cast<int32_t>((i + step) % 10);
    r.losses.push_back(st.step(s, {x}, {y}, 0.05, step));
  }
  st.sync(s);
  r.params = s.params;
  r.running = s.running;
  return r;
}

void expect_close(const StepRun& a, const StepRun& b, double tol, const std::string& what) {
  ASSERT_EQ(a.losses.size(), b.losses.size());
  for (size_t k = 0; k < a.losses.size(); ++k)
    EXPECT_NEAR(a.losses[k], b.losses[k], tol * (1 + std::abs(b.losses[k])))
        << what << " step " << k + 1;
  EXPECT_LT(scaled_diff(a.params, b.params), tol) << what;
  EXPECT_LT(scaled_diff(a.running, b.running), tol) << what;
}

exec::BackendOptions four_devices() {
  exec::BackendOptions o;
  o.devices = 4;
  return o;
}

TEST(EnginesDataParallel, XlaReplicatedStepEqualsCpuReplicasAndOneGlobalBatch) {
  REQUIRE_ENGINE(xla, "xla", four_devices());
  auto cpu = exec::make_backend("cpu");
  const StepRun one = run_steps(*cpu, 1, true);
  for (bool sync : {true, false})
    for (int reps : {2, 4}) {
      const std::string what = fmt::format("R={} syncBN={}", reps, sync);
      const StepRun x = run_steps(*xla, reps, sync), c = run_steps(*cpu, reps, sync);
      expect_close(x, c, 1e-4, what + " xla vs cpu");
      if (sync) {
        expect_close(x, one, 1e-4, what + " xla vs 1 x B");
      } else {  // per-shard statistics: a different run than 1 x B (the test can tell them apart)
        EXPECT_GT(scaled_diff(x.running, one.running), 1e-4) << what;
      }
      // Not vacuous: the parameters moved from the init.
      const ParamTable t = build_param_table(bn_spec(1, 32, sync).net);
      EXPECT_GT(scaled_diff(x.params, init_params(t, InitKind::he, 5)), 1e-3) << what;
    }
}

const Splits& synthetic() {
  static Splits s = test_util::synthetic_fashion(test_util::tmpdir("engdp", "data"), 320, 60, 41);
  return s;
}

TrainOptions opts(const std::string& backend, int replicas, const std::string& run = "") {
  TrainOptions o;
  o.backend = backend;
  o.run_dir = run;
  o.dp.replicas = replicas;
  return o;
}

// 3 epochs of 10 steps at batch 32 (30 steps), sync-BN, 2 replicas.
TEST(EnginesDataParallel, TrainXlaReplicasEqualsCpuReplicas) {
  REQUIRE_ENGINE(xla, "xla");
  TrainResult c = run_training(bn_spec(3, 32, true), synthetic(), opts("cpu", 2));
  TrainResult x = run_training(bn_spec(3, 32, true), synthetic(), opts("xla", 2));
  ASSERT_EQ(x.steps, 30);
  ASSERT_EQ(c.steps, 30);
  for (size_t e = 0; e < 3; ++e) {
    EXPECT_NEAR(x.epochs[e].train_loss, c.epochs[e].train_loss, 1e-4 * c.epochs[e].train_loss);
    EXPECT_NEAR(x.epochs[e].val.loss, c.epochs[e].val.loss, 1e-4 * c.epochs[e].val.loss);
  }
  EXPECT_LT(scaled_diff(x.params, c.params), 1e-4);
  const ParamTable t = build_param_table(bn_spec(1, 32, true).net);
  EXPECT_GT(scaled_diff(x.params, init_params(t, InitKind::he, 3)), 1e-2);
}

TEST(EnginesDataParallel, XlaReplicasStopAtEveryStepAndResume) {
  REQUIRE_ENGINE(xla, "xla");
  // 320 = 3 x 96 + 32: 4 steps per epoch, the tail (32 = 2 x 16) through the host-fed module.
  TrainResult full = run_training(bn_spec(2, 96, true), synthetic(), opts("xla", 2));
  std::string run = test_util::tmpdir("engdp", "resume");
  TrainResult r;
  int calls = 0;
  do {
    request_stop(true);
    r = run_training(bn_spec(2, 96, true), synthetic(), opts("xla", 2, run));
    request_stop(false);
    ++calls;
    ASSERT_EQ(r.steps, calls);
  } while (r.interrupted && calls < 20);
  EXPECT_EQ(calls, 8);
  EXPECT_TRUE(test_util::same_bits(r.params, full.params));
}

}  // namespace
}  // namespace netspec::train
