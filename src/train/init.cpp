// Parameter init and LR schedules (see trainer.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>

#include "core/error.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

// Uniform [0, 1) from 53 random bits (portable, unlike std::uniform_real_distribution).
double uniform01(std::mt19937_64& r) { return static_cast<double>(r() >> 11) * 0x1.0p-53; }

// Box-Muller; truncated at ±2 std when `trunc` (resampled, as torch.nn.init.trunc_normal_).
double normal(std::mt19937_64& r, bool trunc) {
  for (;;) {
    double u1 = uniform01(r), u2 = uniform01(r);
    double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2 * std::numbers::pi * u2);
    if (!trunc || std::abs(z) <= 2.0) return z;
  }
}

}  // namespace

std::vector<Tensor> init_params(const ParamTable& t, InitKind kind, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull);
  std::vector<Tensor> out;
  // nn.Linear's default bias init U(±1/sqrt(fan_in)) needs the fan_in of the layer's weight.
  int linear_layer = -1;
  int64_t linear_fan_in = 0;
  for (const ParamDesc& p : t.params) {
    Tensor v(DType::kF32, p.shape);
    float* d = v.data<float>();
    const int64_t n = v.numel();
    int64_t rf = 1;  // receptive field (kh*kw) for conv weights
    for (size_t i = 2; i < p.shape.size(); ++i) rf *= p.shape[i];
    auto fill = [&](auto draw) {
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(draw());
    };
    switch (p.init) {
      case ParamInit::zeros:
        if (kind == InitKind::he && p.layer == linear_layer && p.shape.size() == 1 &&
            p.name.size() >= 5 && p.name.compare(p.name.size() - 5, 5, ".bias") == 0) {
          double b = 1.0 / std::sqrt(static_cast<double>(linear_fan_in));
          fill([&] { return (2 * uniform01(rng) - 1) * b; });
        }
        break;
      case ParamInit::ones:
        fill([] { return 1.0; });
        break;
      case ParamInit::linearWeight:
      case ParamInit::convWeight: {
        if (p.shape.size() < 2)
          fail("init", "{}: weight needs rank >= 2 (got {})", p.name, p.shape.size());
        if (kind != InitKind::he) {
          fill([&] { return 0.02 * normal(rng, true); });
        } else if (p.init == ParamInit::linearWeight) {
          // kaiming_uniform(a=sqrt 5) == U(±1/sqrt(fan_in)).
          double b = 1.0 / std::sqrt(static_cast<double>(p.shape[1] * rf));
          fill([&] { return (2 * uniform01(rng) - 1) * b; });
          linear_layer = p.layer;
          linear_fan_in = p.shape[1] * rf;
        } else {
          double sd = std::sqrt(2.0 / static_cast<double>(p.shape[0] * rf));
          fill([&] { return sd * normal(rng, false); });
        }
        break;
      }
      case ParamInit::embedding:
      case ParamInit::posEmbed:
      case ParamInit::classToken:
        fill([&] { return 0.02 * normal(rng, true); });
        break;
      case ParamInit::layerScale:
        fill([] { return 1e-6; });  // torchvision CNBlock layer_scale = 1e-6
        break;
      case ParamInit::relPosBias:
        // torchvision Swin: trunc_normal_(relative_position_bias_table, std=0.02)
        fill([&] { return 0.02 * normal(rng, true); });
        break;
      case ParamInit::ssmALog:
        // Mamba: A = -[1..N] per channel, stored as A_log[d, n] = ln(n + 1)
        if (p.shape.size() != 2)
          fail("init", "{}: A_log must be [di, N] (got rank {})", p.name, p.shape.size());
        for (int64_t i = 0; i < n; ++i)
          d[i] = static_cast<float>(std::log(static_cast<double>(i % p.shape[1] + 1)));
        break;
      case ParamInit::ssmD:
        fill([] { return 1.0; });  // Mamba: D = 1 (skip connection)
        break;
      case ParamInit::ssmDtBias:
        // Mamba: dt = exp(U(ln 1e-3, ln 0.1)) floored at 1e-4; bias = softplus⁻¹(dt) =
        // dt + ln(-expm1(-dt)), so softplus(bias) starts in [1e-3, 0.1].
        fill([&] {
          const double lo = std::log(1e-3), hi = std::log(0.1);
          double dt = std::max(std::exp(lo + uniform01(rng) * (hi - lo)), 1e-4);
          return dt + std::log(-std::expm1(-dt));
        });
        break;
    }
    out.push_back(std::move(v));
  }
  return out;
}

double learning_rate(const TrainConfig& c, int64_t step, int64_t spe) {
  const double total = static_cast<double>(c.epochs) * static_cast<double>(spe);
  const double warm = c.warmupEpochs * static_cast<double>(spe);
  const double s = static_cast<double>(step);
  if (s < warm) return c.learningRate * (s + 1) / warm;
  switch (c.schedule) {
    case Schedule::constant:
    case Schedule::plateau:  // lowered by the checkpoint policy's hook (checkpoint_policy.h)
      return c.learningRate;
    case Schedule::cosine: {
      double frac = total > warm ? (s - warm) / (total - warm) : 1.0;
      return c.learningRate * 0.5 * (1 + std::cos(std::numbers::pi * std::min(frac, 1.0)));
    }
    case Schedule::exponential:
      return c.learningRate *
             std::pow(c.expLRDecayRate, s / (c.expLRDecayEpochs * static_cast<double>(spe)));
  }
  return c.learningRate;
}

}  // namespace netspec::train
