// The nerf task's host side of volume rendering: the points a ray is sampled at (what the net
// sees), the colour rendered from the net's raw outputs at them (the f64 twin of the in-graph
// nerfRenderMse, losses/nerf_render.cpp), PSNR, and rendering whole ray sets through the eval
// module. Sampling: S points at t_i = near + (i + u)·Δ, Δ = (far - near) / S, one offset u per
// ray — uniform in [0, 1) per training step (stratified with a shared jitter, so every point
// stands for the same length Δ), 0.5 (the interval midpoints) for evaluation.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/tensor.h"
#include "spec/train_config.h"
#include "train/evaluate.h"

namespace netspec::tasks {

struct RaySampling {
  int64_t samples = 64;
  double near = 2, far = 6, background = 1;
  static RaySampling from(const TrainConfig& c);
  double delta() const { return (far - near) / double(samples); }
};

// Rows [S, 6] (point xyz, direction xyz) of ray r = (origin, unit direction) at offset u.
void ray_points(const float* ray, const RaySampling& s, double u, float* out);
// All rays [n, 6] -> points [n·S, 6]; u_of(i) gives ray i's offset.
Tensor ray_batch_points(const Tensor& rays, const RaySampling& s,
                        const std::function<double(int64_t)>& u_of);
// The colour of one ray from raw rows [S, 4] (raw rgb, raw σ) in f64:
//   C = Σ_i T_i (1 - e^{-softplus(σ_i - 1)Δ}) sigmoid(rgb_i) + (1 - Σ_i w_i)·bg.
std::array<double, 3> render_raw(const float* raw, const RaySampling& s);
// Peak signal-to-noise ratio of colours in [0, 1]: -10·log10(mse) dB (inf for mse 0).
double psnr(double mse);
// Colours f32 [n, 3] of rays [n, 6] rendered at the evaluation midpoints through `ev` (points in
// chunks of ev.batch() rows, the tail zero-padded).
Tensor render_rays(const train::Evaluator& ev, const std::vector<Tensor>& params,
                   const std::vector<Tensor>& running, const Tensor& rays, const RaySampling& s);
// Sum over rows of Σ_c (a - b)² for colours [n, 3] (f32) compared in f64.
double squared_error(const Tensor& a, const Tensor& b);
// ui8 [3, k·H, k·(2W) + gap] picture: view `view` of colours [n, 3] (views of H x W, row-major)
// left, the same view of `truth` right, each scaled by k (nearest) to at least 128 pixels high.
Tensor side_by_side(const Tensor& pred, const Tensor& truth, int64_t view, int64_t height,
                    int64_t width);

}  // namespace netspec::tasks
