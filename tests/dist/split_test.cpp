// Work split across ranks (threads of this test playing processes, Gloo on 127.0.0.1):
// evaluation where each rank scores every ranks-th batch equals single-process evaluation bit
// for bit (loss, top-1, top-5, count), with a tail batch and with more ranks than some ranks have
// batches; and L replica threads in each of P processes (TwoLevelComm) train the same
// parameters as P·L replica threads of one process; the DDPM noise MSE, TTA and the weight
// averages split the same way, and detection gathers every rank's boxes.
#include <gtest/gtest.h>

#include <cmath>
#include <future>

#include "data/datasets.h"
#include "data/idx_fixture.h"
#include "data/synth_det.h"
#include "dist/process_group.h"
#include "dist/tcp_store.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/spec_json.h"
#include "tasks/detection/det_train.h"
#include "tasks/diffusion/ddpm.h"
#include "train/evaluate.h"
#include "train/stepper.h"
#include "train/train_test_util.h"
#include "train/trainer.h"
#include "train/tta.h"

namespace netspec::train {
namespace {

using test_util::kBnNet;
using test_util::scaled_diff;

dist::DistEnv env_for(int rank, int world, int port) {
  dist::DistEnv e;
  e.rank = rank;
  e.world = world;
  e.master_port = port;
  e.timeout = std::chrono::milliseconds(30000);
  return e;
}

// 150 test samples: batch 32 gives 4 full batches and a tail of 22.
const data::Dataset& test_set() {
  static Splits s = [] {
    std::string d = test_util::tmpdir("split", "data");
    test::write_synthetic_split(d, "train", 64, 51);
    test::write_synthetic_split(d, "t10k", 150, 52);
    return load_dataset(DatasetKind::fashionMnist, d, 0);
  }();
  return s.test;
}

TEST(SplitEvaluation, RanksTogetherEqualOneProcessBitForBit) {
  const NetSpec net = parse_spec(kBnNet).net;
  const ParamTable t = build_param_table(net);
  const std::vector<Tensor> params = init_params(t, InitKind::he, 9);
  std::vector<Tensor> running;  // mean 0.1·c, var 1 + 0.2·c per channel: not the identity
  for (size_t k = 0; k < 4; ++k) {
    Tensor r(DType::kF32, {4});
    for (int64_t c = 0; c < 4; ++c)
      r.data<float>()[c] = static_cast<float>(k % 2 ? 1 + 0.2 * c : 0.1 * c);
    running.push_back(r);
  }
  auto cpu = exec::make_backend("cpu");
  const EvalMetrics one = Evaluator(net, 32, *cpu, &t).run(params, running, test_set());
  ASSERT_EQ(one.count, 150);
  EXPECT_GT(one.loss, 0.5);
  for (int world : {2, 3, 7}) {  // 7 ranks: two of them score no batch
    const int port = dist::free_loopback_port();
    std::vector<std::future<EvalMetrics>> ranks;
    for (int r = 0; r < world; ++r)
      ranks.push_back(std::async(std::launch::async, [&, r] {
        auto g = dist::ProcessGroup::join(env_for(r, world, port), "{}");
        auto be = exec::make_backend("cpu");
        return Evaluator(net, 32, *be, &t).run(params, running, test_set(), {}, &g->comm(), r);
      }));
    for (int r = 0; r < world; ++r) {
      const EvalMetrics m = ranks[static_cast<size_t>(r)].get();
      EXPECT_EQ(m.loss, one.loss) << world << " ranks, rank " << r;  // exact, not near
      EXPECT_EQ(m.top1, one.top1);
      EXPECT_EQ(m.top5, one.top5);
      EXPECT_EQ(m.count, one.count);
      EXPECT_TRUE(m.has_top5);
    }
  }
}

// Segmentation: a 1->3 conv per-pixel classifier on 8x8 maps, 50 samples at batch 16 (tail of 2):
// the split evaluation (confusion counts + per-batch loss sums reduced) equals one process's
// loss, pixel accuracy, mIoU, Dice and per-class IoU bit for bit.
TEST(SplitEvaluation, SegmentationRanksTogetherEqualOneProcessBitForBit) {
  const NetSpec net = parse_spec(R"({"name": "segsmall", "inputChannels": 1, "inputHeight": 8,
    "inputWidth": 8, "layers": [{"kind": "conv2d", "ic": 1, "oc": 3, "k": 3}]})")
                          .net;
  const ParamTable t = build_param_table(net);
  const std::vector<Tensor> params = init_params(t, InitKind::he, 4);
  Tensor x = test_util::uniform_noise({50, 1, 8, 8}, 17);
  std::vector<int32_t> y(50 * 64);
  for (size_t i = 0; i < y.size(); ++i)  // classes by brightness: < -0.3, < 0.3, else
    y[i] = x.data<float>()[i] < -0.3f ? 0 : x.data<float>()[i] < 0.3f ? 1 : 2;
  const data::Dataset ds(x, Tensor::from<int32_t>(DType::kI32, {50, 8, 8}, y));
  auto cpu = exec::make_backend("cpu");
  const EvalMetrics one = Evaluator(net, 16, *cpu, &t).run(params, {}, ds);
  ASSERT_TRUE(one.seg);
  ASSERT_EQ(one.count, 50 * 64);
  EXPECT_GT(one.miou, 0.0);
  for (int world : {2, 3, 7}) {  // 7 ranks: three of them score no batch
    const int port = dist::free_loopback_port();
    std::vector<std::future<EvalMetrics>> ranks;
    std::vector<int> rounds(static_cast<size_t>(world), 0);  // stop is asked between rounds
    for (int r = 0; r < world; ++r)
      ranks.push_back(std::async(std::launch::async, [&, r] {
        auto g = dist::ProcessGroup::join(env_for(r, world, port), "{}");
        auto be = exec::make_backend("cpu");
        auto count = [&rounds, r] { return ++rounds[static_cast<size_t>(r)], false; };
        return Evaluator(net, 16, *be, &t).run(params, {}, ds, count, &g->comm(), r);
      }));
    for (int r = 0; r < world; ++r) {
      const EvalMetrics m = ranks[static_cast<size_t>(r)].get();
      // 4 batches split into ceil(4 / world) rounds (one process would run 4).
      EXPECT_EQ(rounds[static_cast<size_t>(r)], (4 + world - 1) / world - 1) << world;
      EXPECT_EQ(m.loss, one.loss) << world << " ranks, rank " << r;  // exact, not near
      EXPECT_EQ(m.top1, one.top1);
      EXPECT_EQ(m.miou, one.miou);
      EXPECT_EQ(m.dice, one.dice);
      EXPECT_EQ(m.count, one.count);
      for (size_t k = 0; k < 3; ++k) EXPECT_EQ(m.iou.at(k), one.iou.at(k)) << "class " << k;
    }
  }
}

// A stop asked on one rank only (SIGINT reaches one process) ends the split evaluation on every
// rank after the same round, instead of waiting for the whole evaluation or leaving the others
// blocked in the sums.
TEST(SplitEvaluation, AStopOnOneRankStopsEveryRankAtTheSameRound) {
  const NetSpec net = parse_spec(kBnNet).net;
  const ParamTable t = build_param_table(net);
  const std::vector<Tensor> params = init_params(t, InitKind::he, 9);
  std::vector<Tensor> running;
  for (size_t k = 0; k < 4; ++k) {  // mean 0, var 1: the identity
    const float v = k % 2 ? 1.f : 0.f;
    running.push_back(Tensor::from<float>(DType::kF32, {4}, {v, v, v, v}));
  }
  const int world = 3, port = dist::free_loopback_port();
  std::vector<std::future<EvalMetrics>> ranks;
  for (int r = 0; r < world; ++r)
    ranks.push_back(std::async(std::launch::async, [&, r] {
      auto g = dist::ProcessGroup::join(env_for(r, world, port), "{}");
      auto be = exec::make_backend("cpu");
      std::function<bool()> stop = [r] { return r == 1; };
      return Evaluator(net, 32, *be, &t).run(params, running, test_set(), stop, &g->comm(), r);
    }));
  for (int r = 0; r < world; ++r) {
    const EvalMetrics m = ranks[static_cast<size_t>(r)].get();
    EXPECT_TRUE(m.interrupted) << "rank " << r;
    EXPECT_EQ(m.count, 3 * 32) << "rank " << r << ": round 0 = batches 0, 1, 2";
  }
}

// 6 sync-BN SGD steps at global batch 32 on noise through the Stepper, as dp describes.
std::vector<Tensor> train_steps(const DataParallel& dp, bool sync) {
  SpecFile spec = parse_spec(kBnNet);
  TrainConfig c;
  c.batchSize = 32;
  c.optimizer = OptimizerKind::sgd;
  c.momentum = 0.9;
  c.syncBN = sync;
  const ParamTable t = build_param_table(spec.net);
  auto be = exec::make_backend("cpu");
  Stepper st(spec.net, c, *be, &t, dp);
  Evaluator ev(spec.net, 32, *be, &t);
  TrainState s = make_state(init_params(t, InitKind::he, 5), st.state_manifest(), ev.manifest());
  for (int64_t step = 1; step <= 6; ++step) {
    Tensor x = test_util::uniform_noise({32, 1, 28, 28}, 60 + static_cast<uint64_t>(step % 3));
    Tensor y(DType::kI32, {32});
    for (int64_t i = 0; i < 32; ++i) y.data<int32_t>()[i] = static_cast<int32_t>((i + step) % 10);
    st.step(s, {x}, {y}, 0.05, step);
  }
  st.sync(s);
  std::vector<Tensor> out = s.params;
  for (const Tensor& r : s.running) out.push_back(r);
  return out;
}

TEST(LocalReplicasTimesRanks, TrainLikeAllReplicasInOneProcess) {
  for (bool sync : {true, false}) {
    DataParallel threads;
    threads.replicas = 4;
    const std::vector<Tensor> want = train_steps(threads, sync);
    const int port = dist::free_loopback_port(), world = 2, local = 2;
    std::vector<std::future<std::vector<Tensor>>> ranks;
    for (int r = 0; r < world; ++r)
      ranks.push_back(std::async(std::launch::async, [=] {
        auto g = dist::ProcessGroup::join(env_for(r, world, port), "{}");
        return train_steps({world * local, &g->comm(), r, local}, sync);
      }));
    for (auto& f : ranks) {
      const std::vector<Tensor> got = f.get();
      // The sums fold in another order ((a0+a1)+(a2+a3) vs ((a0+a1)+a2)+a3): f32 rounding only.
      EXPECT_LT(scaled_diff(got, want), 2e-5) << "syncBN " << sync;
    }
    // Not vacuous: 4 replicas with per-shard BN differ from 2 (the shards are different).
    DataParallel two;
    two.replicas = 2;
    if (!sync) {
      EXPECT_GT(scaled_diff(train_steps(two, sync), want), 1e-4);
    }
  }
}

// f(split) on `world` ranks at once; the result of each rank.
template <class F>
auto on_ranks(int world, F f) {
  const int port = dist::free_loopback_port();
  std::vector<std::future<decltype(f(RankSplit{}))>> ranks;
  for (int r = 0; r < world; ++r)
    ranks.push_back(std::async(std::launch::async, [&, r] {
      auto g = dist::ProcessGroup::join(env_for(r, world, port), "{}");
      return f(RankSplit{&g->comm(), r});
    }));
  std::vector<decltype(f(RankSplit{}))> out;
  for (auto& x : ranks) out.push_back(x.get());
  return out;
}

// The DDPM noise MSE and test-time augmentation each score their share of the batches and equal
// one process bit for bit; a 2-process run with EMA, SWA, SWAG and TTA on reports the averages'
// top-1 a single process with 2 replica threads reports.
TEST(SplitEvaluation, DdpmNoiseMseEqualsOneProcessBitForBit) {
  // A one-conv noise predictor on (image, t/T) planes.
  const NetSpec net = parse_spec(R"({"name": "eps", "inputChannels": 2, "inputHeight": 28,
    "inputWidth": 28, "layers": [{"kind": "conv2d", "ic": 2, "oc": 1, "k": 3,
    "act": "identity"}]})")
                          .net;
  const ParamTable t = build_param_table(net);
  const std::vector<Tensor> params = init_params(t, InitKind::he, 6);
  TrainConfig c;
  c.ddpm = true;
  const DdpmSchedule sched(c);
  auto cpu = exec::make_backend("cpu");
  const EvalMetrics one = ddpm_evaluate(sched, DatasetKind::fashionMnist,
                                        Evaluator(net, 32, *cpu, &t), params, {}, test_set());
  ASSERT_EQ(one.count, 150 * 28 * 28);
  EXPECT_GT(one.loss, 0.05);     // an untrained predictor: far from 0
  for (int world : {2, 3, 7}) {  // 7 ranks: two of them score no batch
    const auto got = on_ranks(world, [&](const RankSplit& split) {
      auto be = exec::make_backend("cpu");
      return ddpm_evaluate(sched, DatasetKind::fashionMnist, Evaluator(net, 32, *be, &t), params,
                           {}, test_set(), 1024, split);
    });
    for (const EvalMetrics& m : got) {
      EXPECT_EQ(m.loss, one.loss) << world << " ranks";  // exact, not near
      EXPECT_EQ(m.count, one.count);
      EXPECT_TRUE(m.regression);
    }
  }
}

TEST(SplitEvaluation, TtaEqualsOneProcessBitForBit) {
  const NetSpec net = parse_spec(R"({"name": "t", "inputChannels": 1, "inputHeight": 28,
    "inputWidth": 28, "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 784, "out": 10}]})")
                          .net;
  const ParamTable t = build_param_table(net);
  const std::vector<Tensor> params = init_params(t, InitKind::he, 3);
  const data::Augment aug = data::Augment::standard();
  auto cpu = exec::make_backend("cpu");
  const EvalMetrics one =
      evaluate_tta(Evaluator(net, 32, *cpu, &t), params, {}, test_set(), aug, 3, 11);
  ASSERT_EQ(one.count, 150);
  for (int world : {2, 3}) {
    const auto got = on_ranks(world, [&](const RankSplit& split) {
      auto be = exec::make_backend("cpu");
      return evaluate_tta(Evaluator(net, 32, *be, &t), params, {}, test_set(), aug, 3, 11, split);
    });
    for (const EvalMetrics& m : got) {
      EXPECT_EQ(m.loss, one.loss) << world << " ranks";
      EXPECT_EQ(m.top1, one.top1);
      EXPECT_EQ(m.count, one.count);
    }
  }
}

// kBnNet, 2 epochs, EMA + SWA (from epoch 1) + SWAG + TTA: 2 processes of 1 replica against one
// process of 2 replica threads (the same global batches).
TEST(SplitEvaluation, AveragesAndTtaInTwoProcessesMatchOneProcess) {
  SpecFile spec = test_util::bn_spec(2, 32, true);
  spec.train->useEMA = true;
  spec.train->useSWA = true;
  spec.train->swaStartEpoch = 0;
  spec.train->useSWAG = true;
  spec.train->swagSamples = 2;
  spec.train->useTTA = true;
  spec.train->augment = true;
  spec.train->ttaSamples = 2;
  static Splits data = [] {
    std::string d = test_util::tmpdir("split_avg", "train");
    test::write_synthetic_split(d, "train", 128, 63);
    test::write_synthetic_split(d, "t10k", 100, 64);
    return load_dataset(DatasetKind::fashionMnist, d, 0);
  }();
  TrainOptions threads;
  threads.dp.replicas = 2;
  const TrainResult one = run_training(spec, data, threads);
  ASSERT_EQ(one.epochs.size(), 2u);
  const auto got = on_ranks(2, [&](const RankSplit& split) {
    TrainOptions o;
    o.dp = {2, split.group, split.rank, 1};
    return run_training(spec, data, o);
  });
  for (const TrainResult& r : got) {
    ASSERT_EQ(r.epochs.size(), 2u);
    for (size_t e = 0; e < 2; ++e) {
      const auto& want = one.epochs[e].average_top1;
      const auto& have = r.epochs[e].average_top1;
      ASSERT_EQ(have.size(), 4u);  // ema, swa, swag, tta
      ASSERT_EQ(want.size(), 4u);
      for (size_t k = 0; k < 4; ++k) {
        EXPECT_EQ(have[k].first, want[k].first);
        ASSERT_TRUE(have[k].second && want[k].second) << have[k].first;
        // Two replicas sum their gradients in the same order either way: the same weights.
        EXPECT_NEAR(*have[k].second, *want[k].second, 1e-12) << have[k].first << " epoch " << e;
      }
      EXPECT_NEAR(r.epochs[e].val.loss, one.epochs[e].val.loss, 1e-6 * one.epochs[e].val.loss);
    }
  }
}

// Detection: each rank decodes its batches and the detections are gathered in image order: the
// list one process makes (every field), hence its VOC and COCO mAP. An untrained det_tiny on 6
// synthetic VOC images at batch 2 (3 batches) keeps many boxes above the 0.001 score threshold.
TEST(SplitEvaluation, DetectionsGatheredEqualOneProcess) {
  data::SynthDetOptions so;
  so.dir = test_util::tmpdir("split", "voc");
  so.n = 30;
  so.size = 64;
  so.classes = 2;
  so.seed = 1;
  data::write_synth_det(so);
  data::LoadOptions lo;
  lo.dir = so.dir;
  lo.height = lo.width = 64;
  const data::Splits data = data::load_dataset(DatasetKind::voc, lo);
  ASSERT_EQ(data.test.size(), 6);
  const SpecFile spec = test_util::det_tiny_spec();
  const NetSpec& net = spec.net;
  const TrainConfig& c = *spec.train;
  const ParamTable t = build_param_table(net);
  const DetTargets d = det_targets(net, t, c);
  auto cpu = exec::make_backend("cpu");
  const Evaluator ev(net, 2, *cpu, &t);
  const TrainState st = make_state(init_params(t, InitKind::he, 4), {}, ev.manifest());
  NmsOptions o;
  o.score = 0.001;
  const std::vector<Detection> one = detect(ev, st.params, st.running, data.test, d, o);
  ASSERT_GT(one.size(), 20u);
  ASSERT_GT(one.back().image, 3);  // boxes from the last batch too
  const DetMetrics map = evaluate_det(ev, st.params, st.running, data.test, data.det->test, d);
  for (int world : {2, 3}) {
    const auto got = on_ranks(world, [&](const RankSplit& split) {
      auto be = exec::make_backend("cpu");
      const Evaluator e(net, 2, *be, &t);
      return std::make_pair(
          detect(e, st.params, st.running, data.test, d, o, split),
          evaluate_det(e, st.params, st.running, data.test, data.det->test, d, split));
    });
    for (const auto& [dets, m] : got) {
      ASSERT_EQ(dets.size(), one.size()) << world << " ranks";
      for (size_t k = 0; k < dets.size(); ++k) {
        EXPECT_EQ(dets[k].image, one[k].image) << k;
        EXPECT_EQ(dets[k].box, one[k].box) << k;
        EXPECT_EQ(dets[k].score, one[k].score) << k;
      }
      EXPECT_EQ(m.voc_map50, map.voc_map50);
      EXPECT_EQ(m.coco_map, map.coco_map);
    }
  }
}

}  // namespace
}  // namespace netspec::train
