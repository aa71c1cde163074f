// Hand-drawn line plots and the PNG writer (see plot.h).
#include "report/plot.h"

#include <fmt/format.h>
#include <png.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/safetensors.h"

namespace netspec::report {
namespace {

// 3x5 glyphs, one 3-bit row each (4 = left dot, 1 = right dot).
struct Glyph {
  char c;
  std::array<uint8_t, 5> rows;
};
constexpr Glyph kFont[] = {
    {'0', {7, 5, 5, 5, 7}}, {'1', {2, 6, 2, 2, 7}}, {'2', {7, 1, 7, 4, 7}}, {'3', {7, 1, 7, 1, 7}},
    {'4', {5, 5, 7, 1, 1}}, {'5', {7, 4, 7, 1, 7}}, {'6', {7, 4, 7, 5, 7}}, {'7', {7, 1, 1, 1, 1}},
    {'8', {7, 5, 7, 5, 7}}, {'9', {7, 5, 7, 1, 7}}, {'.', {0, 0, 0, 0, 2}}, {'-', {0, 0, 7, 0, 0}},
    {'+', {0, 2, 7, 2, 0}}, {'%', {5, 1, 2, 4, 5}}, {':', {0, 2, 0, 2, 0}}, {'/', {1, 1, 2, 4, 4}},
    {'(', {1, 2, 2, 2, 1}}, {')', {4, 2, 2, 2, 4}}, {'_', {0, 0, 0, 0, 7}}, {'A', {2, 5, 7, 5, 5}},
    {'B', {6, 5, 6, 5, 6}}, {'C', {7, 4, 4, 4, 7}}, {'D', {6, 5, 5, 5, 6}}, {'E', {7, 4, 6, 4, 7}},
    {'F', {7, 4, 6, 4, 4}}, {'G', {7, 4, 5, 5, 7}}, {'H', {5, 5, 7, 5, 5}}, {'I', {7, 2, 2, 2, 7}},
    {'J', {1, 1, 1, 5, 7}}, {'K', {5, 5, 6, 5, 5}}, {'L', {4, 4, 4, 4, 7}}, {'M', {5, 7, 7, 5, 5}},
    {'N', {6, 5, 5, 5, 5}}, {'O', {7, 5, 5, 5, 7}}, {'P', {7, 5, 7, 4, 4}}, {'Q', {7, 5, 5, 7, 1}},
    {'R', {6, 5, 6, 5, 5}}, {'S', {7, 4, 7, 1, 7}}, {'T', {7, 2, 2, 2, 2}}, {'U', {5, 5, 5, 5, 7}},
    {'V', {5, 5, 5, 5, 2}}, {'W', {5, 5, 7, 7, 5}}, {'X', {5, 5, 2, 5, 5}}, {'Y', {5, 5, 2, 2, 2}},
    {'Z', {7, 1, 2, 4, 7}},
};

const Glyph* glyph(char c) {
  c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const Glyph& g : kFont)
    if (g.c == c) return &g;
  return nullptr;
}

constexpr Rgb kAxis{40, 40, 40}, kGrid{225, 225, 225}, kText{20, 20, 20};

void line(Image& img, int xa, int ya, int xb, int yb, Rgb c, int thick) {
  // Bresenham; thickness by drawing a small square at each point.
  int dx = std::abs(xb - xa), dy = -std::abs(yb - ya);
  int sx = xa < xb ? 1 : -1, sy = ya < yb ? 1 : -1, err = dx + dy;
  for (;;) {
    for (int oy = -(thick / 2); oy <= (thick - 1) / 2; ++oy)
      for (int ox = -(thick / 2); ox <= (thick - 1) / 2; ++ox) img.set(xa + ox, ya + oy, c);
    if (xa == xb && ya == yb) break;
    int e2 = 2 * err;
    if (e2 >= dy) err += dy, xa += sx;
    if (e2 <= dx) err += dx, ya += sy;
  }
}

// Tick label: few significant digits, no exponent for the ranges a loss plot has.
std::string tick_label(double v, double step) {
  int dec = step >= 1 ? 0 : std::min(6, static_cast<int>(std::ceil(-std::log10(step))));
  return fmt::format("{:.{}f}", v, dec);
}

// A "nice" tick step (1, 2, 5 x 10^k) giving about `n` intervals over [lo, hi].
double nice_step(double lo, double hi, int n) {
  double raw = (hi - lo) / n;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

}  // namespace

Image::Image(int w, int h, Rgb bg) : width(w), height(h), rgb(static_cast<size_t>(w) * h * 3) {
  for (size_t i = 0; i < rgb.size(); i += 3) std::copy(bg.begin(), bg.end(), rgb.begin() + i);
}

Rgb Image::at(int x, int y) const {
  size_t o = (static_cast<size_t>(y) * width + x) * 3;
  return {rgb[o], rgb[o + 1], rgb[o + 2]};
}

void Image::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= width || y >= height) return;
  size_t o = (static_cast<size_t>(y) * width + x) * 3;
  std::copy(c.begin(), c.end(), rgb.begin() + o);
}

int text_width(const std::string& text, int scale) {
  return static_cast<int>(text.size()) * 4 * scale - (text.empty() ? 0 : scale);
}

void draw_text(Image& img, int x, int y, const std::string& text, Rgb c, int scale) {
  for (char ch : text) {
    if (const Glyph* g = glyph(ch))
      for (int r = 0; r < 5; ++r)
        for (int k = 0; k < 3; ++k)
          if (g->rows[r] & (4 >> k))
            for (int sy = 0; sy < scale; ++sy)
              for (int sx = 0; sx < scale; ++sx) img.set(x + k * scale + sx, y + r * scale + sy, c);
    x += 4 * scale;
  }
}

void write_png(const std::string& path, const Image& img) {
  png_image pi{};
  pi.version = PNG_IMAGE_VERSION;
  pi.width = static_cast<png_uint_32>(img.width);
  pi.height = static_cast<png_uint_32>(img.height);
  pi.format = PNG_FORMAT_RGB;
  // Encode to memory first, then write atomically (a killed run never leaves a torn PNG).
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&pi, nullptr, &size, 0, img.rgb.data(), 0, nullptr))
    fail("png", "{}: cannot encode ({})", path, pi.message);
  std::string bytes(size, '\0');
  if (!png_image_write_to_memory(&pi, bytes.data(), &size, 0, img.rgb.data(), 0, nullptr))
    fail("png", "{}: cannot encode ({})", path, pi.message);
  bytes.resize(size);
  write_file_atomic(path, bytes);
}

Plot::Plot(PlotSpec spec) : spec_(std::move(spec)), img_(spec_.width, spec_.height, kBackground) {
  x0_ = 80;
  x1_ = spec_.width - 80;
  y0_ = 50;
  y1_ = spec_.height - 60;
  constexpr double inf = std::numeric_limits<double>::infinity();
  xmin_ = lmin_ = rmin_ = inf;
  xmax_ = lmax_ = rmax_ = -inf;
  for (const Curve& c : spec_.curves)
    for (auto [x, y] : c.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      xmin_ = std::min(xmin_, x), xmax_ = std::max(xmax_, x);
      double& lo = c.right_axis ? rmin_ : lmin_;
      double& hi = c.right_axis ? rmax_ : lmax_;
      lo = std::min(lo, y), hi = std::max(hi, y);
    }
  if (!(xmin_ <= xmax_)) xmin_ = 0, xmax_ = 1;
  if (xmax_ == xmin_) xmin_ -= 1, xmax_ += 1;
  if (!(lmin_ <= lmax_)) lmin_ = 0, lmax_ = 1;
  lmin_ = std::min(0.0, lmin_);  // losses read best from 0
  if (lmax_ == lmin_) lmax_ = lmin_ + 1;
  lmax_ += 0.05 * (lmax_ - lmin_);
  if (!(rmin_ <= rmax_)) rmin_ = 0, rmax_ = 1;
  rmin_ = std::min(0.0, rmin_), rmax_ = std::max(1.0, rmax_);  // accuracy: 0..1
  draw();
}

std::pair<int, int> Plot::to_pixel(double x, double y, bool right) const {
  double lo = right ? rmin_ : lmin_, hi = right ? rmax_ : lmax_;
  double fx = (x - xmin_) / (xmax_ - xmin_), fy = (y - lo) / (hi - lo);
  return {x0_ + static_cast<int>(std::lround(fx * (x1_ - x0_))),
          y1_ - static_cast<int>(std::lround(fy * (y1_ - y0_)))};
}

void Plot::draw() {
  Image& im = img_;
  // Grid and ticks: x (integer steps when the range is epochs), left and right y.
  double xs = std::max(1.0, nice_step(xmin_, xmax_, 8));
  for (double x = std::ceil(xmin_ / xs) * xs; x <= xmax_ + 1e-9; x += xs) {
    auto [px, py] = to_pixel(x, lmin_, false);
    line(im, px, y0_, px, y1_, kGrid, 1);
    line(im, px, y1_, px, y1_ + 5, kAxis, 1);
    std::string t = tick_label(x, xs);
    draw_text(im, px - text_width(t) / 2, y1_ + 10, t, kText);
  }
  double ls = nice_step(lmin_, lmax_, 6);
  for (double y = std::ceil(lmin_ / ls) * ls; y <= lmax_ + 1e-12; y += ls) {
    auto [px, py] = to_pixel(xmin_, y, false);
    line(im, x0_, py, x1_, py, kGrid, 1);
    line(im, x0_ - 5, py, x0_, py, kAxis, 1);
    std::string t = tick_label(y, ls);
    draw_text(im, x0_ - 9 - text_width(t), py - 5, t, kText);
  }
  bool any_right = std::any_of(spec_.curves.begin(), spec_.curves.end(),
                               [](const Curve& c) { return c.right_axis; });
  if (any_right) {
    double rs = nice_step(rmin_, rmax_, 5);
    for (double y = std::ceil(rmin_ / rs) * rs; y <= rmax_ + 1e-12; y += rs) {
      auto [px, py] = to_pixel(xmin_, y, true);
      line(im, x1_, py, x1_ + 5, py, kAxis, 1);
      draw_text(im, x1_ + 9, py - 5, tick_label(y, rs), kText);
    }
    draw_text(im, x1_ - text_width(spec_.right_label), y0_ - 16, spec_.right_label, kText);
  }
  line(im, x0_, y0_, x0_, y1_, kAxis, 1);
  line(im, x0_, y1_, x1_, y1_, kAxis, 1);
  if (any_right) line(im, x1_, y0_, x1_, y1_, kAxis, 1);
  draw_text(im, (x0_ + x1_ - text_width(spec_.x_label)) / 2, y1_ + 32, spec_.x_label, kText);
  draw_text(im, x0_, y0_ - 16, spec_.left_label, kText);

  // Curves: segments between consecutive finite points, a dot on each point.
  for (const Curve& c : spec_.curves) {
    bool have = false;
    std::pair<int, int> prev;
    for (auto [x, y] : c.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) {
        have = false;
        continue;
      }
      auto p = to_pixel(x, y, c.right_axis);
      if (have) line(im, prev.first, prev.second, p.first, p.second, c.color, 2);
      line(im, p.first, p.second, p.first, p.second, c.color, 5);
      prev = p, have = true;
    }
  }
  // Legend: one row in the top margin, centred, a colour swatch then the name per curve.
  int lw = 0;
  for (const Curve& c : spec_.curves) lw += 26 + text_width(c.name) + 20;
  int lx = (spec_.width - lw) / 2, ly = 8;
  for (const Curve& c : spec_.curves) {
    line(im, lx, ly + 5, lx + 20, ly + 5, c.color, 3);
    draw_text(im, lx + 26, ly, c.name, kText);
    lx += 26 + text_width(c.name) + 20;
  }
}

}  // namespace netspec::report
