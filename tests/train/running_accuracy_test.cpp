// The progress bar's running accuracy: the train step's "correct" output (and, under gradient
// accumulation, the host count from the forward's logits) equals Σ [argmax = label] recomputed
// from the eval module over the same batch with the parameters before the update, for the fused
// step, a short tail batch, gradient accumulation, two data-parallel replicas and a per-pixel
// segmentation loss (pixels counted); soft labels (mixup / cutmix) count nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "train/data_parallel.h"
#include "train/evaluate.h"
#include "train/stepper.h"
#include "train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

using test_util::uniform_noise;

// 6 features -> 5 classes; no BN or dropout, so the train step's forward is the eval module's.
const char* kMlp = R"({"name": "runacc", "inputChannels": 6, "inputHeight": 0, "inputWidth": 0,
  "layers": [{"kind": "dense", "in": 6, "out": 12, "act": "relu"},
             {"kind": "dense", "in": 12, "out": 5}]})";

// A learnable rule: the label is the argmax of a fixed linear map of x (5 classes).
Tensor rule_labels(const Tensor& x) {
  const int64_t n = x.shape()[0];
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* r = x.data<float>() + i * 6;
    double best = -1e30;
    for (int c = 0; c < 5; ++c) {
      const double s = r[c] - 0.5 * r[(c + 1) % 6] + 0.3 * r[5];
      if (s > best) best = s, y[size_t(i)] = c;
    }
  }
  return Tensor::from<int32_t>(DType::kI32, {n}, y);
}

// `count` batches of `n` noise rows labelled by the rule, seeds from `seed` on.
std::vector<std::pair<Tensor, Tensor>> rule_batches(int count, int64_t n, uint64_t seed) {
  std::vector<std::pair<Tensor, Tensor>> v;
  for (int k = 0; k < count; ++k) {
    Tensor x = uniform_noise({n, 6}, seed + static_cast<uint64_t>(k));
    v.emplace_back(x, rule_labels(x));
  }
  return v;
}

TEST(RunningAccuracy, HostCountTakesTheFirstMaximumAndRefusesNan) {
  // Row 0: argmax 2; row 1: classes 0 and 1 tie at 3 -> 0 (as torch.argmax); row 2: a NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor z =
      Tensor::from<float>(DType::kF32, {3, 3}, {0.1f, 0.2f, 0.9f, 3.f, 3.f, 1.f, 5.f, nan, 0.f});
  EXPECT_EQ(count_correct(z, Tensor::from<int32_t>(DType::kI32, {3}, {2, 0, 0})), 2);
  EXPECT_EQ(count_correct(z, Tensor::from<int32_t>(DType::kI32, {3}, {2, 1, 0})), 1);
  // Per pixel: logits [1, 2, 1, 2] (2 classes over 2 pixels), labels [1, 1, 2].
  const Tensor p = Tensor::from<float>(DType::kF32, {1, 2, 1, 2}, {1.f, 0.f, 0.f, 2.f});
  EXPECT_EQ(count_correct(p, Tensor::from<int32_t>(DType::kI32, {1, 1, 2}, {0, 1})), 2);
  EXPECT_EQ(count_correct(p, Tensor::from<int32_t>(DType::kI32, {1, 1, 2}, {1, 1})), 1);
}

// Steps a Stepper on `batches`, each time checking its count against the eval module's logits
// of that batch under the parameters before the update; returns the counts.
std::vector<int64_t> check_counts(const SpecFile& s, const TrainConfig& c,
                                  const std::vector<std::pair<Tensor, Tensor>>& batches,
                                  const DataParallel& dp = {}) {
  auto be = exec::make_backend("cpu");
  const ParamTable t = build_param_table(s.net);
  Stepper st(s.net, c, *be, &t, dp);
  Evaluator full(s.net, c.batchSize, *be, &t);
  TrainState state =
      make_state(init_params(t, InitKind::he, 5), st.state_manifest(), full.manifest());
  std::vector<int64_t> got;
  int64_t step = 1;
  for (const auto& [x, y] : batches) {
    st.sync(state);
    const int64_t n = x.shape()[0];
    const Evaluator ev(s.net, n, *be, &t);
    const int64_t want = count_correct(ev.logits(state.params, state.running, x), y);
    std::vector<Tensor> xs{x}, ys{y};
    if (c.gradAccumSteps > 1) {  // the update's two micro-batches: the halves of the batch
      xs = {shard_rows(x, 2, 0), shard_rows(x, 2, 1)};
      ys = {shard_rows(y, 2, 0), shard_rows(y, 2, 1)};
    }
    st.step(state, xs, ys, c.learningRate, step++);
    EXPECT_EQ(st.last_correct(), want) << "step " << step - 1;
    EXPECT_EQ(st.last_counted(), y.numel()) << "step " << step - 1;
    got.push_back(st.last_correct());
  }
  return got;
}

TEST(RunningAccuracy, FusedStepCountEqualsTheEvalModuleBeforeTheUpdate) {
  const SpecFile s = parse_spec(kMlp, "runacc");
  TrainConfig c;
  c.optimizer = OptimizerKind::sgd;
  c.momentum = 0.9;
  c.learningRate = 0.3;
  c.batchSize = 32;
  std::vector<std::pair<Tensor, Tensor>> batches = rule_batches(12, 32, 100);
  Tensor tail = uniform_noise({20, 6}, 99);  // a short last batch: its own module at batch 20
  batches.emplace_back(tail, rule_labels(tail));
  const std::vector<int64_t> got = check_counts(s, c, batches);
  // Training on the rule: the counts move (the check is not of a constant) and end well above
  // chance (1/5).
  EXPECT_GE(std::set<int64_t>(got.begin(), got.end()).size(), 3u);
  EXPECT_GT(got[11], 32 / 5 + 4) << "after 11 updates";
}

TEST(RunningAccuracy, AccumulationAndReplicasCountTheWholeUpdate) {
  const SpecFile s = parse_spec(kMlp, "runacc");
  TrainConfig c;
  c.optimizer = OptimizerKind::adam;
  c.learningRate = 0.02;
  c.batchSize = 16;
  const std::vector<std::pair<Tensor, Tensor>> batches = rule_batches(5, 16, 200);
  // Two data-parallel replica threads: the all_reduce'd count of both shards.
  check_counts(s, c, batches, DataParallel{2});
  // Accumulation: 2 micro-batches of 8 per update (forward modules, counted on the host).
  TrainConfig acc = c;
  acc.batchSize = 8;
  acc.gradAccumSteps = 2;
  check_counts(s, acc, batches);
  // Both at once: 2 micro-batches, each cut into 2 replica shards.
  check_counts(s, acc, batches, DataParallel{2});
}

// K updates per backend call (the K-step module of IREE runs): each update's count, as the
// one-step path counts it on the same batches.
TEST(RunningAccuracy, KStepsPerCallCountEveryUpdate) {
  const SpecFile s = parse_spec(kMlp, "runacc");
  TrainConfig c;
  c.optimizer = OptimizerKind::sgd;
  c.learningRate = 0.3;
  c.batchSize = 16;
  const std::vector<std::pair<Tensor, Tensor>> batches = rule_batches(3, 16, 400);
  const std::vector<int64_t> one = check_counts(s, c, batches);
  auto be = exec::make_backend("cpu");
  const ParamTable t = build_param_table(s.net);
  Stepper sk(s.net, c, *be, &t, {}, 3);
  Evaluator ev(s.net, 16, *be, &t);
  TrainState state =
      make_state(init_params(t, InitKind::he, 5), sk.state_manifest(), ev.manifest());
  std::vector<Tensor> xs, ys;
  for (const auto& [x, y] : batches) xs.push_back(x), ys.push_back(y);
  sk.steps(state, xs, ys, {0.3, 0.3, 0.3}, 1);
  for (size_t j = 0; j < 3; ++j) {
    EXPECT_EQ(sk.last_correct(j), one[j]) << "update " << j;
    EXPECT_EQ(sk.last_counted(j), 16) << "update " << j;
  }
}

TEST(RunningAccuracy, PerPixelLossCountsPixels) {
  const SpecFile s = parse_spec(R"({"name": "pix", "inputChannels": 3, "inputHeight": 6,
    "inputWidth": 6, "layers": [{"kind": "conv2d", "ic": 3, "oc": 6, "k": 3, "act": "relu"},
    {"kind": "conv2d", "ic": 6, "oc": 3, "k": 1, "act": "identity"}]})",
                                "pix");
  TrainConfig c;
  c.lossKind = LossKind::perPixelCE;
  c.optimizer = OptimizerKind::adam;
  c.learningRate = 0.03;
  c.batchSize = 4;
  std::vector<std::pair<Tensor, Tensor>> batches;
  for (uint64_t k = 0; k < 4; ++k) {
    Tensor x = uniform_noise({4, 3, 6, 6}, 300 + k);
    std::vector<int32_t> y(4 * 36);
    for (int64_t i = 0; i < 4; ++i)  // the class: which channel is largest at the pixel
      for (int64_t p = 0; p < 36; ++p) {
        const float* v = x.data<float>() + i * 108 + p;
        y[size_t(i * 36 + p)] = v[0] > v[36] ? (v[0] > v[72] ? 0 : 2) : (v[36] > v[72] ? 1 : 2);
      }
    batches.emplace_back(x, Tensor::from<int32_t>(DType::kI32, {4, 6, 6}, y));
  }
  const std::vector<int64_t> got = check_counts(s, c, batches);
  for (int64_t g : got) EXPECT_GT(g, 0);
}

TEST(RunningAccuracy, SoftLabelsCountNothing) {
  const SpecFile s = parse_spec(kMlp, "runacc");
  auto be = exec::make_backend("cpu");
  const ParamTable t = build_param_table(s.net);
  TrainConfig c;
  c.lossKind = LossKind::softLabelCE;  // what mixup / cutmix train with (timm: no accuracy)
  c.batchSize = 4;
  Stepper st(s.net, c, *be, &t);
  for (const auto& o : st.state_manifest().outputs) EXPECT_NE(o.name, "correct");
  Evaluator ev(s.net, 4, *be, &t);
  TrainState state =
      make_state(init_params(t, InitKind::he, 1), st.state_manifest(), ev.manifest());
  Tensor y = uniform_noise({4, 5}, 7);
  for (int64_t e = 0; e < y.numel(); ++e) y.data<float>()[e] = 0.2f;
  st.step(state, {uniform_noise({4, 6}, 8)}, {y}, 0.1, 1);
  EXPECT_EQ(st.last_correct(), -1);
}

}  // namespace
}  // namespace netspec::train
