// The tail batch (PyTorch's drop_last=False): an epoch of N samples at batch B is ceil(N/B)
// batches, the last one of N % B samples run on modules emitted at that batch. Checked here: the
// tail module equals one emitted natively at that batch (BN running stats, dropPath / dropout
// masks included), gradient accumulation with a short last update equals one batch of its
// samples, an epoch counts every sample once, and stop + resume at every step of a run with a
// tail gives the uninterrupted run bit for bit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/safetensors.h"
#include "data/data_test_util.h"
#include "data/idx_fixture.h"
#include "data/loader.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "tests/train/train_test_util.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/signals.h"
#include "train/stepper.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;

std::string tmpdir(const std::string& name) { return test_util::tmpdir("tail", name); }

const char* kNet = test_util::kSmallMlp;

// 320 training samples: batch 96 leaves a tail of 32.
const Splits& synthetic() {
  static Splits s = test_util::synthetic_fashion(tmpdir("data"), 320, 60, 21);
  return s;
}

SpecFile small(int epochs, int batch, int accum = 1) {
  SpecFile s = parse_spec(kNet);
  TrainConfig c;
  c.dataset = DatasetKind::fashionMnist;
  c.epochs = epochs;
  c.batchSize = batch;
  c.gradAccumSteps = accum;
  c.learningRate = 1e-3;
  c.seed = 5;
  s.train = c;
  return s;
}

using test_util::same_bits;

double max_diff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double w = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t e = 0; e < a[i].numel(); ++e)
      w = std::max(w, std::abs(static_cast<double>(a[i].data<float>()[e]) - b[i].data<float>()[e]));
  return w;
}

// Rows [r0, r1) of t (dim 0), as a new tensor.
Tensor rows(const Tensor& t, int64_t r0, int64_t r1) {
  Shape s = t.shape();
  const size_t row = t.nbytes() / static_cast<size_t>(s[0]);
  s[0] = r1 - r0;
  Tensor o(t.dtype(), s);
  std::memcpy(o.raw(), static_cast<const uint8_t*>(t.raw()) + r0 * row, o.nbytes());
  return o;
}

// Tensors share storage on copy and BN running stats are updated in place: copy the bytes.
std::vector<Tensor> deep(const std::vector<Tensor>& v) {
  std::vector<Tensor> o;
  for (const Tensor& t : v) o.push_back(t.clone());
  return o;
}

TrainState deep(const TrainState& s) {
  TrainState o = s;
  o.params = deep(s.params);
  o.opt = deep(s.opt);
  o.running = deep(s.running);
  return o;
}

Tensor noise(const Shape& s, uint64_t seed) { return test_util::uniform_noise(s, seed); }

TEST(TailBatch, EpochTrainsEverySampleOnceInCeilSteps) {
  // 320 = 3·96 + 32: 4 updates per epoch, 320 samples each.
  std::string run = tmpdir("count");
  TrainResult r = run_training(small(2, 96), synthetic(), {run});
  ASSERT_EQ(r.epochs.size(), 2u);
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(r.epochs[e].samples, 320);
    EXPECT_EQ(r.epochs[e].step, 4 * (e + 1));
  }
  EXPECT_EQ(r.steps, 8);
  std::ifstream f(run + "/metrics.jsonl");
  std::string l1, l2;
  std::getline(f, l1);
  std::getline(f, l2);
  EXPECT_EQ(nlohmann::json::parse(l2)["step"], 8);
  // Accumulating 3 batches per update: the 4 batches make 2 updates, the second one batch of 32.
  TrainResult a = run_training(small(1, 96, 3), synthetic(), {});
  EXPECT_EQ(a.steps, 2);
  EXPECT_EQ(a.epochs.at(0).samples, 320);

  // A batch larger than the set is one tail batch of all 320 samples: the same update as
  // batch 320 (same shuffle, one step per epoch), bit for bit.
  TrainResult big = run_training(small(2, 512), synthetic(), {});
  TrainResult exact = run_training(small(2, 320), synthetic(), {});
  EXPECT_EQ(big.steps, 2);
  EXPECT_EQ(big.epochs[1].samples, 320);
  EXPECT_TRUE(same_bits(big.params, exact.params));
  EXPECT_EQ(big.epochs[1].train_loss, exact.epochs[1].train_loss);
  // ... and different from dropping them (batch 320 is not 256 + nothing).
  TrainResult less = run_training(small(2, 256), synthetic(), {});
  EXPECT_EQ(less.steps, 4);
  EXPECT_FALSE(same_bits(less.params, exact.params));
}

// BN (convBn) with dropPath (a convNextStage) and dropout: a tail step on the full-batch stepper is
// the step of a stepper built at the tail's batch, bit for bit (params, Adam state, running
// stats: the unbiased n/(n-1) uses the tail's count; masks drawn at the tail's shape).
TEST(TailBatch, TailModuleEqualsTheModuleEmittedAtThatBatch) {
  NetSpec net = NetBuilder("bnnet")
                    .input(2, 4, 4)
                    .add(ConvBn{2, 4, 3, 1})
                    .add(ConvNextStage{4, 2})
                    .add(GlobalAvgPool{})
                    .add(Flatten{})
                    .add(Dense{4, 3})
                    .build();
  TrainConfig c;
  c.batchSize = 8;
  c.seed = 3;
  c.optimizer = OptimizerKind::adam;
  c.learningRate = 1e-2;
  c.dropPath = 0.2;
  c.dropout = 0.3;
  TrainConfig c5 = c;
  c5.batchSize = 5;
  auto be = exec::make_backend("cpu");
  Stepper full(net, c, *be), full2(net, c, *be), native(net, c5, *be);
  Evaluator ev(net, 8, *be);
  const ParamTable t = build_param_table(net);
  TrainState a = make_state(init_params(t, InitKind::he, 9), full.state_manifest(), ev.manifest());
  const Tensor x8 = noise({8, 2, 4, 4}, 1), x5 = noise({5, 2, 4, 4}, 2);
  const Tensor y8 = Tensor::from<int32_t>(DType::kI32, {8}, {0, 1, 2, 0, 1, 2, 0, 1});
  const Tensor y5 = Tensor::from<int32_t>(DType::kI32, {5}, {2, 1, 0, 2, 1});
  full.step(a, {x8}, {y8}, 1e-2, 1);
  full.sync(a);
  TrainState b = deep(a);
  const std::vector<Tensor> running_before = deep(a.running);
  const double la = full.step(a, {x5}, {y5}, 1e-2, 2);
  const double lb = native.step(b, {x5}, {y5}, 1e-2, 2);
  native.sync(b);  // batch 5 is native's full batch: its state is in the session
  EXPECT_EQ(la, lb);
  EXPECT_TRUE(std::isfinite(la));
  EXPECT_TRUE(same_bits(a.params, b.params));
  EXPECT_TRUE(same_bits(a.opt, b.opt));
  EXPECT_TRUE(same_bits(a.running, b.running));
  EXPECT_FALSE(same_bits(a.running, running_before));  // the tail's BN batch stats were taken
  EXPECT_EQ(full.compiled_batches(), (std::vector<int64_t>{5, 8}));
  EXPECT_EQ(full2.compiled_batches(), (std::vector<int64_t>{8}));  // lazily: only when used
  std::string e = test::error_of([&] { full.step(a, {noise({9, 2, 4, 4}, 3)}, {y8}, 1e-2, 3); });
  EXPECT_NE(e.find("micro-batch of 9 samples (expected 1..8"), std::string::npos) << e;
}

TEST(TailBatch, ManifestCheckNamesTheDifference) {
  emit::Manifest f, t;
  f.module = t.module = "train_step";
  f.inputs = {{"w", {4, 3}, DType::kF32, "param"}, {"x", {8, 3}, DType::kF32, "input"}};
  t.inputs = {{"w", {4, 3}, DType::kF32, "param"}, {"x", {5, 3}, DType::kF32, "input"}};
  check_tail_manifest(f, t, 8, 5);  // only the batch dim of the input differs: accepted
  t.inputs[0].shape = {4, 2};
  std::string e = test::error_of([&] { check_tail_manifest(f, t, 8, 5); });
  EXPECT_NE(e.find("train_step at batch 5: input 0 is 'w' param f32 4x2 (expected 'w' param f32 "
                   "4x3 from batch 8)"),
            std::string::npos)
      << e;
  t.inputs[0].shape = {4, 3};
  t.inputs.pop_back();
  e = test::error_of([&] { check_tail_manifest(f, t, 8, 5); });
  EXPECT_NE(e.find("has 1 inputs (expected 2"), std::string::npos) << e;
}

// gradAccumSteps = 2 at batch 32: an update of micro-batches 32 + 16 (or 16 alone) is the mean
// gradient over its 48 (16) samples, i.e. one batch of 48 (16), within f32 rounding.
TEST(TailBatch, GradAccumShortLastUpdateEqualsOneBatchOfItsSamples) {
  const Splits& d = synthetic();
  data::Loader in_order(d.train, 48, false, 0);
  in_order.start_epoch(0);
  Tensor x48, y48;
  in_order.batch(0, x48, y48);
  SpecFile s = small(1, 48);
  s.train->learningRate = 0.05;
  s.train->labelSmoothing = 0.1;
  auto be = exec::make_backend("cpu");
  const ParamTable t = build_param_table(s.net);
  auto init = init_params(t, InitKind::he, 1);
  for (OptimizerKind opt : {OptimizerKind::sgd, OptimizerKind::adam})
    for (int64_t n : {48, 16}) {
      TrainConfig big = *s.train, acc = big;
      big.optimizer = acc.optimizer = opt;
      big.batchSize = static_cast<int>(n);
      acc.batchSize = 32;
      acc.gradAccumSteps = 2;
      Stepper sb(s.net, big, *be), sa(s.net, acc, *be);
      Evaluator ev(s.net, 32, *be);
      TrainState a = make_state(init, sb.state_manifest(), ev.manifest());
      TrainState b = make_state(init, sa.state_manifest(), ev.manifest());
      std::vector<Tensor> xs, ys;
      for (int64_t r = 0; r < n; r += 32) {
        xs.push_back(rows(x48, r, std::min<int64_t>(r + 32, n)));
        ys.push_back(rows(y48, r, std::min<int64_t>(r + 32, n)));
      }
      ASSERT_EQ(xs.size(), n == 48 ? 2u : 1u);
      for (int64_t step = 1; step <= 2; ++step) {
        const double la = sb.step(a, {rows(x48, 0, n)}, {rows(y48, 0, n)}, 0.05, step);
        const double lb = sa.step(b, xs, ys, 0.05, step);
        EXPECT_NEAR(la, lb, 1e-5) << enum_name(opt) << " " << n;
      }
      sb.sync(a);
      // Adam divides by √v̂: where a gradient is ~0 its f32 rounding shows (as in loop_test).
      const double tol = opt == OptimizerKind::sgd ? 1e-6 : 1e-4;
      EXPECT_LT(max_diff(a.params, b.params), tol) << enum_name(opt) << " " << n;
      EXPECT_GT(max_diff(a.params, init), 100 * tol) << enum_name(opt) << " " << n;
    }
}

// SIGINT-style stop after EVERY update of a 2-epoch run with a tail (the stop before the tail,
// the tail itself at an epoch's end), resumed each time: the same parameters, losses and
// metrics as the run that was never stopped. Fused step and accumulation (k = 3: a short last
// update of one 32-sample batch).
TEST(TailBatch, StopAtEveryStepAndResumeMatchesUninterrupted) {
  for (int accum : {1, 3}) {
    TrainResult full = run_training(small(2, 96, accum), synthetic(), {});
    const int64_t steps = accum == 1 ? 8 : 4;
    ASSERT_EQ(full.steps, steps);
    std::string run = tmpdir("stop" + std::to_string(accum));
    TrainResult r;
    std::vector<EpochMetrics> epochs;
    int calls = 0;
    do {
      request_stop(true);  // the loop finishes one update, saves `last` and returns
      std::ostringstream log;
      r = run_training(small(2, 96, accum), synthetic(), {run, "cpu", &log});
      request_stop(false);
      for (const auto& m : r.epochs) epochs.push_back(m);
      ++calls;
      ASSERT_EQ(r.steps, calls) << log.str();
    } while (r.interrupted && calls < 20);
    EXPECT_FALSE(r.interrupted);
    EXPECT_EQ(calls, steps);
    EXPECT_TRUE(same_bits(r.params, full.params)) << "accum " << accum;
    ASSERT_EQ(epochs.size(), 2u);
    for (size_t e = 0; e < 2; ++e) {
      EXPECT_EQ(epochs[e].train_loss, full.epochs[e].train_loss) << e;
      EXPECT_EQ(epochs[e].samples, 320);
      EXPECT_EQ(epochs[e].val.loss, full.epochs[e].val.loss) << e;
    }
  }
}

// A mid-epoch checkpoint of format 1 (before the tail was trained: loss_sum = Σ per-update mean
// losses) resumes with the same epoch train loss as an uninterrupted run (the trainer rescales
// it); an unknown format is refused by name.
TEST(TailBatch, FormatOneMidEpochCheckpointResumesWithTheRightTrainLoss) {
  TrainResult full = run_training(small(1, 96, 1), synthetic(), {});
  std::string run = tmpdir("format1");
  request_stop(true);
  TrainResult first = run_training(small(1, 96, 1), synthetic(), {run, "cpu", nullptr});
  request_stop(false);
  ASSERT_TRUE(first.interrupted);
  const std::string last = run + "/last.safetensors";
  SafeTensors st = read_safetensors(last);
  ASSERT_EQ(st.metadata.at("format"), "pt");  // format 3: netspec's own under netspec.format
  ASSERT_EQ(st.metadata.at("netspec.format"), "netspec-checkpoint-3");
  ASSERT_EQ(st.metadata.at("batch_in_epoch"), "1");
  const double v2 = std::strtod(st.metadata.at("loss_sum").c_str(), nullptr);
  st.metadata["format"] = "netspec-checkpoint-1";
  st.metadata["loss_sum"] = fmt::format("{:a}", v2 / 96);  // one full update of 96 samples
  write_safetensors(last, st);
  TrainResult rest = run_training(small(1, 96, 1), synthetic(), {run, "cpu", nullptr});
  ASSERT_EQ(rest.epochs.size(), 1u);
  EXPECT_NEAR(rest.epochs[0].train_loss, full.epochs[0].train_loss,
              1e-12 * std::abs(full.epochs[0].train_loss));
  EXPECT_TRUE(same_bits(rest.params, full.params));

  st.metadata["format"] = "netspec-checkpoint-9";
  write_safetensors(last, st);
  try {
    run_training(small(1, 96, 1), synthetic(), {run, "cpu", nullptr});
    FAIL() << "expected the format to be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("metadata 'format' is 'netspec-checkpoint-9'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace netspec::train
