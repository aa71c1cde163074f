// PIL-semantics image ops (see image_ops.h).
#include "data/image_ops.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace netspec::data {
namespace {

// PIL's Image.blend on 8-bit: trunc(d + f·(x - d)) in float, clipped to 0..255.
Image8 blend(const Image8& degenerate, const Image8& im, double f) {
  Image8 o = im;
  const float a = static_cast<float>(f);
  for (size_t i = 0; i < im.px.size(); ++i) {
    // volatile: no fused multiply-add (PIL's build rounds the product), or ties flip by one.
    const volatile float prod =
        a * (static_cast<float>(im.px[i]) - static_cast<float>(degenerate.px[i]));
    const float t = static_cast<float>(degenerate.px[i]) + prod;
    o.px[i] = t <= 0.f ? 0 : t >= 255.f ? 255 : static_cast<uint8_t>(t);
  }
  return o;
}

// The L image (PIL convert("L")), one channel.
std::vector<uint8_t> luma(const Image8& im) {
  const int64_t n = im.h * im.w;
  std::vector<uint8_t> l(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (im.c == 1) {
      l[i] = im.px[i];
    } else {
      const uint32_t r = im.px[i], g = im.px[n + i], b = im.px[2 * n + i];
      l[i] = static_cast<uint8_t>((19595 * r + 38470 * g + 7471 * b + 0x8000) >> 16);
    }
  }
  return l;
}

Image8 from_lut(const Image8& im, const std::vector<std::array<uint8_t, 256>>& lut) {
  Image8 o = im;
  const int64_t n = im.h * im.w;
  for (int64_t c = 0; c < im.c; ++c)
    for (int64_t i = 0; i < n; ++i) o.px[c * n + i] = lut[c][im.px[c * n + i]];
  return o;
}

template <class F>
Image8 per_value(const Image8& im, F f) {
  std::array<uint8_t, 256> l{};
  for (int v = 0; v < 256; ++v) l[v] = static_cast<uint8_t>(f(v));
  return from_lut(im, std::vector<std::array<uint8_t, 256>>(static_cast<size_t>(im.c), l));
}

std::array<int64_t, 256> histogram(const Image8& im, int64_t c) {
  std::array<int64_t, 256> h{};
  const int64_t n = im.h * im.w;
  for (int64_t i = 0; i < n; ++i) ++h[im.px[c * n + i]];
  return h;
}

}  // namespace

Image8 brightness(const Image8& im, double f) {
  Image8 black = im;
  std::fill(black.px.begin(), black.px.end(), 0);
  return blend(black, im, f);
}

Image8 contrast(const Image8& im, double f) {
  const std::vector<uint8_t> l = luma(im);
  double sum = 0;
  for (uint8_t v : l) sum += v;
  const auto mean =
      static_cast<uint8_t>(static_cast<int>(sum / static_cast<double>(l.size()) + 0.5));
  Image8 grey = im;
  std::fill(grey.px.begin(), grey.px.end(), mean);
  return blend(grey, im, f);
}

Image8 color(const Image8& im, double f) {
  const std::vector<uint8_t> l = luma(im);
  Image8 grey = im;
  for (int64_t c = 0; c < im.c; ++c) std::copy(l.begin(), l.end(), grey.px.begin() + c * l.size());
  return blend(grey, im, f);
}

Image8 sharpness(const Image8& im, double f) {
  // PIL ImageFilter.SMOOTH: [[1,1,1],[1,5,1],[1,1,1]] / 13, rounded; the border is copied.
  Image8 s = im;
  for (int64_t c = 0; c < im.c; ++c)
    for (int64_t y = 1; y + 1 < im.h; ++y)
      for (int64_t x = 1; x + 1 < im.w; ++x) {
        float acc = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            acc += static_cast<float>(im.at(c, y + dy, x + dx)) * (dy == 0 && dx == 0 ? 5.f : 1.f);
        acc /= 13.f;
        s.at(c, y, x) = acc <= 0 ? 0 : acc >= 255 ? 255 : static_cast<uint8_t>(acc + 0.5f);
      }
  return blend(s, im, f);
}

Image8 posterize(const Image8& im, int bits) {
  const int mask = ~((1 << (8 - bits)) - 1) & 0xff;
  return per_value(im, [&](int v) { return v & mask; });
}

Image8 solarize(const Image8& im, int t) {
  return per_value(im, [&](int v) { return v >= t ? 255 - v : v; });
}

Image8 solarize_add(const Image8& im, int add, int t) {
  return per_value(im, [&](int v) { return v < t ? std::min(v + add, 255) : v; });
}

Image8 invert(const Image8& im) {
  return per_value(im, [](int v) { return 255 - v; });
}

Image8 autocontrast(const Image8& im) {
  std::vector<std::array<uint8_t, 256>> lut(static_cast<size_t>(im.c));
  for (int64_t c = 0; c < im.c; ++c) {
    const auto h = histogram(im, c);
    int lo = 0, hi = 255;
    while (lo < 256 && !h[lo]) ++lo;
    while (hi >= 0 && !h[hi]) --hi;
    for (int v = 0; v < 256; ++v) {
      if (hi <= lo) {
        lut[c][v] = static_cast<uint8_t>(v);
        continue;
      }
      const double scale = 255.0 / (hi - lo), offset = -lo * scale;
      const volatile double prod = v * scale;  // rounded before the add, as in Python
      lut[c][v] = static_cast<uint8_t>(std::clamp(static_cast<int>(prod + offset), 0, 255));
    }
  }
  return from_lut(im, lut);
}

Image8 equalize(const Image8& im) {
  std::vector<std::array<uint8_t, 256>> lut(static_cast<size_t>(im.c));
  for (int64_t c = 0; c < im.c; ++c) {
    const auto h = histogram(im, c);
    int64_t total = 0, last = 0, nonzero = 0;
    for (int v = 0; v < 256; ++v)
      if (h[v]) total += h[v], last = h[v], ++nonzero;
    const int64_t step = nonzero <= 1 ? 0 : (total - last) / 255;
    int64_t n = step / 2;
    for (int v = 0; v < 256; ++v) {
      lut[c][v] = static_cast<uint8_t>(step ? std::min<int64_t>(n / step, 255) : v);
      n += h[v];
    }
  }
  return from_lut(im, lut);
}

Image8 affine(const Image8& im, const std::array<double, 6>& m, uint8_t fill) {
  Image8 o = im;
  auto coord = [](double v) { return v < 0 ? int64_t{-1} : static_cast<int64_t>(v); };
  for (int64_t y = 0; y < im.h; ++y)
    for (int64_t x = 0; x < im.w; ++x) {
      const double xc = static_cast<double>(x) + 0.5, yc = static_cast<double>(y) + 0.5;
      const int64_t xi = coord(m[0] * xc + m[1] * yc + m[2]);
      const int64_t yi = coord(m[3] * xc + m[4] * yc + m[5]);
      const bool in = xi >= 0 && xi < im.w && yi >= 0 && yi < im.h;
      for (int64_t c = 0; c < im.c; ++c) o.at(c, y, x) = in ? im.at(c, yi, xi) : fill;
    }
  return o;
}

Image8 rotate(const Image8& im, double degrees, uint8_t fill) {
  // PIL Image.rotate: the inverse rotation about (W/2, H/2), entries rounded to 15 digits.
  const double a = -std::fmod(degrees, 360.0) * std::numbers::pi / 180;
  auto r15 = [](double v) { return std::round(v * 1e15) / 1e15; };
  std::array<double, 6> m = {r15(std::cos(a)),  r15(std::sin(a)), 0,
                             r15(-std::sin(a)), r15(std::cos(a)), 0};
  const double cx = static_cast<double>(im.w) / 2, cy = static_cast<double>(im.h) / 2;
  m[2] = m[0] * -cx + m[1] * -cy + cx;
  m[5] = m[3] * -cx + m[4] * -cy + cy;
  return affine(im, m, fill);
}

Image8 shear_x(const Image8& im, double s, uint8_t fill) {
  return affine(im, {1, s, 0, 0, 1, 0}, fill);
}
Image8 shear_y(const Image8& im, double s, uint8_t fill) {
  return affine(im, {1, 0, 0, s, 1, 0}, fill);
}
Image8 translate_x(const Image8& im, double p, uint8_t fill) {
  return affine(im, {1, 0, p, 0, 1, 0}, fill);
}
Image8 translate_y(const Image8& im, double p, uint8_t fill) {
  return affine(im, {1, 0, 0, 0, 1, p}, fill);
}

}  // namespace netspec::data
