// Large batches: gradient accumulation with data-parallel replicas. K micro-batches x R replica
// shards x b rows give the parameters and loss of one fused step on K·R·b rows (BN-free net, sgd
// and lamb, 1e-6); a batchSize that does not divide into the replicas and syncBN with
// accumulation across replicas are refused by name. BN running statistics under accumulation:
// with compensateBNMomentum each of the K micro-batch updates uses 1-(1-m)^(1/K), so K updates on
// the same micro-batch equal one update with m; switched off, they compound to 1-(1-m)^K.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "tests/error_of.h"
#include "train/data_parallel.h"
#include "train/stepper.h"
#include "train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

using test_util::uniform_noise;

const char* kMlp = R"({"name": "acc", "inputChannels": 6, "inputHeight": 0, "inputWidth": 0,
  "layers": [{"kind": "dense", "in": 6, "out": 8, "act": "relu"}, {"kind": "dense", "in": 8, "out": 5}]})";

Tensor labels(int64_t n) {
  std::vector<int32_t> lab(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) lab[i] = static_cast<int32_t>((i * 7 + 2) % 5);
  return Tensor::from<int32_t>(DType::kI32, {n}, lab);
}

// Max relative difference of two parameter lists (and how far the first moved from init).
double max_rel(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t e = 0; e < a[i].numel(); ++e) {
      const double x = a[i].as_double(e), y = b[i].as_double(e);
      worst = std::max(worst, std::abs(x - y) / (1 + std::abs(x)));
    }
  return worst;
}

TEST(AccumReplicas, KMicroBatchesTimesRReplicasEqualOneBigBatch) {
  const int64_t b = 4;  // rows per replica shard
  for (OptimizerKind opt : {OptimizerKind::sgd, OptimizerKind::lamb}) {
    for (auto [K, R] : {std::pair{2, 2}, std::pair{4, 2}, std::pair{2, 4}}) {
      SCOPED_TRACE(fmt::format("{} K={} R={}", enum_name(opt), K, R));
      SpecFile s = parse_spec(kMlp, "acc");
      const int64_t N = K * R * b;
      TrainConfig big;
      big.optimizer = opt;
      big.momentum = 0.9;
      big.weightDecay = 0.01;
      big.batchSize = static_cast<int>(N);
      TrainConfig acc = big;
      acc.batchSize = static_cast<int>(R * b);
      acc.gradAccumSteps = K;
      auto be = exec::make_backend("cpu");
      ParamTable t = build_param_table(s.net);
      DataParallel dp;
      dp.replicas = R;
      Stepper sb(s.net, big, *be, &t), sa(s.net, acc, *be, &t, dp);
      Evaluator ev(s.net, b, *be, &t);
      auto init = init_params(t, InitKind::he, 3);
      TrainState A = make_state(init, sb.state_manifest(), ev.manifest());
      TrainState B = make_state(init, sa.state_manifest(), ev.manifest());
      for (int step = 1; step <= 2; ++step) {
        Tensor x = uniform_noise({N, 6}, 10 + static_cast<uint64_t>(step)), y = labels(N);
        std::vector<Tensor> xs, ys;
        for (int k = 0; k < K; ++k) {
          xs.push_back(first_rows(shard_rows(x, K, k), R * b));
          ys.push_back(first_rows(shard_rows(y, K, k), R * b));
        }
        const double la = sb.step(A, {x}, {y}, 0.05, step);
        const double lb = sa.step(B, xs, ys, 0.05, step);
        EXPECT_NEAR(la, lb, 1e-6 * (1 + std::abs(la)));
      }
      sb.sync(A);
      EXPECT_LT(max_rel(A.params, B.params), 1e-6);
      EXPECT_LT(max_rel(A.opt, B.opt), 1e-6);
      EXPECT_GT(max_rel(A.params, init), 1e-3);  // the updates are far above the tolerance
    }
  }
}

TEST(AccumReplicas, RefusesSyncBNAcrossReplicasAndUnevenShards) {
  SpecFile s = parse_spec(kMlp, "acc");
  auto be = exec::make_backend("cpu");
  TrainConfig c;
  c.batchSize = 8;
  c.gradAccumSteps = 2;
  c.syncBN = true;
  DataParallel dp;
  dp.replicas = 2;
  std::string e = netspec::test_util::error_of([&] { Stepper st(s.net, c, *be, nullptr, dp); });
  EXPECT_NE(e.find("syncBN with gradAccumSteps > 1 and 2 replicas"), std::string::npos) << e;
  c.syncBN = false;
  c.batchSize = 9;
  e = netspec::test_util::error_of([&] { Stepper st(s.net, c, *be, nullptr, dp); });
  EXPECT_NE(e.find("batchSize 9 does not divide into 2 replicas"), std::string::npos) << e;
}

TEST(AccumReplicas, BNMomentumIsCompensatedPerMicroBatch) {
  const char* bn = R"({"name": "bn", "inputChannels": 2, "inputHeight": 4, "inputWidth": 4,
    "layers": [{"kind": "convBn", "ic": 2, "oc": 3, "k": 3}, {"kind": "globalAvgPool"},
    {"kind": "flatten"}, {"kind": "dense", "in": 3, "out": 5}]})";
  SpecFile s = parse_spec(bn, "bn");
  const int64_t b = 6;
  const int K = 3;
  TrainConfig one;
  one.optimizer = OptimizerKind::sgd;
  one.batchSize = static_cast<int>(b);
  one.bnMomentum = 0.1;
  auto be = exec::make_backend("cpu");
  ParamTable t = build_param_table(s.net);
  Evaluator ev(s.net, b, *be, &t);
  auto init = init_params(t, InitKind::he, 5);
  Tensor x = uniform_noise({b, 2, 4, 4}, 21), y = labels(b);
  // One update with m on x: the running stats every accumulation run should reach.
  Stepper s1(s.net, one, *be, &t);
  TrainState A = make_state(init, s1.state_manifest(), ev.manifest());
  std::vector<Tensor> r0;  // copies: the step updates the running stats in place
  for (const Tensor& r : A.running) r0.push_back(r.clone());
  s1.step(A, {x}, {y}, 0.0, 1);  // lr 0: params stay, so every micro-batch sees the same stats
  for (bool comp : {true, false}) {
    SCOPED_TRACE(comp ? "compensated" : "not compensated");
    TrainConfig acc = one;
    acc.gradAccumSteps = K;
    acc.compensateBNMomentum = comp;
    Stepper sk(s.net, acc, *be, &t);
    TrainState B = make_state(init, sk.state_manifest(), ev.manifest());
    sk.step(B, std::vector<Tensor>(K, x), std::vector<Tensor>(K, y), 0.0, 1);
    ASSERT_EQ(A.running.size(), B.running.size());
    // Not compensated: the new batch weighs 1-(1-m)^K instead of m.
    const double w = comp ? 0.1 : 1 - std::pow(0.9, K);
    for (size_t i = 0; i < A.running.size(); ++i)
      for (int64_t e = 0; e < A.running[i].numel(); ++e) {
        const double r = r0[i].as_double(e);
        const double batch = r + (A.running[i].as_double(e) - r) / 0.1;  // from A: r + m(batch - r)
        EXPECT_NEAR(B.running[i].as_double(e), r + w * (batch - r), 1e-5 * (1 + std::abs(batch)))
            << i << " " << e;
      }
  }
}

}  // namespace
}  // namespace netspec::train

namespace netspec::train {
namespace {

// The two BN biases a residual block sums (bn2 and the downsample's) have equal gradients, and
// the executable may return one buffer for both: accumulating K copies of one micro-batch must
// still give that micro-batch's gradient (it double-added into the shared buffer before).
TEST(AccumReplicas, EqualGradientOutputsAreAccumulatedOnce) {
  const char* res = R"({"name": "res", "inputChannels": 3, "inputHeight": 8, "inputWidth": 8,
    "layers": [{"kind": "convBn", "ic": 3, "oc": 4, "k": 3},
    {"kind": "residualBlock", "ic": 4, "oc": 8, "nBlocks": 1, "firstStride": 2},
    {"kind": "globalAvgPool"}, {"kind": "flatten"}, {"kind": "dense", "in": 8, "out": 5}]})";
  SpecFile s = parse_spec(res, "res");
  const int64_t b = 4;
  TrainConfig one;
  one.optimizer = OptimizerKind::sgd;
  one.momentum = 0;
  one.batchSize = static_cast<int>(b);
  TrainConfig acc = one;
  acc.gradAccumSteps = 3;
  auto be = exec::make_backend("cpu");
  ParamTable t = build_param_table(s.net);
  Evaluator ev(s.net, b, *be, &t);
  auto init = init_params(t, InitKind::he, 7);
  Tensor x = uniform_noise({b, 3, 8, 8}, 31), y = labels(b);
  Stepper s1(s.net, one, *be, &t), sk(s.net, acc, *be, &t);
  TrainState A = make_state(init, s1.state_manifest(), ev.manifest());
  TrainState B = make_state(init, sk.state_manifest(), ev.manifest());
  s1.step(A, {x}, {y}, 0.1, 1);
  sk.step(B, std::vector<Tensor>(3, x), std::vector<Tensor>(3, y), 0.1, 1);
  s1.sync(A);
  EXPECT_LT(max_rel(A.params, B.params), 1e-6);
  EXPECT_GT(max_rel(A.params, init), 1e-3);
}

}  // namespace
}  // namespace netspec::train
