// Parameter init and LR schedules (see trainer.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>
#include <string>

#include "core/error.h"
#include "core/thread_pool.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

// Uniform [0, 1) from 53 random bits (portable, unlike std::uniform_real_distribution).
double uniform01(std::mt19937_64& r) { return static_cast<double>(r() >> 11) * 0x1.0p-53; }

// Standard normal by Box-Muller from two raw draws.
double normal_of(uint64_t a, uint64_t b) {
  const double u1 = static_cast<double>(a >> 11) * 0x1.0p-53;
  const double u2 = static_cast<double>(b >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2 * std::numbers::pi * u2);
}

// torch.nn.init.trunc_normal_(std=sd, a=-2, b=2) at sd = 0.02: the bounds are ABSOLUTE values,
// not multiples of sd, and Box-Muller from 53-bit uniforms never exceeds sqrt(-2 ln 2^-53) =
// 8.58 in size, so at sd <= 0.2 no draw can reach them and the truncated normal IS N(0, sd²):
// the inits call fill_normal (Init.BoxMullerNeverReachesTheTruncation checks the bound).
constexpr double kTruncBound = 2.0;
constexpr double kBoxMullerMax = 8.5717;  // sqrt(-2 ln 2^-53) = 8.57165...
double trunc_normal_sd(double sd) {
  if (!(sd * kBoxMullerMax < kTruncBound))
    fail("init",
         "trunc_normal with sd {} could reach its ±{} bounds (a plain normal only below sd "
         "{:.4f})",
         sd, kTruncBound, kTruncBound / kBoxMullerMax);
  return sd;
}

// d[i] = sd · normal_of(r(), r()) for i in [0, n), drawn in order, the same values as one draw
// at a time: the raw numbers come from r in order (cheap), Box-Muller's log, cos and sqrt (most of
// a large net's init: ~0.8 s of resnet50's) run on the thread pool.
void fill_normal(std::mt19937_64& r, float* d, int64_t n, double sd) {
  constexpr int64_t kChunk = int64_t{1} << 20;  // values per batch of raw draws (16 MiB)
  std::vector<uint64_t> raw(static_cast<size_t>(2 * std::min(n, kChunk)));
  for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const int64_t len = std::min(n - c0, kChunk);
    for (int64_t j = 0; j < 2 * len; ++j) raw[static_cast<size_t>(j)] = r();
    parallel_for(len, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        d[c0 + i] = static_cast<float>(
            sd * normal_of(raw[static_cast<size_t>(2 * i)], raw[static_cast<size_t>(2 * i + 1)]));
    });
  }
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "<m>.weight" -> "<m>.bias"; "-" (matching no parameter) for any other name.
std::string bias_name_for(const std::string& weight) {
  if (!ends_with(weight, ".weight")) return "-";
  return weight.substr(0, weight.size() - 7) + ".bias";
}

}  // namespace

std::vector<Tensor> init_params(const ParamTable& t, InitKind kind, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull);
  std::vector<Tensor> out;
  // PyTorch's default bias init U(±1/sqrt(fan_in)) (nn.Linear under he, nn.Conv under vit) needs
  // the fan_in of its weight "<m>.weight", which precedes the bias "<m>.bias" in the table.
  int default_bias_layer = -1;
  std::string default_bias_name;
  int64_t default_bias_fan_in = 0;
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
        if (p.layer == default_bias_layer && p.shape.size() == 1 && ends_with(p.name, ".bias") &&
            (default_bias_name.empty() || p.name == default_bias_name)) {
          double b = 1.0 / std::sqrt(static_cast<double>(default_bias_fan_in));
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
        // PyTorch's default: nn.Linear under he, every conv under vit (timm's
        // init_weights_vit_timm touches nn.Linear only, so the patch-embed conv keeps it).
        const bool pytorch_default =
            p.init == ParamInit::linearWeight ? kind == InitKind::he : kind == InitKind::vit;
        if (pytorch_default) {
          // kaiming_uniform(a=sqrt 5) == U(±1/sqrt(fan_in)).
          double b = 1.0 / std::sqrt(static_cast<double>(p.shape[1] * rf));
          fill([&] { return (2 * uniform01(rng) - 1) * b; });
          default_bias_layer = p.layer;
          // Under he every later ".bias" of the layer matches (the historical rule, kept so
          // he-init runs reproduce; it also reaches a LayerNorm bias in the same layer).
          default_bias_name = kind == InitKind::he ? std::string() : bias_name_for(p.name);
          default_bias_fan_in = p.shape[1] * rf;
        } else if (kind != InitKind::he) {
          fill_normal(rng, d, n, trunc_normal_sd(0.02));
        } else {
          fill_normal(rng, d, n, std::sqrt(2.0 / static_cast<double>(p.shape[0] * rf)));
        }
        break;
      }
      case ParamInit::embedding:
      case ParamInit::posEmbed:
      case ParamInit::classToken:
        fill_normal(rng, d, n, trunc_normal_sd(0.02));
        break;
      case ParamInit::layerScale:
        fill([] { return 1e-6; });  // torchvision CNBlock layer_scale = 1e-6
        break;
      case ParamInit::relPosBias:
        // torchvision Swin: trunc_normal_(relative_position_bias_table, std=0.02)
        fill_normal(rng, d, n, trunc_normal_sd(0.02));
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
