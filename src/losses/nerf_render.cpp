// nerfRenderMse: NeRF's volume rendering (Mildenhall et al. 2020, eq. 3) of the net's raw outputs
// at S points per ray, then the MSE against the rays' colours. Rows [R·S, 4] are ray-major (ray r
// owns rows r·S .. r·S + S - 1, nearest first), each (raw rgb, raw σ) as nerfMLP returns them.
// With Δ = (far - near) / S, the length each point stands for:
//   c_i = sigmoid(rgb_i),  τ_i = softplus(σ_i - 1)·Δ,  T_i = exp(-Σ_{j<i} τ_j),
//   w_i = T_i·(1 - e^{-τ_i})
//   C = Σ_i w_i·c_i + (1 - Σ_i w_i)·bg,        loss = mean over R x 3 of (C - y)²
// The exclusive prefix sum is a dot with the strictly upper-triangular 0/1 matrix [S, S], so the
// gradient comes from the dot, exp and elementwise VJP rules (FD-checked in
// tests/tasks/nerf_test.cpp). tasks/nerf/render.h computes the same C on the host in f64.
// Density: softplus(σ - 1) as mip-NeRF, not nerf-pytorch's relu(σ): a freshly initialised nerfMLP
// gives nearly one raw σ for every point (8 ReLU layers shrink the input's part), and where that
// is negative relu has no gradient anywhere; measured, the tiny CLI test net never moved.
#include "core/error.h"
#include "losses/loss.h"

namespace netspec::losses {

int64_t nerf_rays(const LossOptions& o, const hlo::Type& raw) {
  if (o.nerf_samples < 1)
    fail("loss", "nerfRenderMse needs nerfSamples >= 1 (got {})", o.nerf_samples);
  if (raw.rank() != 2 || raw.dim(1) != 4 || raw.dim(0) % o.nerf_samples != 0)
    fail("loss",
         "nerfRenderMse expects nerfMLP rows [rays x {} samples, 4] (raw rgb, sigma) (got {})",
         o.nerf_samples, raw.str());
  return raw.dim(0) / o.nerf_samples;
}

Value* nerf_render(hlo::Builder& b, const LossOptions& o, Value* raw) {
  const int64_t s = o.nerf_samples, r = nerf_rays(o, raw->type);
  const DType dt = raw->type.dtype();
  const double delta = (o.nerf_far - o.nerf_near) / double(s);
  Value* x = b.reshape(raw, {r, s, 4});
  Value* rgb = b.logistic(b.slice(x, {0, 0, 0}, {r, s, 3}));
  Value* sigma = b.reshape(b.slice(x, {0, 0, 3}, {r, s, 4}), {r, s});
  const hlo::Type rs = hlo::Type::tensor(dt, {r, s});
  // σ = softplus(raw - 1) = max(z, 0) + log(1 + e^{-|z|}), z = raw - 1 (mip-NeRF's activation).
  Value* z = b.subtract(sigma, b.constant_splat(1, rs));
  Value* soft = b.add(b.maximum(z, b.constant_splat(0, rs)),
                      b.log_plus_one(b.exponential(b.negate(b.abs(z)))));
  Value* tau = b.multiply(soft, b.constant_splat(delta, rs));
  std::vector<double> upper(static_cast<size_t>(s * s), 0.0);  // [j, i] = 1 for j < i
  for (int64_t j = 0; j < s; ++j)
    for (int64_t i = j + 1; i < s; ++i) upper[size_t(j * s + i)] = 1;
  Value* excl = b.dot_general(tau, b.constant(Tensor::from<double>(dt, {s, s}, upper)),
                              hlo::DotDims{{}, {}, {1}, {0}});
  Value* trans = b.exponential(b.negate(excl));
  Value* alpha = b.negate(b.exponential_minus_one(b.negate(tau)));  // 1 - e^{-τ}, exact near 0
  Value* w = b.multiply(trans, alpha);
  Value* wc = b.multiply(b.broadcast_in_dim(w, {r, s, 3}, {0, 1}), rgb);
  Value* zero = b.scalar(0, dt);
  Value* color = b.reduce(wc, zero, {1}, hlo::OpKind::kAdd);
  Value* acc = b.reduce(w, zero, {1}, hlo::OpKind::kAdd);
  const hlo::Type rt = hlo::Type::tensor(dt, {r});
  Value* bg = b.multiply(b.subtract(b.constant_splat(1, rt), acc),
                         b.constant_splat(o.nerf_background, rt));
  return b.add(color, b.broadcast_in_dim(bg, {r, 3}, {0}));
}

Value* nerf_render_mse(hlo::Builder& b, const LossOptions& o, Value* raw, Value* colors) {
  return mse(b, nerf_render(b, o, raw), colors);
}

}  // namespace netspec::losses
