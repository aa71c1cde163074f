// Host ray sampling and volume rendering (see render.h).
#include "tasks/nerf/render.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace netspec::tasks {

RaySampling RaySampling::from(const TrainConfig& c) {
  return {c.nerfSamples, c.nerfNear, c.nerfFar, c.nerfBackground};
}

void ray_points(const float* ray, const RaySampling& s, double u, float* out) {
  const double dt = s.delta();
  for (int64_t i = 0; i < s.samples; ++i, out += 6) {
    const double t = s.near + (double(i) + u) * dt;
    for (int k = 0; k < 3; ++k)
      out[k] = float(double(ray[k]) + t * double(ray[3 + k])), out[3 + k] = ray[3 + k];
  }
}

Tensor ray_batch_points(const Tensor& rays, const RaySampling& s,
                        const std::function<double(int64_t)>& u_of) {
  const int64_t n = rays.shape().at(0);
  Tensor pts(DType::kF32, {n * s.samples, 6});
  for (int64_t i = 0; i < n; ++i)
    ray_points(rays.data<float>() + i * 6, s, u_of(i), pts.data<float>() + i * s.samples * 6);
  return pts;
}

std::array<double, 3> render_raw(const float* raw, const RaySampling& s) {
  const double dt = s.delta();
  std::array<double, 3> c{0, 0, 0};
  double excl = 0, acc = 0;  // Σ_{j<i} τ_j and Σ w
  for (int64_t i = 0; i < s.samples; ++i) {
    const float* r = raw + i * 4;
    const double z = double(r[3]) - 1;  // σ = softplus(raw - 1), as nerf_render.cpp
    const double tau = (std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)))) * dt;
    const double w = std::exp(-excl) * -std::expm1(-tau);
    for (int k = 0; k < 3; ++k) c[k] += w / (1 + std::exp(-double(r[k])));
    acc += w;
    excl += tau;
  }
  for (int k = 0; k < 3; ++k) c[k] += (1 - acc) * s.background;
  return c;
}

double psnr(double mse) {
  return mse > 0 ? -10 * std::log10(mse) : std::numeric_limits<double>::infinity();
}

Tensor render_rays(const train::Evaluator& ev, const std::vector<Tensor>& params,
                   const std::vector<Tensor>& running, const Tensor& rays, const RaySampling& s) {
  const int64_t n = rays.shape().at(0), rows = ev.batch(), total = n * s.samples;
  const Tensor pts = ray_batch_points(rays, s, [](int64_t) { return 0.5; });
  std::vector<float> raw(static_cast<size_t>(total * 4));
  for (int64_t b0 = 0; b0 < total; b0 += rows) {
    const int64_t m = std::min(rows, total - b0);
    Tensor x(DType::kF32, {rows, 6});  // zero-padded tail
    std::fill_n(x.data<float>(), x.numel(), 0.0f);
    std::copy_n(pts.data<float>() + b0 * 6, m * 6, x.data<float>());
    const Tensor y = ev.logits(params, running, x);
    if (y.shape() != Shape{rows, 4} || y.dtype() != DType::kF32)
      fail("nerf", "the net's output must be raw (rgb, sigma) rows [{}, 4] f32 (got {})", rows,
           y.type_str());
    std::copy_n(y.data<float>(), m * 4, raw.data() + b0 * 4);
  }
  Tensor out(DType::kF32, {n, 3});
  for (int64_t i = 0; i < n; ++i) {
    const auto c = render_raw(raw.data() + i * s.samples * 4, s);
    for (int k = 0; k < 3; ++k) out.data<float>()[i * 3 + k] = float(c[k]);
  }
  return out;
}

double squared_error(const Tensor& a, const Tensor& b) {
  double sum = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = double(a.data<float>()[i]) - double(b.data<float>()[i]);
    sum += d * d;
  }
  return sum;
}

Tensor side_by_side(const Tensor& pred, const Tensor& truth, int64_t view, int64_t height,
                    int64_t width) {
  const int64_t k = std::max<int64_t>(1, (128 + height - 1) / height), gap = 8;
  const int64_t h = height * k, w = 2 * width * k + gap;
  Tensor img(DType::kUI8, {3, h, w});
  std::fill_n(img.data<uint8_t>(), img.numel(), uint8_t{255});
  auto px = [](float v) { return uint8_t(std::clamp(double(v), 0.0, 1.0) * 255 + 0.5); };
  const int64_t base = view * height * width;
  for (int64_t r = 0; r < h; ++r)
    for (int64_t c = 0; c < width * k; ++c) {
      const int64_t i = base + (r / k) * width + c / k;
      for (int ch = 0; ch < 3; ++ch) {
        uint8_t* row = img.data<uint8_t>() + (ch * h + r) * w;
        row[c] = px(pred.data<float>()[i * 3 + ch]);
        row[width * k + gap + c] = px(truth.data<float>()[i * 3 + ch]);
      }
    }
  return img;
}

}  // namespace netspec::tasks
