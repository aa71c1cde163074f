// DDPM training pairs, evaluation and sampling (see ddpm.h).
#include "tasks/diffusion/ddpm.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "data/datasets.h"
#include "data/loader.h"

namespace netspec::train {
namespace {

// Per-channel (mean, std) that map the dataset's stored values back to [0, 1].
data::Normalization norm_of(DatasetKind d, int64_t channels) {
  data::Normalization n = data::dataset_normalization(d);
  if (static_cast<int64_t>(n.mean.size()) != channels)
    fail("ddpm", "{} has {} channels (got images with {})", enum_name(d), n.mean.size(), channels);
  return n;
}

// [B, C+1, H, W]: x_t in channels 0..C-1, t/T in channel C.
Tensor with_t_plane(const Tensor& xt, const std::vector<double>& t_over_T) {
  const Shape& s = xt.shape();
  const int64_t b = s[0], c = s[1], hw = s[2] * s[3];
  Tensor out(DType::kF32, {b, c + 1, s[2], s[3]});
  for (int64_t i = 0; i < b; ++i) {
    std::copy_n(xt.data<float>() + i * c * hw, c * hw, out.data<float>() + i * (c + 1) * hw);
    std::fill_n(out.data<float>() + (i * (c + 1) + c) * hw, hw, float(t_over_T[size_t(i)]));
  }
  return out;
}

// The noising of x (normalised images) at per-sample t; eps receives ε.
Tensor noised_input(const DdpmSchedule& s, DatasetKind dataset, const Tensor& x,
                    const std::vector<int64_t>& t, std::mt19937_64& rng, Tensor& eps) {
  const Shape& sh = x.shape();
  const int64_t b = sh[0], c = sh[1], hw = sh[2] * sh[3];
  const data::Normalization n = norm_of(dataset, c);
  std::normal_distribution<float> gauss(0, 1);
  Tensor xt(DType::kF32, sh);
  eps = Tensor(DType::kF32, sh);
  std::vector<double> tt(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i) {
    const double ab = s.alpha_bar[size_t(t[size_t(i)])];
    const double a = std::sqrt(ab), sd = std::sqrt(1 - ab);
    tt[size_t(i)] = double(t[size_t(i)]) / double(s.steps());
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t k = 0; k < hw; ++k) {
        const int64_t j = (i * c + ch) * hw + k;
        const double x0 = 2 * (x.data<float>()[j] * n.std[size_t(ch)] + n.mean[size_t(ch)]) - 1;
        const float e = gauss(rng);
        eps.data<float>()[j] = e;
        xt.data<float>()[j] = float(a * x0 + sd * e);
      }
  }
  return with_t_plane(xt, tt);
}

}  // namespace

DdpmSchedule::DdpmSchedule(const TrainConfig& c) {
  const int64_t T = c.ddpmSteps;
  // Cosine (Nichol & Dhariwal 2021, eq. 17): ᾱ(u) = f(u)/f(0), f(u) = cos²((u + s)/(1 + s)·π/2),
  // s = 0.008; index t (Ho's t+1) takes β_t = min(1 - ᾱ((t+1)/T)/ᾱ(t/T), 0.999), as their code.
  auto f = [](double u) {
    const double v = std::cos((u + 0.008) / 1.008 * M_PI / 2);
    return v * v;
  };
  double ab = 1;
  for (int64_t t = 0; t < T; ++t) {
    double b = 0;
    if (c.betaSchedule == BetaSchedule::cosine)
      b = std::min(1 - f(double(t + 1) / double(T)) / f(double(t) / double(T)), 0.999);
    else
      b = T == 1 ? c.betaStart : c.betaStart + (c.betaEnd - c.betaStart) * t / (T - 1);
    ab *= 1 - b;
    beta.push_back(b);
    alpha_bar.push_back(ab);
  }
}

void ddpm_batch(const DdpmSchedule& s, DatasetKind dataset, uint64_t seed, int64_t step,
                int64_t micro, Tensor& x, Tensor& y) {
  if (x.rank() != 4) fail("ddpm", "needs image batches [B, C, H, W] (got {})", x.type_str());
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + uint64_t(step) * 1000003u + uint64_t(micro));
  std::uniform_int_distribution<int64_t> ut(0, s.steps() - 1);
  std::vector<int64_t> t(static_cast<size_t>(x.shape()[0]));
  for (auto& v : t) v = ut(rng);
  x = noised_input(s, dataset, x, t, rng, y);
}

EvalMetrics ddpm_evaluate(const DdpmSchedule& s, DatasetKind dataset, const Evaluator& ev,
                          const std::vector<Tensor>& params, const std::vector<Tensor>& running,
                          const data::Dataset& test, int64_t limit, const RankSplit& split) {
  const data::Dataset ds = data::take_first(test, limit);
  data::Loader ld(ds, ev.batch(), false, 0);
  ld.start_epoch(0);
  std::uniform_int_distribution<int64_t> ut(0, s.steps() - 1);
  EvalMetrics m;
  m.regression = true;
  std::vector<double> batch_sum(static_cast<size_t>(ld.num_batches()), 0.0);
  std::vector<int64_t> count = {0};
  for (int64_t b = 0; b < ld.num_batches(); ++b) {
    if (!split.mine(b)) continue;
    std::mt19937_64 rng(12345 + static_cast<uint64_t>(b));  // the same draws every evaluation
    Tensor x, y, eps;
    const int64_t n = ld.batch(b, x, y);
    std::vector<int64_t> t(static_cast<size_t>(x.shape()[0]));
    for (auto& v : t) v = ut(rng);
    Tensor pred = ev.logits(params, running, noised_input(s, dataset, x, t, rng, eps));
    const int64_t per = eps.numel() / eps.shape()[0];
    for (int64_t i = 0; i < n * per; ++i) {
      const double d = double(pred.data<float>()[i]) - eps.data<float>()[i];
      batch_sum[size_t(b)] += d * d;
    }
    count[0] += n * per;
  }
  split.sum(batch_sum, count, "ddpm");
  double sum = 0;
  for (double v : batch_sum) sum += v;  // batch order, as a single process
  m.count = count[0];
  m.loss = m.count ? sum / double(m.count) : 0;
  return m;
}

Tensor ddpm_noised(const DdpmSchedule& s, DatasetKind dataset, const Tensor& x, int64_t t,
                   uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor eps;
  const Tensor xt =
      noised_input(s, dataset, x, std::vector<int64_t>(size_t(x.shape()[0]), t), rng, eps);
  const Shape& sh = x.shape();
  const int64_t per = sh[1] * sh[2] * sh[3];
  Tensor out(DType::kF32, sh);
  for (int64_t i = 0; i < sh[0]; ++i)
    std::copy_n(xt.data<float>() + i * (sh[1] + 1) * sh[2] * sh[3], per,
                out.data<float>() + i * per);
  return out;
}

Tensor ddpm_sample(const DdpmSchedule& s, const Evaluator& ev, const std::vector<Tensor>& params,
                   const std::vector<Tensor>& running, uint64_t seed, int64_t ddim,
                   const Tensor* start, int64_t t_start) {
  const Shape& in = ev.manifest().inputs.back().shape;  // [n, C+1, H, W]
  const int64_t n = in[0], c = in[1] - 1, hw = in[2] * in[3], T = s.steps();
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> gauss(0, 1);
  Tensor x(DType::kF32, {n, c, in[2], in[3]});
  if (start && (start->shape() != x.shape() || t_start < 0 || t_start >= T))
    fail("ddpm", "start {} at t {} (expected {} at 0 <= t < {})", start->type_str(), t_start,
         x.type_str(), T);
  const int64_t top = start ? t_start : T - 1;
  if (start)
    x = start->clone();  // Tensor copies share storage
  else
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = gauss(rng);
  // The timesteps visited, from top down: all of them, or ddim evenly spaced ones.
  std::vector<int64_t> ts;
  const int64_t k = ddim > 0 ? std::min(ddim, top + 1) : top + 1;
  for (int64_t i = k - 1; i >= 0; --i)
    ts.push_back(k == top + 1 ? i : i * top / std::max<int64_t>(k - 1, 1));
  for (size_t j = 0; j < ts.size(); ++j) {
    const int64_t t = ts[j];
    Tensor eps = ev.logits(params, running,
                           with_t_plane(x, std::vector<double>(size_t(n), double(t) / double(T))));
    const double ab = s.alpha_bar[size_t(t)];
    const double ab_prev = j + 1 < ts.size() ? s.alpha_bar[size_t(ts[j + 1])] : 1.0;
    for (int64_t i = 0; i < n * c * hw; ++i) {
      const double xt = x.data<float>()[i], e = eps.data<float>()[i];
      double v;
      if (ddim > 0) {  // η = 0: x_prev = sqrt(ᾱ') x̂0 + sqrt(1-ᾱ') ε', ε' consistent with the
        // clipped x̂0: ε' = (x_t - sqrt(ᾱ) x̂0)/sqrt(1-ᾱ) (diffusers' use_clipped_model_output)
        const double x0 = std::clamp((xt - std::sqrt(1 - ab) * e) / std::sqrt(ab), -1.0, 1.0);
        const double ec = (xt - std::sqrt(ab) * x0) / std::sqrt(1 - ab);
        v = std::sqrt(ab_prev) * x0 + std::sqrt(1 - ab_prev) * ec;
      } else {  // posterior mean at the clipped x̂0 (Ho et al.'s clip_denoised) + sqrt(β_t) z
        const double b = s.beta[size_t(t)];
        const double x0 = std::clamp((xt - std::sqrt(1 - ab) * e) / std::sqrt(ab), -1.0, 1.0);
        v = (std::sqrt(ab_prev) * b * x0 + std::sqrt(1 - b) * (1 - ab_prev) * xt) / (1 - ab);
        if (t > 0) v += std::sqrt(b) * gauss(rng);
      }
      x.data<float>()[i] = float(v);
    }
  }
  return x;
}

}  // namespace netspec::train
