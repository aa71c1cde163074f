// The training loop's guarantees on a small synthetic IDX set and a small mlp: bit-for-bit
// determinism, SIGINT-style stop + mid-epoch resume equal to an uninterrupted run, best
// checkpoint, metrics files, top-5, NaN stop keeping the last checkpoint, gradient accumulation
// equal to one big batch, headLrMult, and refusal of unsupported fields.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/safetensors.h"
#include "data/idx_fixture.h"
#include "data/loader.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "tests/train/train_test_util.h"
#include "train/checkpoint.h"
#include "train/signals.h"
#include "train/stepper.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;

std::string tmpdir(const std::string& name) { return test_util::tmpdir("loop", name); }

const char* kNet = test_util::kSmallMlp;

const Splits& synthetic() {
  static Splits s = test_util::synthetic_fashion(tmpdir("data"), 320, 100, 11);
  return s;
}

SpecFile small(int epochs, int batch = 32) {
  SpecFile s = parse_spec(kNet);
  TrainConfig c;
  c.dataset = DatasetKind::fashionMnist;
  c.epochs = epochs;
  c.batchSize = batch;
  c.learningRate = 1e-3;
  c.seed = 7;
  s.train = c;
  return s;
}

using test_util::same_bits;

std::vector<std::string> lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);) v.push_back(l);
  return v;
}

TEST(Loop, SameSeedSameNumbersBitForBit) {
  TrainResult a = run_training(small(2), synthetic(), {});
  TrainResult b = run_training(small(2), synthetic(), {});
  ASSERT_EQ(a.epochs.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_EQ(a.epochs[e].train_loss, b.epochs[e].train_loss);
    EXPECT_EQ(a.epochs[e].val.loss, b.epochs[e].val.loss);
    EXPECT_EQ(a.epochs[e].val.top1, b.epochs[e].val.top1);
  }
  EXPECT_TRUE(same_bits(a.params, b.params));
  SpecFile other = small(2);
  other.train->seed = 8;
  TrainResult c = run_training(other, synthetic(), {});
  EXPECT_FALSE(same_bits(a.params, c.params));
}

TEST(Loop, StopSavesMidEpochAndResumeMatchesUninterrupted) {
  TrainResult full = run_training(small(2), synthetic(), {});
  std::string run = tmpdir("stop");
  std::ostringstream log;
  request_stop(true);  // what SIGINT does: the loop finishes this step, saves, returns
  TrainResult r1 = run_training(small(2), synthetic(), {run, "cpu", &log});
  request_stop(false);
  EXPECT_TRUE(r1.interrupted);
  EXPECT_EQ(r1.steps, 1);
  EXPECT_TRUE(r1.epochs.empty());
  EXPECT_NE(log.str().find("interrupted at step 1 (epoch 1, batch 1/10)"), std::string::npos)
      << log.str();
  SafeTensors ck = read_safetensors(run + "/last.safetensors");
  EXPECT_EQ(ck.metadata.at("epoch"), "0");
  EXPECT_EQ(ck.metadata.at("batch_in_epoch"), "1");
  EXPECT_FALSE(fs::exists(run + "/metrics.csv"));
  EXPECT_EQ(lines(run + "/steps.csv").size(), 2u);  // header + the step saved with `last`

  std::ostringstream log2;
  TrainResult r2 = run_training(small(2), synthetic(), {run, "cpu", &log2});
  EXPECT_FALSE(r2.interrupted);
  EXPECT_EQ(r2.first_epoch, 1);
  EXPECT_EQ(r2.first_batch, 1);
  EXPECT_NE(log2.str().find("resuming"), std::string::npos);
  ASSERT_EQ(r2.epochs.size(), 2u);
  // Same numbers as the run that was never stopped, including the epoch's mean train loss.
  EXPECT_EQ(r2.epochs[0].train_loss, full.epochs[0].train_loss);
  EXPECT_EQ(r2.epochs[1].val.loss, full.epochs[1].val.loss);
  EXPECT_TRUE(same_bits(r2.params, full.params));
  auto csv = lines(run + "/metrics.csv");
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[0].rfind("epoch,step,lr,train_loss,val_loss,val_top1,val_top5,val_count", 0), 0u);
  auto jl = lines(run + "/metrics.jsonl");
  ASSERT_EQ(jl.size(), 2u);
  auto j = nlohmann::json::parse(jl[1]);
  EXPECT_EQ(j["epoch"], 2);
  EXPECT_EQ(j["step"], 20);
  EXPECT_EQ(j["val_count"], 100);
  EXPECT_DOUBLE_EQ(j["val_top1"].get<double>(), full.epochs[1].val.top1);
  EXPECT_TRUE(fs::exists(run + "/loss.png"));
  EXPECT_GT(fs::file_size(run + "/loss.png"), 1000u);
  EXPECT_TRUE(fs::exists(run + "/loss.svg"));
  // Per step: steps 1..20 once each (the step saved at the interrupt kept, none repeated), their
  // sample-weighted mean loss over epoch 1 is the epoch's train loss.
  auto st = lines(run + "/steps.csv");
  ASSERT_EQ(st.size(), 21u);
  EXPECT_EQ(st[0], "step,epoch,train_loss,lr,samples,ms,samples_per_s");
  auto sj = lines(run + "/steps.jsonl");
  ASSERT_EQ(sj.size(), 20u);
  double sum = 0, n = 0;
  for (size_t i = 0; i < sj.size(); ++i) {
    auto r = nlohmann::json::parse(sj[i]);
    EXPECT_EQ(r["step"], static_cast<int>(i + 1));
    EXPECT_DOUBLE_EQ(r["epoch"].get<double>(), (i + 1) / 10.0);
    EXPECT_GT(r["samples_per_s"].get<double>(), 0);
    EXPECT_DOUBLE_EQ(r["lr"].get<double>(), full.epochs[0].lr);
    if (i < 10) sum += r["train_loss"].get<double>() * r["samples"].get<double>();
    if (i < 10) n += r["samples"].get<double>();
  }
  EXPECT_NEAR(sum / n, full.epochs[0].train_loss, 1e-12);
}

// The seed's evalEveryNEpochs = 0: "final-epoch only".
TEST(Loop, EvalEveryZeroEvaluatesTheLastEpochOnly) {
  SpecFile s = small(3);
  s.train->evalEveryNEpochs = 0;
  TrainResult r = run_training(s, synthetic(), {tmpdir("every0"), "cpu", nullptr});
  ASSERT_EQ(r.epochs.size(), 3u);
  EXPECT_FALSE(r.epochs[0].evaluated);
  EXPECT_FALSE(r.epochs[1].evaluated);
  EXPECT_TRUE(r.epochs[2].evaluated);
  EXPECT_EQ(r.epochs[2].val.count, 100);
  s.train->evalEveryNEpochs = -1;
  EXPECT_THROW(run_training(s, synthetic(), {tmpdir("every-1"), "cpu", nullptr}), Error);
}

TEST(Loop, EvalEveryNBestCheckpointAndTop5) {
  SpecFile s = small(3);
  s.train->evalEveryNEpochs = 2;
  std::string run = tmpdir("best");
  TrainResult r = run_training(s, synthetic(), {run, "cpu", nullptr});
  ASSERT_EQ(r.epochs.size(), 3u);
  EXPECT_FALSE(r.epochs[0].evaluated);  // epochs 2 (every 2) and 3 (the last) are evaluated
  EXPECT_TRUE(r.epochs[1].evaluated);
  EXPECT_TRUE(r.epochs[2].evaluated);
  EXPECT_TRUE(r.epochs[1].best);  // the first evaluation is the best so far
  const EvalMetrics& v = r.epochs[2].val;
  EXPECT_EQ(v.count, 100);
  EXPECT_TRUE(v.has_top5);
  EXPECT_GE(v.top5, v.top1);
  EXPECT_GT(v.top1, 0.5);  // learnable set, chance is 0.1
  auto row1 = nlohmann::json::parse(lines(run + "/metrics.jsonl")[0]);
  EXPECT_TRUE(row1["val_top1"].is_null());
  ASSERT_TRUE(fs::exists(run + "/best.safetensors"));
  auto best = nlohmann::json::parse(std::ifstream(run + "/best.json"));
  int be = best["epoch"];
  const EpochMetrics& bm = r.epochs[static_cast<size_t>(be - 1)];
  EXPECT_TRUE(bm.best);
  EXPECT_DOUBLE_EQ(best["val_top1"].get<double>(), bm.val.top1);
  EXPECT_GE(bm.val.top1, r.epochs[1].val.top1);
  EXPECT_GE(bm.val.top1, r.epochs[2].val.top1);
  EXPECT_EQ(read_safetensors(run + "/best.safetensors").metadata.at("epoch"), std::to_string(be));
}

TEST(Loop, NonFiniteLossNamesTheStepAndKeepsTheLastCheckpoint) {
  std::string run = tmpdir("nan");
  run_training(small(1), synthetic(), {run, "cpu", nullptr});
  std::ifstream f0(run + "/last.safetensors", std::ios::binary);
  std::string before((std::istreambuf_iterator<char>(f0)), {});
  SpecFile s = small(2);
  s.train->optimizer = OptimizerKind::sgd;
  s.train->momentum = 0;
  s.train->learningRate = 1e30;
  try {
    run_training(s, synthetic(), {run, "cpu", nullptr});
    FAIL() << "expected a non-finite loss error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at step 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(epoch 2"), std::string::npos) << e.what();
  }
  std::ifstream f1(run + "/last.safetensors", std::ios::binary);
  std::string after((std::istreambuf_iterator<char>(f1)), {});
  EXPECT_EQ(before, after);
}

// k micro-batches of B with accumulation == one batch of k·B (no BN: the net's math is
// per-sample), for SGD and Adam, with label smoothing, within f32 rounding.
TEST(Loop, GradAccumEqualsOneBigBatch) {
  const Splits& d = synthetic();
  data::Loader l64(d.train, 64, false, 0), l32(d.train, 32, false, 0);  // in order
  l64.start_epoch(0);
  l32.start_epoch(0);
  Tensor x64, y64, x0, y0, x1, y1;
  l64.batch(0, x64, y64);
  l32.batch(0, x0, y0);
  l32.batch(1, x1, y1);
  for (OptimizerKind opt : {OptimizerKind::sgd, OptimizerKind::adam}) {
    SpecFile s = small(1, 64);
    s.train->optimizer = opt;
    s.train->learningRate = 0.05;
    s.train->labelSmoothing = 0.1;
    TrainConfig big = *s.train, acc = big;
    acc.batchSize = 32;
    acc.gradAccumSteps = 2;
    auto be = exec::make_backend("cpu");
    ParamTable t = build_param_table(s.net);
    Stepper sb(s.net, big, *be), sa(s.net, acc, *be);
    ASSERT_EQ(sa.accum(), 2);
    Evaluator ev(s.net, 32, *be);
    auto init = init_params(t, InitKind::he, 1);
    TrainState a = make_state(init, sb.state_manifest(), ev.manifest());
    TrainState b = make_state(init, sa.state_manifest(), ev.manifest());
    for (int64_t step = 1; step <= 2; ++step) {
      double la = sb.step(a, {x64}, {y64}, 0.05, step);
      double lb = sa.step(b, {x0, x1}, {y0, y1}, 0.05, step);
      EXPECT_NEAR(la, lb, 1e-5) << enum_name(opt) << " step " << step;
    }
    sb.sync(a);
    const double tol = opt == OptimizerKind::sgd ? 1e-6 : 1e-4;
    double worst = 0, moved = 0;
    for (size_t i = 0; i < a.params.size(); ++i)
      for (int64_t e = 0; e < a.params[i].numel(); ++e) {
        worst = std::max(worst, std::abs(static_cast<double>(a.params[i].data<float>()[e]) -
                                         b.params[i].data<float>()[e]));
        moved = std::max(moved, std::abs(static_cast<double>(a.params[i].data<float>()[e]) -
                                         init[i].data<float>()[e]));
      }
    EXPECT_LT(worst, tol) << enum_name(opt);
    EXPECT_GT(moved, 100 * tol) << enum_name(opt);  // the updates are far above the tolerance
  }
}

TEST(Loop, HostClassCeGradientMatchesFiniteDifferences) {
  Tensor z = Tensor::from<float>(DType::kF32, {2, 3}, {0.5f, -1.f, 2.f, 0.1f, 0.2f, -0.3f});
  Tensor y = Tensor::from<int32_t>(DType::kI32, {2}, {2, 0});
  Tensor g, dummy;
  double l0 = class_ce_and_grad(z, y, 0.1, 0.5, g);  // 0.5: d(mean loss)/dz (1/B)
  for (int64_t i = 0; i < 6; ++i) {
    Tensor zp = z.clone(), zm = z.clone();
    zp.data<float>()[i] += 1e-2f;
    zm.data<float>()[i] -= 1e-2f;
    double fd =
        (class_ce_and_grad(zp, y, 0.1, 0.5, dummy) - class_ce_and_grad(zm, y, 0.1, 0.5, dummy)) /
        2e-2;
    EXPECT_NEAR(g.data<float>()[i], fd, 1e-4) << i;
  }
  EXPECT_GT(l0, 0);
}

TEST(Loop, HeadLrMultScalesOnlyTheLastLayer) {
  SpecFile s = small(1);
  s.train->optimizer = OptimizerKind::sgd;
  s.train->momentum = 0;
  s.train->headLrMult = 0;  // the head must not move at all
  TrainResult r = run_training(s, synthetic(), {});
  ParamTable t = build_param_table(s.net);
  auto init = init_params(t, InitKind::he, 7);
  for (size_t i = 0; i < t.params.size(); ++i) {
    bool same = std::memcmp(init[i].raw(), r.params[i].raw(), init[i].nbytes()) == 0;
    bool head = t.params[i].name.rfind("layers.2.", 0) == 0;
    EXPECT_EQ(same, head) << t.params[i].name;
  }
}

// Classifier dropout runs through the loop (host-drawn masks, stepper.cpp); dropPath on a net
// without stochastic-depth blocks is refused by name when the train step is emitted.
TEST(Loop, DropoutTrainsAndDropPathNeedsResidualBlocks) {
  SpecFile s = small(1);
  s.train->dropout = 0.3;
  TrainResult r = run_training(s, synthetic(), {});
  ASSERT_FALSE(r.epochs.empty());
  EXPECT_TRUE(std::isfinite(r.epochs.back().train_loss));
  s = small(1);
  s.train->dropPath = 0.1;
  EXPECT_THROW(run_training(s, synthetic(), {}), Error);
}

TEST(Loop, UnsupportedFieldsAreRefused) {
  SpecFile s = small(1);
  s.train->useTTA = true;
  EXPECT_THROW(run_training(s, synthetic(), {}), Error);
  // headPriorBias is applied now (prior_bias_test.cpp); lossWeights belong to
  // perPixelWeightedCE (seg_train_test.cpp) and are refused with any other loss.
  s = small(1);
  s.train->lossWeights = {1.0, 2.0};
  try {
    run_training(s, synthetic(), {});
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("lossWeights are read only by lossKind perPixelWeightedCE"), std::string::npos)
        << m;
  }
}

}  // namespace
}  // namespace netspec::train
