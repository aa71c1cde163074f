// DDPM: the linear β schedule and ᾱ by hand, and the training pair (x_t with the t/T plane,
// target ε) satisfying x_t = sqrt(ᾱ_t)·x0 + sqrt(1-ᾱ_t)·ε for the dataset's images in [-1, 1];
// a DDPM run with useSWA recomputes the BN statistics on those inputs.
#include "tasks/diffusion/ddpm.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/safetensors.h"
#include "data/datasets.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "train/trainer.h"
#include "train_test_util.h"

namespace netspec::train {
namespace {

// A net whose noise prediction is 0 (a 1x1 conv with zero weight and bias) on [2, 2, 2] inputs.
struct ZeroNet {
  NetSpec net = NetBuilder("zero")
                    .input(2, 2, 2)
                    .add(Conv2d{2, 1, 1, 1, Padding::same, Activation::identity})
                    .build();
  ParamTable t = build_param_table(net);
  std::unique_ptr<exec::Backend> backend = exec::make_backend("ref");
  Evaluator ev;
  std::vector<Tensor> params{Tensor(DType::kF32, {1, 2, 1, 1}), Tensor(DType::kF32, {1})};
  explicit ZeroNet(int64_t batch) : ev(net, batch, *backend, &t) {}
};

TEST(Ddpm, LinearScheduleByHand) {
  TrainConfig c;
  c.ddpmSteps = 3;
  c.betaStart = 0.1;
  c.betaEnd = 0.3;
  DdpmSchedule s(c);
  ASSERT_EQ(s.steps(), 3);
  EXPECT_NEAR(s.beta[1], 0.2, 1e-15);
  EXPECT_NEAR(s.alpha_bar[2], 0.9 * 0.8 * 0.7, 1e-15);
  DdpmSchedule d{TrainConfig{}};  // defaults: T 1000, 1e-4 .. 0.02
  EXPECT_EQ(d.steps(), 1000);
  EXPECT_NEAR(d.beta.back(), 0.02, 1e-15);
  EXPECT_LT(d.alpha_bar.back(), 1e-4);
}

// Cosine β (Nichol & Dhariwal 2021): ᾱ(u) = f(u)/f(0), f(u) = cos²((u + 0.008)/1.008·π/2); index t
// takes β_t = min(1 - ᾱ((t+1)/T)/ᾱ(t/T), 0.999), so ᾱ_t = ᾱ((t+1)/T) until the clip at t = T-1.
TEST(Ddpm, CosineScheduleClosedForm) {
  auto abar = [](double u) {
    const double f = std::cos((u + 0.008) / 1.008 * M_PI / 2);
    const double f0 = std::cos(0.008 / 1.008 * M_PI / 2);
    return f * f / (f0 * f0);
  };
  TrainConfig c;
  c.betaSchedule = BetaSchedule::cosine;
  c.ddpmSteps = 4;
  DdpmSchedule s(c);
  ASSERT_EQ(s.steps(), 4);
  // Python's math module, improved-diffusion's betas_for_alpha_bar(4, ...).
  const double want[] = {0.1529878386730953, 0.41695808751199426, 0.7078587123971634, 0.999};
  for (int t = 0; t < 4; ++t) EXPECT_NEAR(s.beta[size_t(t)], want[t], 1e-14) << t;
  for (int t = 0; t < 3; ++t) EXPECT_NEAR(s.alpha_bar[size_t(t)], abar((t + 1) / 4.0), 1e-14) << t;
  EXPECT_NEAR(s.alpha_bar[3], s.alpha_bar[2] * 0.001, 1e-15);  // ᾱ(1) = 0: β clipped to 0.999
  c.ddpmSteps = 1000;
  DdpmSchedule d(c);
  ASSERT_EQ(d.steps(), 1000);
  for (size_t t = 0; t < 1000; ++t) {
    EXPECT_GT(d.beta[t], 0) << t;
    EXPECT_LE(d.beta[t], 0.999) << t;
    if (t > 0) {
      EXPECT_LT(d.alpha_bar[t], d.alpha_bar[t - 1]) << t;
    }
    if (t < 999) {
      EXPECT_NEAR(d.alpha_bar[t], abar(double(t + 1) / 1000), 1e-12) << t;
    }
  }
  EXPECT_EQ(d.beta[999], 0.999);
  EXPECT_NEAR(d.alpha_bar[499], abar(0.5), 1e-12);  // about 0.49: half the signal at T/2
  EXPECT_GT(d.alpha_bar[499], 0.45);
  EXPECT_LT(d.alpha_bar[499], 0.52);
  // The linear default is unchanged by the new field: ᾱ_499 of Ho's schedule is ~0.078.
  EXPECT_LT(DdpmSchedule(TrainConfig{}).alpha_bar[499], 0.1);
}

TEST(Ddpm, UnknownBetaScheduleIsRefusedByName) {
  std::string e;
  try {
    parse_spec(R"({"name": "n", "inputChannels": 1, "layers": [{"kind": "flatten"}],
                   "train": {"ddpm": true, "betaSchedule": "quadratic"}})");
  } catch (const Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("[train] unknown BetaSchedule 'quadratic' for field 'betaSchedule' (expected "
                   "one of linear, cosine)"),
            std::string::npos)
      << e;
  SpecFile ok = parse_spec(R"({"name": "n", "inputChannels": 1, "layers": [{"kind": "flatten"}],
                   "train": {"ddpm": true, "betaSchedule": "cosine"}})");
  EXPECT_EQ(ok.train->betaSchedule, BetaSchedule::cosine);
}

TEST(Ddpm, TrainingPairNoisesTheImage) {
  TrainConfig c;
  DdpmSchedule s(c);
  const data::Normalization n = data::dataset_normalization(DatasetKind::fashionMnist);
  Tensor x = test_util::uniform_noise({3, 1, 4, 4}, 5), y;
  Tensor x0 = x;
  ddpm_batch(s, DatasetKind::fashionMnist, 7, 2, 0, x, y);
  ASSERT_EQ(x.shape(), (Shape{3, 2, 4, 4}));
  ASSERT_EQ(y.shape(), (Shape{3, 1, 4, 4}));
  for (int64_t b = 0; b < 3; ++b) {
    const float tt = x.data<float>()[(b * 2 + 1) * 16];
    for (int k = 0; k < 16; ++k) EXPECT_EQ(x.data<float>()[(b * 2 + 1) * 16 + k], tt);
    const auto t = std::lround(double(tt) * 1000);
    ASSERT_TRUE(t >= 0 && t < 1000);
    const double ab = s.alpha_bar[size_t(t)];
    for (int k = 0; k < 16; ++k) {
      const double img = 2 * (x0.data<float>()[b * 16 + k] * n.std[0] + n.mean[0]) - 1;
      const double want = std::sqrt(ab) * img + std::sqrt(1 - ab) * y.data<float>()[b * 16 + k];
      EXPECT_NEAR(x.data<float>()[b * 2 * 16 + k], want, 1e-5);
    }
  }
  Tensor x2 = x0, y2;  // same (seed, step, micro): same draws
  ddpm_batch(s, DatasetKind::fashionMnist, 7, 2, 0, x2, y2);
  EXPECT_TRUE(test_util::same_bits({x, y}, {x2, y2}));
}

// Noise prediction 0 (ZeroNet): DDIM over T = 3 with K = 2 visits t = 2, 0. At t = 2, x̂0 =
// clip(x_T/sqrt(ᾱ_2)) and ε' = (x_T - sqrt(ᾱ_2) x̂0)/sqrt(1-ᾱ_2) (0 where nothing is clipped);
// x_0 = clip(x̂0 + sqrt((1-ᾱ_0)/ᾱ_0) ε'); x_T are the seed's N(0, 1) draws.
TEST(Ddpm, DdimWithZeroNoisePredictionByHand) {
  ZeroNet z(3);
  const Evaluator& ev = z.ev;
  const std::vector<Tensor>& params = z.params;
  TrainConfig c;
  c.ddpmSteps = 3;
  c.betaStart = 0.1;
  c.betaEnd = 0.5;
  DdpmSchedule s(c);
  Tensor x = ddpm_sample(s, ev, params, {}, 9, 2);
  ASSERT_EQ(x.shape(), (Shape{3, 1, 2, 2}));
  std::mt19937_64 rng(9);
  std::normal_distribution<float> gauss(0, 1);
  int clipped = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double xT = gauss(rng), ab2 = s.alpha_bar[2], ab0 = s.alpha_bar[0];
    const double x0 = std::clamp(xT / std::sqrt(ab2), -1.0, 1.0);
    const double e = (xT - std::sqrt(ab2) * x0) / std::sqrt(1 - ab2);
    clipped += e != 0;
    const double want = std::clamp(x0 + std::sqrt((1 - ab0) / ab0) * e, -1.0, 1.0);
    EXPECT_NEAR(x.data<float>()[i], want, 1e-5) << i;
  }
  EXPECT_GT(clipped, 0);
}

// Ancestral over T = 2 with ε̂ = 0: at t = 1 the textbook step x_T/sqrt(α_1) + sqrt(β_1) z where
// x̂0 = x_T/sqrt(ᾱ_1) is inside [-1, 1]; where it is clipped, the posterior mean at x̂0 = ±1
// (sqrt(ᾱ_0) β_1 x̂0 + sqrt(α_1)(1-ᾱ_0) x_T)/(1-ᾱ_1). At t = 0 (ᾱ_{-1} = 1): x̂0 =
// clip(x_1/sqrt(ᾱ_0)).
TEST(Ddpm, AncestralWithZeroNoisePredictionByHand) {
  ZeroNet z(4);
  const Evaluator& ev = z.ev;
  const std::vector<Tensor>& params = z.params;
  TrainConfig c;
  c.ddpmSteps = 2;
  c.betaStart = 0.3;
  c.betaEnd = 0.6;
  DdpmSchedule s(c);
  const double b1 = 0.6, ab0 = 0.7, ab1 = 0.7 * 0.4;
  Tensor x = ddpm_sample(s, ev, params, {}, 3, 0);
  ASSERT_EQ(x.shape(), (Shape{4, 1, 2, 2}));
  std::mt19937_64 rng(3);
  std::normal_distribution<float> gauss(0, 1);
  std::vector<double> xT(16);
  for (double& v : xT) v = gauss(rng);
  int clipped = 0, inside = 0;
  for (int64_t i = 0; i < 16; ++i) {
    const double x0 = xT[size_t(i)] / std::sqrt(ab1), z = gauss(rng);
    double x1;
    if (std::abs(x0) <= 1) {
      x1 = xT[size_t(i)] / std::sqrt(1 - b1) + std::sqrt(b1) * z;
      ++inside;
    } else {
      x1 = (std::sqrt(ab0) * b1 * (x0 > 0 ? 1 : -1) +
            std::sqrt(1 - b1) * (1 - ab0) * xT[size_t(i)]) /
               (1 - ab1) +
           std::sqrt(b1) * z;
      ++clipped;
    }
    EXPECT_NEAR(x.data<float>()[i], std::clamp(x1 / std::sqrt(ab0), -1.0, 1.0), 1e-5) << i;
  }
  EXPECT_GT(clipped, 0);
  EXPECT_GT(inside, 0);
}

// ddpm_noised draws ε in element order from the seed; the reverse process from that x_t at t = 1
// with ε̂ = 0 and DDIM K = 2 visits t = 1, 0.
TEST(Ddpm, ReverseProcessFromNoisedTestImages) {
  TrainConfig c;
  c.ddpmSteps = 3;
  c.betaStart = 0.1;
  c.betaEnd = 0.5;
  DdpmSchedule s(c);
  const data::Normalization n = data::dataset_normalization(DatasetKind::fashionMnist);
  Tensor x = test_util::uniform_noise({3, 1, 2, 2}, 4);
  Tensor xt = ddpm_noised(s, DatasetKind::fashionMnist, x, 1, 11);
  ASSERT_EQ(xt.shape(), x.shape());
  std::mt19937_64 rng(11);
  std::normal_distribution<float> gauss(0, 1);
  const double ab1 = 0.9 * 0.7;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double x0 = 2 * (x.data<float>()[i] * n.std[0] + n.mean[0]) - 1;
    EXPECT_NEAR(xt.data<float>()[i], std::sqrt(ab1) * x0 + std::sqrt(1 - ab1) * gauss(rng), 1e-5);
  }
  ZeroNet z(3);
  Tensor r = ddpm_sample(s, z.ev, z.params, {}, 5, 2, &xt, 1);
  const double ab0 = 0.9;
  for (int64_t i = 0; i < x.numel(); ++i) {  // as DdimWithZeroNoisePredictionByHand from t = 1
    const double x1 = xt.data<float>()[i], x0 = std::clamp(x1 / std::sqrt(ab1), -1.0, 1.0);
    const double e = (x1 - std::sqrt(ab1) * x0) / std::sqrt(1 - ab1);
    EXPECT_NEAR(r.data<float>()[i], std::clamp(x0 + std::sqrt((1 - ab0) / ab0) * e, -1.0, 1.0),
                1e-5);
  }
  EXPECT_THROW(ddpm_sample(s, z.ev, z.params, {}, 5, 2, &xt, 3), Error);  // t >= T
}

// useSWA in a DDPM run: the BN recompute feeds the DDPM inputs (noised image + t plane, 2
// channels) as training does, not the raw 1-channel images (which the 2-channel net refused).
// The SWA checkpoint's statistics of BN on the input are those of ddpm_batch's inputs, batch b
// drawn with (seed, step b, micro -1): the mean of the batch means and unbiased variances.
TEST(Ddpm, SwaRecomputesBatchNormOnTheDdpmInputs) {
  const int64_t n = 32, batch = 8;
  SpecFile spec;
  spec.net = NetBuilder("ddpmbn")
                 .input(2, 4, 4)
                 .add(BatchNorm{2})
                 .add(Conv2d{2, 1, 1, 1, Padding::same, Activation::identity})
                 .build();
  TrainConfig c;
  c.dataset = DatasetKind::fashionMnist;
  c.ddpm = true;
  c.ddpmSteps = 10;
  c.lossKind = LossKind::floatTargetMse;
  c.optimizer = OptimizerKind::sgd;
  c.learningRate = 0.01;
  c.batchSize = batch;
  c.epochs = 1;
  c.seed = 5;
  c.useSWA = true;
  spec.train = c;
  data::Splits sp;
  sp.train = data::Dataset(test_util::uniform_noise({n, 1, 4, 4}, 7), Tensor(DType::kI32, {n}));
  sp.test = data::Dataset(test_util::uniform_noise({8, 1, 4, 4}, 8), Tensor(DType::kI32, {8}));
  const std::string run = test_util::tmpdir("ddpm", "swa");
  std::ostringstream log;
  TrainOptions o;
  o.run_dir = run;
  o.log = &log;
  o.progress_every_s = -1;
  run_training(spec, sp, o);
  EXPECT_NE(log.str().find("swa noise mse"), std::string::npos) << log.str();
  {  // metrics.csv has the SWA noise MSE the epoch line printed
    std::ifstream f(run + "/metrics.csv");
    std::string header, row;
    std::getline(f, header);
    std::getline(f, row);
    auto cells = [](const std::string& l) {
      std::vector<std::string> v;
      std::stringstream ss(l);
      for (std::string c; std::getline(ss, c, ',');) v.push_back(c);
      return v;
    };
    const auto h = cells(header), r = cells(row);
    const auto at = std::find(h.begin(), h.end(), "swa_noise_mse");
    ASSERT_NE(at, h.end()) << header;
    const size_t k = static_cast<size_t>(at - h.begin());
    ASSERT_LT(k, r.size()) << row;
    const double mse = std::stod(r[k]);
    EXPECT_GT(mse, 0.0);
    EXPECT_NE(log.str().find(fmt::format("swa noise mse {:.4f}", mse)), std::string::npos)
        << log.str();
  }
  SafeTensors swa = read_safetensors(run + "/swa.safetensors");
  const Tensor& mean = swa.at("layers.0.running_mean");
  const Tensor& var = swa.at("layers.0.running_var");
  DdpmSchedule s(c);
  std::vector<double> m(2), v(2);
  for (int64_t b = 0; b < n / batch; ++b) {
    Tensor x(DType::kF32, {batch, 1, 4, 4}), eps;
    std::copy_n(sp.train.x.data<float>() + b * batch * 16, batch * 16, x.data<float>());
    ddpm_batch(s, c.dataset, uint64_t(c.seed), b, -1, x, eps);
    ASSERT_EQ(x.shape(), (Shape{batch, 2, 4, 4}));
    for (int ch = 0; ch < 2; ++ch) {
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < batch; ++i)
        for (int64_t j = 0; j < 16; ++j) {
          const double z = x.data<float>()[(i * 2 + ch) * 16 + j];
          sum += z;
          sq += z * z;
        }
      const double k = double(batch * 16), mu = sum / k;
      m[ch] += mu / double(n / batch);
      v[ch] += (sq / k - mu * mu) * k / (k - 1) / double(n / batch);
    }
  }
  for (int ch = 0; ch < 2; ++ch) {
    EXPECT_NEAR(mean.as_double(ch), m[ch], 1e-5) << ch;
    EXPECT_NEAR(var.as_double(ch), v[ch], 1e-5) << ch;
  }
  EXPECT_GT(v[1], 0.01);       // the t plane varies between samples
  spec.train->useSWAG = true;  // scored by the top-1 of averaged logits: refused, not crashing
  o.run_dir.clear();
  try {
    run_training(spec, sp, o);
    ADD_FAILURE() << "useSWAG with ddpm trained";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("useSWAG needs a classifier"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(run);
}

}  // namespace
}  // namespace netspec::train
