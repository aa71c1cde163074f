#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <random>
#include <sstream>

#include "core/error.h"
#include "core/safetensors.h"
#include "data/idx_fixture.h"
#include "layers/param_table.h"
#include "spec/zoo.h"
#include "tests/train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;

std::string tmpdir(const std::string& name) { return test_util::tmpdir("train", name); }

TEST(Init, HeLinearWeightAndBiasArePytorchUniform) {
  SpecFile s = resolve_net("mlp");
  ParamTable t = build_param_table(s.net);
  std::vector<Tensor> p = init_params(t, InitKind::he, 3);
  ASSERT_EQ(p.size(), 6u);
  // layers.1.weight [512, 784]: U(±1/28); mean ≈ 0, variance ≈ b²/3.
  const double b = 1.0 / 28.0;
  double sum = 0, sq = 0, mx = 0;
  for (float v : p[0].span<float>()) {
    sum += v;
    sq += double(v) * v;
    mx = std::max(mx, std::abs(double(v)));
  }
  const double n = double(p[0].numel());
  EXPECT_LE(mx, b);
  EXPECT_GT(mx, 0.999 * b);
  EXPECT_NEAR(sum / n, 0.0, 1e-4);
  EXPECT_NEAR(sq / n, b * b / 3, 0.01 * b * b / 3);
  // layers.1.bias [512]: nn.Linear's default U(±1/sqrt(fan_in)) as well, not zero.
  double bmx = 0, bsq = 0;
  for (float v : p[1].span<float>()) {
    bmx = std::max(bmx, std::abs(double(v)));
    bsq += double(v) * v;
  }
  EXPECT_LE(bmx, b);
  EXPECT_GT(bmx, 0.9 * b);
  EXPECT_NEAR(bsq / 512, b * b / 3, 0.2 * b * b / 3);
  // Deterministic per seed, different across seeds.
  EXPECT_EQ(init_params(t, InitKind::he, 3)[0].data<float>()[7], p[0].data<float>()[7]);
  EXPECT_NE(init_params(t, InitKind::he, 4)[0].data<float>()[7], p[0].data<float>()[7]);
}

// Normal inits draw their raw numbers in order and run Box-Muller on the thread pool: the values
// equal drawing one at a time from the seeded mt19937_64 (the documented order), for tensors past
// the pool's grain, under he (N(0, 2/fan_out)) and vit (trunc_normal 0.02), the stream going on
// across tensors.
TEST(Init, ParallelNormalDrawsEqualOneAtATime) {
  for (InitKind kind : {InitKind::he, InitKind::vit}) {
    ParamTable t;  // he: a conv weight N(0, 2 / (64·9)); vit: a linear weight, trunc_normal 0.02
    if (kind == InitKind::he)
      t.params.push_back({"conv.weight", {64, 32, 3, 3}, ParamInit::convWeight, false, 0});
    else
      t.params.push_back({"fc.weight", {64, 288}, ParamInit::linearWeight, false, 0});
    t.params.push_back({"pos_embed", {1, 65, 192}, ParamInit::posEmbed, false, 1});
    std::vector<Tensor> p = init_params(t, kind, 11);
    std::mt19937_64 r(11 * 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull);
    auto normal = [&] {
      const double u1 = static_cast<double>(r() >> 11) * 0x1.0p-53;
      const double u2 = static_cast<double>(r() >> 11) * 0x1.0p-53;
      return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2 * std::numbers::pi * u2);
    };
    const double sd0 = kind == InitKind::he ? std::sqrt(2.0 / (64 * 9)) : 0.02;
    int64_t diffs = 0;
    for (float v : p[0].span<float>()) diffs += v != static_cast<float>(sd0 * normal());
    for (float v : p[1].span<float>()) diffs += v != static_cast<float>(0.02 * normal());
    EXPECT_EQ(diffs, 0) << (kind == InitKind::he ? "he" : "vit");
  }
}

// vit's trunc_normal(0.02, ±2) is drawn as a plain normal because no Box-Muller draw from 53-bit
// uniforms (the formula above, which ParallelNormalDrawsEqualOneAtATime ties to init's) reaches
// 2 / 0.02 = 100 sd: the largest, u1 = 1 - 2^-53 and u2 = 0, is sqrt(-2 ln 2^-53) = 8.5717.
TEST(Init, BoxMullerNeverReachesTheTruncation) {
  const double u1 = static_cast<double>(~uint64_t{0} >> 11) * 0x1.0p-53;
  const double largest = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(0.0);
  EXPECT_NEAR(largest, 8.5717, 1e-4);
  EXPECT_LT(0.02 * largest, 0.2);  // far inside the ±2 bounds
}

TEST(Schedule, ConstantWarmupCosineExponential) {
  TrainConfig c;
  c.learningRate = 0.1;
  c.epochs = 2;
  EXPECT_DOUBLE_EQ(learning_rate(c, 17, 10), 0.1);
  c.schedule = Schedule::cosine;
  EXPECT_DOUBLE_EQ(learning_rate(c, 0, 10), 0.1);
  EXPECT_NEAR(learning_rate(c, 10, 10), 0.05, 1e-12);  // half way: 0.1 * (1 + cos(pi/2)) / 2
  EXPECT_NEAR(learning_rate(c, 20, 10), 0.0, 1e-12);
  c.warmupEpochs = 1;
  EXPECT_NEAR(learning_rate(c, 4, 10), 0.05, 1e-12);   // (4 + 1) / 10 of the peak
  EXPECT_NEAR(learning_rate(c, 15, 10), 0.05, 1e-12);  // cosine over steps 10..20
  c.warmupEpochs = 0;
  c.schedule = Schedule::exponential;
  c.expLRDecayRate = 0.5;
  c.expLRDecayEpochs = 1;
  EXPECT_NEAR(learning_rate(c, 20, 10), 0.025, 1e-12);
}

// mlp on a learnable synthetic IDX set (the class picks which image tile is bright): one epoch
// reaches well above chance; a second run in the same directory resumes at epoch 2.
TEST(Train, MlpLearnsSyntheticIdxAndResumes) {
  Splits data = test_util::synthetic_fashion(tmpdir("data"), 512, 200, 1);
  ASSERT_EQ(data.train.size(), 512);
  ASSERT_EQ(data.test.size(), 200);
  SpecFile s = resolve_net("mlp");
  TrainConfig c = s.train.value_or(TrainConfig{});
  c.epochs = 1;
  c.batchSize = 32;
  c.learningRate = 1e-3;
  s.train = c;
  std::string run = tmpdir("run");
  std::ostringstream log;
  TrainResult r = run_training(s, data, {run, "cpu", &log});
  ASSERT_EQ(r.epochs.size(), 1u) << log.str();
  EXPECT_EQ(r.first_epoch, 1);
  EXPECT_EQ(r.epochs[0].step, 16);  // 512 / 32
  EXPECT_GE(r.epochs[0].val.top1, 0.8) << log.str();
  EXPECT_LT(r.epochs[0].val.loss, 1.0) << log.str();
  EXPECT_NE(log.str().find("epoch 1/1"), std::string::npos);
  ASSERT_TRUE(fs::exists(run + "/last.safetensors"));
  ASSERT_TRUE(fs::exists(run + "/config.json"));
  SafeTensors ck = read_safetensors(run + "/last.safetensors");
  EXPECT_EQ(ck.metadata.at("epoch"), "1");
  EXPECT_EQ(ck.at("layers.1.weight").shape(), (Shape{512, 784}));

  // Resume: 2 epochs requested, 1 done -> runs only epoch 2 and continues the step count.
  c.epochs = 2;
  s.train = c;
  std::ostringstream log2;
  TrainResult r2 = run_training(s, data, {run, "cpu", &log2});
  EXPECT_EQ(r2.first_epoch, 2);
  ASSERT_EQ(r2.epochs.size(), 1u);
  EXPECT_EQ(r2.epochs[0].epoch, 2);
  EXPECT_EQ(r2.epochs[0].step, 32);
  EXPECT_GE(r2.epochs[0].val.top1, 0.8);
  EXPECT_NE(log2.str().find("resuming"), std::string::npos);
  std::ifstream f(run + "/metrics.csv");
  std::string line;
  int lines = 0;
  while (std::getline(f, line)) ++lines;
  EXPECT_EQ(lines, 3);  // header + 2 epochs
}

TEST(Train, MismatchedCheckpointIsAnError) {
  Splits data = test_util::synthetic_fashion(tmpdir("data2"), 64, 10, 3);
  std::string run = tmpdir("run2");
  SafeTensors bad;
  bad.tensors.emplace_back("layers.1.weight", Tensor(DType::kF32, {2, 2}));
  bad.metadata = {{"epoch", "1"}, {"step", "2"}};
  write_safetensors(run + "/last.safetensors", bad);
  SpecFile s = resolve_net("mlp");
  TrainConfig c;
  c.epochs = 1;
  c.batchSize = 32;
  s.train = c;
  try {
    run_training(s, data, {run, "cpu", nullptr});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not match"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace netspec::train
