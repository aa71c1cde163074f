// Grad-CAM maps and overlays (see heatmap.h).
#include "report/heatmap.h"

#include <algorithm>
#include <cmath>

namespace netspec::report {

std::vector<double> grad_cam_map(const float* features, const float* grads, int64_t c, int64_t h,
                                 int64_t w) {
  const int64_t hw = h * w;
  std::vector<double> map(static_cast<size_t>(hw), 0.0);
  for (int64_t ch = 0; ch < c; ++ch) {
    double alpha = 0;
    for (int64_t i = 0; i < hw; ++i) alpha += grads[ch * hw + i];
    alpha /= static_cast<double>(hw);
    for (int64_t i = 0; i < hw; ++i) map[i] += alpha * features[ch * hw + i];
  }
  for (double& v : map) v = std::max(v, 0.0);
  return map;
}

Rgb jet(double v) {
  v = std::clamp(v, 0.0, 1.0);
  // Piecewise-linear jet: r, g, b ramps centred at 0.75, 0.5, 0.25 with width 0.5.
  auto ramp = [&](double centre) { return std::clamp(1.5 - 4 * std::abs(v - centre), 0.0, 1.0); };
  return {static_cast<uint8_t>(std::lround(255 * ramp(0.75))),
          static_cast<uint8_t>(std::lround(255 * ramp(0.5))),
          static_cast<uint8_t>(std::lround(255 * ramp(0.25)))};
}

std::vector<double> upsample_normalised(const std::vector<double>& map, int64_t h, int64_t w,
                                        int width, int height) {
  double mx = 0;
  for (double v : map) mx = std::max(mx, v);
  std::vector<double> out(static_cast<size_t>(width) * height, 0.0);
  if (mx <= 0) return out;
  auto at = [&](int64_t y, int64_t x) {
    return map[static_cast<size_t>(std::clamp<int64_t>(y, 0, h - 1) * w +
                                   std::clamp<int64_t>(x, 0, w - 1))];
  };
  for (int y = 0; y < height; ++y) {
    const double sy = (y + 0.5) * static_cast<double>(h) / height - 0.5;
    const int64_t y0 = static_cast<int64_t>(std::floor(sy));
    const double fy = sy - static_cast<double>(y0);
    for (int x = 0; x < width; ++x) {
      const double sx = (x + 0.5) * static_cast<double>(w) / width - 0.5;
      const int64_t x0 = static_cast<int64_t>(std::floor(sx));
      const double fx = sx - static_cast<double>(x0);
      const double v = (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1)) +
                       fy * ((1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1));
      out[static_cast<size_t>(y) * width + x] = v / mx;
    }
  }
  return out;
}

RgbImage resize_nearest(const RgbImage& img, int width, int height) {
  RgbImage out(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const int sy = y * img.height / height, sx = x * img.width / width;
      for (int k = 0; k < 3; ++k)
        out.rgb[(static_cast<size_t>(y) * width + x) * 3 + k] =
            img.rgb[(static_cast<size_t>(sy) * img.width + sx) * 3 + k];
    }
  return out;
}

RgbImage overlay(const RgbImage& img, const std::vector<double>& map, int64_t h, int64_t w,
                 double alpha) {
  std::vector<double> up = upsample_normalised(map, h, w, img.width, img.height);
  RgbImage out = img;
  for (size_t i = 0; i < up.size(); ++i) {
    Rgb c = jet(up[i]);
    for (int k = 0; k < 3; ++k)
      out.rgb[i * 3 + k] = static_cast<uint8_t>(
          std::lround((1 - alpha) * img.rgb[i * 3 + k] + alpha * c[static_cast<size_t>(k)]));
  }
  return out;
}

}  // namespace netspec::report
