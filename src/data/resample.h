// PIL's antialiased bilinear resampling coefficients (ImagingResample's precompute_coeffs with
// the triangle filter), shared by resize_center_crop (image.cpp) and the fused sample views
// (view.cpp). Output i of an axis sits at input coordinate c_i = shift + (i + off + 0.5)·scale;
// its taps are inputs j in [int(c_i - s + 0.5), int(c_i + s + 0.5)) clamped to [0, in), weighted
// by the triangle 1 - |j + 0.5 - c_i| / s and normalised, s = max(scale, 1) (wider when shrinking).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace netspec::data {

struct Taps {
  std::vector<int64_t> first, count;
  std::vector<float> w;  // count[i] weights for output i, at stride kmax
  int64_t kmax = 0;
};

Taps taps_scaled(int64_t in, double scale, int64_t off, int64_t out, double shift = 0.0);
// An axis of `in` samples resized to rn, outputs off .. off + out - 1 kept (the centre crop).
inline Taps taps(int64_t in, int64_t rn, int64_t off, int64_t out) {
  return taps_scaled(in, static_cast<double>(in) / static_cast<double>(rn), off, out);
}

inline uint8_t to_u8(float s) { return static_cast<uint8_t>(std::clamp(std::lround(s), 0L, 255L)); }

}  // namespace netspec::data
