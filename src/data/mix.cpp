// Mixup / cutmix / random erasing (see mix.h).
#include "data/mix.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/hash.h"

namespace netspec::data {
namespace {

uint64_t key(uint64_t seed, uint64_t tag, int64_t epoch, int64_t index) {
  return splitmix64(splitmix64(splitmix64(seed ^ tag) ^ static_cast<uint64_t>(epoch)) ^
                    static_cast<uint64_t>(index));
}

constexpr uint64_t kMixTag = 0x6d69787570ULL, kEraseTag = 0x6572617365ULL;

// Standard normal by Box-Muller from two keyed uniforms.
double normal(uint64_t k) {
  const double u1 = 1 - uniform01(k), u2 = uniform01(splitmix64(k ^ 0x5bd1e995ULL));
  return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Gamma(a, 1) by Marsaglia & Tsang (2000); a < 1 via Gamma(a + 1)·U^{1/a}.
double gamma_sample(double a, uint64_t k) {
  double boost = 1;
  if (a < 1) {
    boost = std::pow(uniform01(splitmix64(k ^ 0xa5a5a5a5ULL)), 1 / a);
    a += 1;
  }
  const double d = a - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (uint64_t i = 0;; ++i) {
    const uint64_t ki = splitmix64(k + 2 * i + 1);
    const double x = normal(ki), v0 = 1 + c * x;
    if (v0 <= 0) continue;
    const double v = v0 * v0 * v0, u = uniform01(splitmix64(ki ^ 0x1234567ULL));
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return boost * d * v;
  }
}

}  // namespace

double uniform01(uint64_t k) { return static_cast<double>(splitmix64(k) >> 11) * 0x1.0p-53; }

double beta_sample(double a, double b, uint64_t k) {
  const double x = gamma_sample(a, splitmix64(k ^ 1)), y = gamma_sample(b, splitmix64(k ^ 2));
  return x / (x + y);
}

MixConfig MixConfig::from_train(const TrainConfig& c, int64_t classes) {
  MixConfig m;
  m.mixup_alpha = c.mixup ? c.mixupAlpha : 0;
  m.cutmix_alpha = c.cutmix ? c.cutmixAlpha : 0;
  m.knn_alpha = c.knnMixup ? c.knnMixupAlpha : 0;  // takes precedence (the seed)
  m.smoothing = c.labelSmoothing;
  m.classes = classes;
  return m;
}

MixDraw mix_draw(const MixConfig& c, uint64_t seed, int64_t epoch, int64_t batch, int64_t h,
                 int64_t w) {
  const uint64_t k = key(seed, kMixTag, epoch, batch);
  MixDraw d;
  d.u_prob = uniform01(k);
  d.u_switch = uniform01(k + 1);
  const bool cut = c.cutmix_alpha > 0 && (c.mixup_alpha <= 0 || d.u_switch < c.switch_prob);
  const double a = c.knn_alpha > 0 ? c.knn_alpha : cut ? c.cutmix_alpha : c.mixup_alpha;
  d.beta = a > 0 ? beta_sample(a, a, k + 2) : 1;
  d.cy = static_cast<int64_t>(uniform01(k + 3) * static_cast<double>(h));
  d.cx = static_cast<int64_t>(uniform01(k + 4) * static_cast<double>(w));
  return d;
}

Tensor soft_targets(const Tensor& y, int64_t classes, double smoothing) {
  const int64_t b = y.shape().at(0);
  Tensor t(DType::kF32, {b, classes});
  const float off = static_cast<float>(smoothing / static_cast<double>(classes));
  const float on = static_cast<float>(1 - smoothing + smoothing / static_cast<double>(classes));
  float* p = t.data<float>();
  for (int64_t i = 0; i < b; ++i) {
    const int64_t c = y.as_double(i) < 0 ? -1 : static_cast<int64_t>(y.as_double(i));
    if (c < 0 || c >= classes)
      fail("mixup", "label {} of row {} is outside the {} classes", c, i, classes);
    for (int64_t j = 0; j < classes; ++j) p[i * classes + j] = j == c ? on : off;
  }
  return t;
}

Tensor apply_mix(const MixConfig& c, const MixDraw& d, Tensor& x, const Tensor& y,
                 double* lam_out) {
  const Shape& s = x.shape();
  if (s.size() != 4 || x.dtype() != DType::kF32)
    fail("mixup", "expects f32 images [B, C, H, W] (got {})", x.type_str());
  const int64_t b = s[0], h = s[2], w = s[3], plane = h * w, row = s[1] * plane;
  Tensor y1 = soft_targets(y, c.classes, c.smoothing);
  double lam = 1;
  const bool mixed = c.any() && d.u_prob < c.prob;
  const bool cut =
      mixed && c.cutmix_alpha > 0 && (c.mixup_alpha <= 0 || d.u_switch < c.switch_prob);
  if (mixed) lam = d.beta;
  float* px = x.data<float>();
  if (mixed && lam != 1) {
    Tensor orig = x.clone();
    const float* po = orig.data<float>();
    if (cut) {
      const double ratio = std::sqrt(1 - lam);
      const int64_t ch = static_cast<int64_t>(static_cast<double>(h) * ratio);
      const int64_t cw = static_cast<int64_t>(static_cast<double>(w) * ratio);
      const int64_t yl = std::clamp<int64_t>(d.cy - ch / 2, 0, h);
      const int64_t yh = std::clamp<int64_t>(d.cy + (ch + 1) / 2, 0, h);
      const int64_t xl = std::clamp<int64_t>(d.cx - cw / 2, 0, w);
      const int64_t xh = std::clamp<int64_t>(d.cx + (cw + 1) / 2, 0, w);
      for (int64_t i = 0; i < b; ++i)
        for (int64_t ci = 0; ci < s[1]; ++ci)
          for (int64_t r = yl; r < yh; ++r)
            for (int64_t q = xl; q < xh; ++q)
              px[i * row + ci * plane + r * w + q] = po[(b - 1 - i) * row + ci * plane + r * w + q];
      lam = 1 - static_cast<double>((yh - yl) * (xh - xl)) / static_cast<double>(plane);
    } else {
      const float l = static_cast<float>(lam), m = static_cast<float>(1 - lam);
      for (int64_t i = 0; i < b; ++i)
        for (int64_t e = 0; e < row; ++e)
          px[i * row + e] = po[i * row + e] * l + po[(b - 1 - i) * row + e] * m;
    }
  }
  Tensor t(DType::kF32, y1.shape());
  const float* a = y1.data<float>();
  float* o = t.data<float>();
  const int64_t n = c.classes;
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < n; ++j)
      o[i * n + j] = static_cast<float>(a[i * n + j] * lam + a[(b - 1 - i) * n + j] * (1 - lam));
  if (lam_out) *lam_out = mixed ? lam : 1.0;
  return t;
}

std::vector<int64_t> nearest_rows(const Tensor& x) {
  const int64_t b = x.shape().at(0), row = x.numel() / b;
  const float* p = x.data<float>();
  std::vector<int64_t> nn(static_cast<size_t>(b), 0);
  for (int64_t i = 0; i < b; ++i) {
    double best = -1;
    for (int64_t j = 0; j < b; ++j) {
      if (j == i) continue;
      double d2 = 0;
      for (int64_t e = 0; e < row; ++e) {
        const double t = static_cast<double>(p[i * row + e]) - p[j * row + e];
        d2 += t * t;
      }
      if (best < 0 || d2 < best) best = d2, nn[i] = j;
    }
  }
  return nn;
}

Tensor apply_knn_mix(const MixConfig& c, const MixDraw& d, Tensor& x, const Tensor& y) {
  const int64_t b = x.shape().at(0), row = x.numel() / b, n = c.classes;
  Tensor y1 = soft_targets(y, n, c.smoothing);
  if (b < 2) return y1;
  const std::vector<int64_t> nn = nearest_rows(x);
  const double lam = d.u_prob < c.prob ? d.beta : 1.0;
  const Tensor orig = x.clone();
  const float* po = orig.data<float>();
  float* px = x.data<float>();
  Tensor t(DType::kF32, {b, n});
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t e = 0; e < row; ++e)
      px[i * row + e] = static_cast<float>(lam * po[i * row + e] + (1 - lam) * po[nn[i] * row + e]);
    for (int64_t j = 0; j < n; ++j)
      t.data<float>()[i * n + j] = static_cast<float>(lam * y1.data<float>()[i * n + j] +
                                                      (1 - lam) * y1.data<float>()[nn[i] * n + j]);
  }
  return t;
}

std::vector<double> erase_uniforms(uint64_t seed, int64_t epoch, int64_t sample) {
  const uint64_t k = key(seed, kEraseTag, epoch, sample);
  std::vector<double> u(41);
  for (size_t i = 0; i < u.size(); ++i) u[i] = uniform01(k + i);
  return u;
}

EraseBox erase_box(const std::vector<double>& u, double p, int64_t h, int64_t w) {
  EraseBox b;
  if (!(u.at(0) < p)) return b;
  const double area = static_cast<double>(h * w), lr0 = std::log(0.3), lr1 = std::log(3.3);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double* a = &u.at(1 + 4 * attempt);
    const double ea = area * (0.02 + (0.33 - 0.02) * a[0]);
    const double ar = std::exp(lr0 + (lr1 - lr0) * a[1]);
    const auto eh = static_cast<int64_t>(std::nearbyint(std::sqrt(ea * ar)));  // half to even
    const auto ew = static_cast<int64_t>(std::nearbyint(std::sqrt(ea / ar)));
    if (!(eh < h && ew < w)) continue;
    b.on = true;
    b.h = eh;
    b.w = ew;
    b.i = static_cast<int64_t>(a[2] * static_cast<double>(h - eh + 1));
    b.j = static_cast<int64_t>(a[3] * static_cast<double>(w - ew + 1));
    return b;
  }
  return b;
}

void erase(Tensor& x, int64_t row, const EraseBox& b) {
  if (!b.on) return;
  const Shape& s = x.shape();
  const int64_t plane = s[2] * s[3];
  float* p = x.data<float>() + row * s[1] * plane;
  for (int64_t c = 0; c < s[1]; ++c)
    for (int64_t r = b.i; r < b.i + b.h; ++r)
      std::fill(p + c * plane + r * s[3] + b.j, p + c * plane + r * s[3] + b.j + b.w, 0.f);
}

}  // namespace netspec::data
