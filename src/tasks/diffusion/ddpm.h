// DDPM (Ho et al. 2020) around a net whose input carries the timestep in its last channel
// (timeCondAdd reads it): linear β_t from betaStart to betaEnd over T = ddpmSteps (or, with
// betaSchedule = cosine, Nichol & Dhariwal's cosine ᾱ), ᾱ_t = Π(1-β).
// Training batch: x0 (the dataset's images mapped to [-1, 1]), t ~ U{0..T-1}, ε ~ N(0, 1):
//   input = [sqrt(ᾱ_t) x0 + sqrt(1-ᾱ_t) ε, t/T plane], target = ε (loss floatTargetMse).
// Sampling from x_T ~ N(0, 1): ancestral x_{t-1} = μ̃(x_t, x̂0) + sqrt(β_t) z with x̂0 = (x_t -
// sqrt(1-ᾱ_t) ε̂)/sqrt(ᾱ_t) clipped to [-1, 1] and μ̃ = (sqrt(ᾱ_{t-1}) β_t x̂0 + sqrt(α_t)(1-ᾱ_{t-1})
// x_t)/(1-ᾱ_t) (unclipped: (x_t - β_t/sqrt(1-ᾱ_t) ε̂)/sqrt(α_t)); or DDIM (η = 0) on K even steps:
// x_prev = sqrt(ᾱ') x̂0 + sqrt(1-ᾱ') ε', ε' = (x_t - sqrt(ᾱ) x̂0)/sqrt(1-ᾱ) from the clipped x̂0.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "spec/train_config.h"
#include "train/evaluate.h"

namespace netspec::train {

struct DdpmSchedule {
  std::vector<double> beta, alpha_bar;  // index t = 0..T-1
  explicit DdpmSchedule(const TrainConfig& c);
  int64_t steps() const { return static_cast<int64_t>(beta.size()); }
};

// Replaces a batch (x normalised images [B, C, H, W] of `dataset`, labels ignored) by the DDPM
// training pair: x [B, C+1, H, W], y = ε [B, C, H, W]. Draws depend on (seed, step, micro).
void ddpm_batch(const DdpmSchedule& s, DatasetKind dataset, uint64_t seed, int64_t step,
                int64_t micro, Tensor& x, Tensor& y);
// Mean noise-prediction MSE over the first `limit` test images, lower is better
// (EvalMetrics::regression). Batch b's timesteps and noise are drawn from a generator seeded by b
// alone, so the batches can be split across ranks (`split`) and give one process's bits.
EvalMetrics ddpm_evaluate(const DdpmSchedule& s, DatasetKind dataset, const Evaluator& ev,
                          const std::vector<Tensor>& params, const std::vector<Tensor>& running,
                          const data::Dataset& test, int64_t limit = 1024,
                          const RankSplit& split = {});
// n samples [n, C, H, W] in [-1, 1] from the eval module (batch n, input [n, C+1, H, W]);
// ddim > 0: DDIM with that many steps, else ancestral over all T steps.
// start (x_t at t_start, e.g. ddpm_noised test images) replaces x_T: the reverse process then runs
// from t_start (a reconstruction check of the trained net and the sampler).
Tensor ddpm_sample(const DdpmSchedule& s, const Evaluator& ev, const std::vector<Tensor>& params,
                   const std::vector<Tensor>& running, uint64_t seed, int64_t ddim = 0,
                   const Tensor* start = nullptr, int64_t t_start = -1);
// x_t = sqrt(ᾱ_t) x0 + sqrt(1-ᾱ_t) ε [n, C, H, W] for normalised images x of `dataset`, one t.
Tensor ddpm_noised(const DdpmSchedule& s, DatasetKind dataset, const Tensor& x, int64_t t,
                   uint64_t seed);

}  // namespace netspec::train
