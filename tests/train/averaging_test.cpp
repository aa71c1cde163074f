// Weight averages: EMA and SWA against torch.optim.swa_utils.AveragedModel on the same weight
// sequence, the SWA BN recompute against update_bn (Debian's torch, averaging_reference.py), SWAG
// samples' moments, and the trainer's EMA / SWA / SWAG runs: checkpoints written, each average
// evaluated in the epoch line, the SWA checkpoint the mean of the epochs' weights.
#include "train/averaging.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/npy.h"
#include "core/process_env.h"
#include "core/safetensors.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;
using test_util::tmpdir;
using test_util::uniform_noise;

const char* kPython = "/usr/bin/python3";

bool torch_available() {
  export_openblas_coretype();
  return std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
}

const char* kBnNet = R"({"name": "bnnet", "inputChannels": 3, "inputHeight": 4, "inputWidth": 4,
  "layers": [{"kind": "batchNorm", "ch": 3}, {"kind": "flatten"},
  {"kind": "dense", "in": 48, "out": 4}]})";

data::Dataset blobs(int64_t n, uint64_t seed) {  // 4 classes, class-shifted noise
  Tensor x = uniform_noise({n, 3, 4, 4}, seed);
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    y[i] = static_cast<int32_t>(i % 4);
    float* r = x.data<float>() + i * 48;
    for (int j = 0; j < 48; ++j) r[j] = 0.5f * r[j] + (j % 4 == y[i] ? 1.5f : 0.f) + 0.3f;
  }
  return data::Dataset(x, Tensor::from<int32_t>(DType::kI32, {n}, y));
}

TEST(Averaging, EmaAndSwaMatchAveragedModelAndBnMatchesUpdateBn) {
  if (!torch_available()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  const std::string dir = tmpdir("avg", "ref");
  const std::vector<Shape> shapes = {{3, 4}, {5}};
  const int updates = 6;
  const double decay = 0.5;  // the warmup (0, .37, .5 capped) and the cap both act
  std::vector<Tensor> ema, swa;
  for (int t = 1; t <= updates; ++t) {
    std::vector<Tensor> w;
    for (size_t i = 0; i < shapes.size(); ++i) {
      w.push_back(uniform_noise(shapes[i], 100 * t + i));
      write_npy(fmt::format("{}/w{}_{}.npy", dir, t, i), w.back());
    }
    ema_update(ema, w, ema_decay(decay, t));
    swa_update(swa, w, t - 1);
  }
  EXPECT_EQ(ema_decay(decay, 1), 0.0);
  EXPECT_NEAR(ema_decay(decay, 2), 1 - std::pow(2.0, -2.0 / 3), 1e-15);
  EXPECT_EQ(ema_decay(decay, 3), 0.5);
  // BN recompute: 40 images in 5 batches of 8 through a net whose first layer is the BN.
  SpecFile s = parse_spec(kBnNet, "bnnet");
  ParamTable t = build_param_table(s.net);
  data::Dataset d = blobs(40, 5);
  write_npy(dir + "/bn_x.npy", d.x);
  auto be = exec::make_backend("cpu");
  BnRecompute bn(s.net, t, 8, *be);
  std::vector<Tensor> running = {Tensor(DType::kF32, {3}), Tensor(DType::kF32, {3})};
  std::vector<Tensor> stats = bn.run(init_params(t, InitKind::he, 1), running, d);
  ASSERT_EQ(stats.size(), 2u);

  nlohmann::json meta = {
      {"shapes", shapes}, {"updates", updates}, {"ema_decay", decay}, {"bn_batch", 8}};
  std::ofstream(dir + "/meta.json") << meta.dump();
  const std::string cmd =
      fmt::format("{} {}/tests/train/averaging_reference.py {}", kPython, NETSPEC_SOURCE_DIR, dir);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Tensor re = read_npy(fmt::format("{}/ema_{}.npy", dir, i));
    Tensor rs = read_npy(fmt::format("{}/swa_{}.npy", dir, i));
    for (int64_t j = 0; j < re.numel(); ++j) {
      EXPECT_NEAR(ema[i].as_double(j), re.as_double(j), 1e-6) << i << " " << j;
      EXPECT_NEAR(swa[i].as_double(j), rs.as_double(j), 1e-6) << i << " " << j;
    }
  }
  Tensor rm = read_npy(dir + "/bn_mean.npy"), rv = read_npy(dir + "/bn_var.npy");
  for (int64_t c = 0; c < 3; ++c) {
    EXPECT_NEAR(stats[0].as_double(c), rm.as_double(c), 1e-5) << c;
    EXPECT_NEAR(stats[1].as_double(c), rv.as_double(c), 1e-5) << c;
    EXPECT_GT(std::abs(rv.as_double(c) - 1), 1e-2);  // not the reset value
  }
  fs::remove_all(dir);
}

TEST(Averaging, SwagSamplesHaveTheDeclaredMoments) {
  // One scalar parameter collected at 1, 2, 4 (K = 3): mean 7/3, E[θ²] = 7, diag = 14/9; the
  // deviations from the running mean are 0, 0.5, 5/3. Sample mean θ̄ and variance
  // diag/2 + Σ dev²/(2(K-1)).
  Swag sw(3);
  for (float v : {1.f, 2.f, 4.f}) sw.collect({Tensor::from<float>(DType::kF32, {1}, {v})});
  const double mean = 7.0 / 3, dev2 = 0 + 0.25 + 25.0 / 9;
  const double var = (7 - mean * mean) / 2 + dev2 / 4;
  double s1 = 0, s2 = 0;
  const int n = 20000;
  for (int j = 0; j < n; ++j) {
    double x = sw.sample(static_cast<uint64_t>(j)).at(0).as_double(0);
    s1 += x;
    s2 += x * x;
  }
  const double m = s1 / n, v = s2 / n - m * m;
  EXPECT_NEAR(m, mean, 4 * std::sqrt(var / n));
  EXPECT_NEAR(v, var, 0.05 * var);
}

SpecFile bn_spec(int epochs) {
  SpecFile s = parse_spec(kBnNet, "bnnet");
  TrainConfig c;
  c.epochs = epochs;
  c.batchSize = 16;
  c.learningRate = 0.01;
  c.seed = 3;
  s.train = c;
  return s;
}

TEST(Averaging, TrainerWritesAndEvaluatesEachAverage) {
  data::Splits sp;
  sp.train = blobs(64, 21);
  sp.test = blobs(32, 22);
  // Weights after epochs 2 and 3 of the plain run (deterministic): SWA from epoch index 1
  // averages exactly those two.
  TrainResult r2 = run_training(bn_spec(2), sp, {});
  TrainResult r3 = run_training(bn_spec(3), sp, {});
  SpecFile s = bn_spec(3);
  s.train->useEMA = true;
  s.train->emaDecay = 0.9;
  s.train->useSWA = true;
  s.train->swaStartEpoch = 1;
  s.train->useSWAG = true;
  s.train->swagK = 2;
  s.train->swagSamples = 3;
  const std::string run = tmpdir("avg", "run");
  std::ostringstream log;
  TrainOptions o;
  o.run_dir = run;
  o.log = &log;
  o.progress_every_s = -1;
  TrainResult r = run_training(s, sp, o);
  EXPECT_TRUE(test_util::same_bits(r.params, r3.params));  // averaging never touches training
  const std::string out = log.str();
  EXPECT_NE(out.find("ema top-1"), std::string::npos) << out;
  EXPECT_NE(out.find("swa top-1"), std::string::npos) << out;
  EXPECT_NE(out.find("swag top-1"), std::string::npos) << out;
  ParamTable t = build_param_table(s.net);
  SafeTensors swa = read_safetensors(run + "/swa.safetensors");
  SafeTensors ema = read_safetensors(run + "/ema.safetensors");
  EXPECT_TRUE(fs::exists(run + "/swag.safetensors"));
  double moved = 0;
  for (size_t i = 0; i < t.params.size(); ++i) {
    const Tensor& a = swa.at(t.params[i].name);
    for (int64_t j = 0; j < a.numel(); ++j) {
      const double want = 0.5 * (r2.params[i].as_double(j) + r3.params[i].as_double(j));
      EXPECT_NEAR(a.as_double(j), want, 1e-6) << t.params[i].name;
      moved = std::max(moved,
                       std::abs(ema.at(t.params[i].name).as_double(j) - r3.params[i].as_double(j)));
    }
  }
  EXPECT_GT(moved, 1e-4);  // the EMA lags the weights
  // ...and the BN statistics: their EMA is its own (it once shared the running buffers and so
  // equalled the latest statistics).
  SafeTensors last = read_safetensors(run + "/last.safetensors");
  double lag = 0;
  for (const char* n : {"layers.0.running_mean", "layers.0.running_var"})
    for (int64_t j = 0; j < last.at(n).numel(); ++j)
      lag = std::max(lag, std::abs(ema.at(n).as_double(j) - last.at(n).as_double(j)));
  EXPECT_GT(lag, 1e-3);
  EXPECT_EQ(ema.metadata.at("optimizer_state"), "false");  // weights + BN, as best
  fs::remove_all(run);
}

// A run stopped after epoch 1 and resumed to epoch 3 continues EMA, SWA and SWAG from
// averages.safetensors: every average file equals the uninterrupted run's bit for bit, and
// metrics.csv has each average's top-1 column. Without the file the averages restart, loudly.
TEST(Averaging, ResumedRunContinuesEachAverageAndLogsItsTop1) {
  data::Splits sp;
  sp.train = blobs(64, 21);
  sp.test = blobs(32, 22);
  auto spec = [](int epochs) {
    SpecFile s = bn_spec(epochs);
    s.train->useEMA = true;
    s.train->emaDecay = 0.9;
    s.train->useSWA = true;
    s.train->swaStartEpoch = 0;
    s.train->useSWAG = true;
    s.train->swagK = 2;
    s.train->swagSamples = 2;
    return s;
  };
  auto train = [&](const std::string& run, int epochs) {
    std::ostringstream log;
    TrainOptions o;
    o.run_dir = run;
    o.log = &log;
    o.progress_every_s = -1;
    run_training(spec(epochs), sp, o);
    return log.str();
  };
  const std::string whole = tmpdir("avg", "whole"), resumed = tmpdir("avg", "resumed");
  train(whole, 3);
  train(resumed, 1);
  EXPECT_TRUE(fs::exists(resumed + "/averages.safetensors"));
  const std::string out = train(resumed, 3);
  EXPECT_NE(out.find("resuming"), std::string::npos) << out;
  EXPECT_EQ(out.find("restart"), std::string::npos) << out;
  for (const char* f : {"ema.safetensors", "swa.safetensors", "swag.safetensors"}) {
    SafeTensors a = read_safetensors(whole + "/" + f), b = read_safetensors(resumed + "/" + f);
    ASSERT_EQ(a.tensors.size(), b.tensors.size()) << f;
    for (size_t i = 0; i < a.tensors.size(); ++i)
      EXPECT_EQ(0, std::memcmp(a.tensors[i].second.raw(), b.tensors[i].second.raw(),
                               a.tensors[i].second.nbytes()))
          << f << " " << a.tensors[i].first;
  }
  // metrics.csv: each average's top-1 column, the same values on every epoch as the whole run.
  auto column = [](const std::string& path, const std::string& name) {
    std::ifstream f(path);
    std::vector<std::string> values;
    int64_t at = -1;
    for (std::string line; std::getline(f, line);) {
      std::vector<std::string> cells;
      std::stringstream ss(line);
      for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
      if (at < 0) {
        at = std::find(cells.begin(), cells.end(), name) - cells.begin();
        if (at == static_cast<int64_t>(cells.size())) return std::vector<std::string>{};
      } else {
        values.push_back(cells.at(static_cast<size_t>(at)));
      }
    }
    return values;
  };
  for (const char* col : {"ema_top1", "swa_top1", "swag_top1"}) {
    auto w = column(whole + "/metrics.csv", col), r = column(resumed + "/metrics.csv", col);
    ASSERT_EQ(w.size(), 3u) << col;
    EXPECT_EQ(w, r) << col;
    for (const auto& v : w) EXPECT_GT(std::stod(v), 0.0) << col;  // filled: evaluated each epoch
  }
  // Without averages.safetensors the averages restart at the resumed step, and the log says so.
  const std::string lost = tmpdir("avg", "lost");
  train(lost, 1);
  fs::remove(lost + "/averages.safetensors");
  const std::string out2 = train(lost, 2);
  EXPECT_NE(out2.find("weight averages restart at step"), std::string::npos) << out2;
  if (!HasFailure())
    for (const auto& d : {whole, resumed, lost}) fs::remove_all(d);
}

}  // namespace
}  // namespace netspec::train
