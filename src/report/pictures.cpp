// Prediction grids and Grad-CAM panels (see pictures.h).
#include "report/pictures.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "core/error.h"
#include "core/file_check.h"

namespace netspec::report {
namespace {

// Shortens s with "…" until it fits `w` pixels at `size`.
std::string fit(const Canvas& c, std::string s, double size, double w, bool bold = false) {
  if (c.text_width(s, size, bold) <= w) return s;
  while (!s.empty() && c.text_width(s + "...", size, bold) > w) s.pop_back();
  return s + "...";
}

}  // namespace

std::string grid_png(const std::vector<Tile>& tiles, int cols, int cell) {
  if (tiles.empty()) fail("grid", "no images to draw");
  cols = std::max(1, std::min<int>(cols, static_cast<int>(tiles.size())));
  const int rows = (static_cast<int>(tiles.size()) + cols - 1) / cols;
  size_t lines = 0;
  for (const Tile& t : tiles)
    lines = std::max(lines, t.top.size() + (t.truth ? 1 : 0) + (t.caption.empty() ? 0 : 1));
  const double fs = 13, lh = 17, pad = 12;
  const int tw = cell + static_cast<int>(2 * pad);
  const int th = cell + static_cast<int>(pad * 2 + lh * static_cast<double>(lines));
  Canvas c(cols * tw, rows * th);
  for (size_t i = 0; i < tiles.size(); ++i) {
    const Tile& t = tiles[i];
    const double x = (static_cast<int>(i) % cols) * tw + pad;
    double y = (static_cast<int>(i) / cols) * th + pad;
    const bool small = t.image.width < cell && t.image.height < cell;
    const double s = static_cast<double>(cell) / std::max(t.image.width, t.image.height);
    const double w = t.image.width * s, h = t.image.height * s;
    c.image(t.image, x + (cell - w) / 2, y + (cell - h) / 2, w, h, small);
    const bool known = t.truth.has_value() && !t.top.empty();
    const bool right = known && t.top[0].first == *t.truth;
    if (known) {  // a coloured frame: green correct, red wrong
      c.rect(x - 3, y - 3, cell + 6, 3, right ? kCorrect : kWrong);
      c.rect(x - 3, y + cell, cell + 6, 3, right ? kCorrect : kWrong);
      c.rect(x - 3, y - 3, 3, cell + 6, right ? kCorrect : kWrong);
      c.rect(x + cell, y - 3, 3, cell + 6, right ? kCorrect : kWrong);
    }
    y += cell + lh;
    if (!t.caption.empty()) {
      c.text(x, y, fit(c, t.caption, fs - 1, cell), fs - 1, {90, 90, 90});
      y += lh;
    }
    if (t.truth) {
      c.text(x, y, fit(c, "label: " + *t.truth, fs, cell, true), fs, kNeutral, Align::left, true);
      y += lh;
    }
    for (size_t k = 0; k < t.top.size(); ++k) {
      const Rgb col = !known                       ? kNeutral
                      : t.top[k].first == *t.truth ? kCorrect
                      : k == 0                     ? kWrong
                                                   : kNeutral;
      std::string line = fmt::format("{:5.1f}%  {}", 100 * t.top[k].second, t.top[k].first);
      c.text(x, y, fit(c, line, fs, cell, k == 0), fs, col, Align::left, k == 0);
      y += lh;
    }
  }
  return c.png_bytes();
}

std::string cam_panel_png(const RgbImage& input, const RgbImage& overlaid, const std::string& title,
                          const std::vector<std::pair<std::string, double>>& top, int size) {
  const double fs = 14, lh = 18, pad = 12;
  const int w = static_cast<int>(2 * size + 3 * pad);
  const int h = static_cast<int>(size + 2 * pad + lh * (1.5 + static_cast<double>(top.size())));
  Canvas c(w, h);
  c.text(pad, pad + fs, fit(c, title, fs, w - 2 * pad, true), fs, kNeutral, Align::left, true);
  const double y = pad + lh * 1.5;
  const bool small = input.width < size && input.height < size;
  c.image(input, pad, y, size, size, small);
  c.image(overlaid, 2 * pad + size, y, size, size, false);
  double ty = y + size + lh;
  for (size_t k = 0; k < top.size(); ++k) {
    c.text(pad, ty, fmt::format("{:5.1f}%  {}", 100 * top[k].second, top[k].first), fs - 1,
           kNeutral, Align::left, k == 0);
    ty += lh;
  }
  return c.png_bytes();
}

// Exclusive temp file + rename (never follows a planted link; errors carry errno).
void write_bytes(const std::string& path, const std::string& bytes) {
  write_file_atomic(path, bytes, "write");
}

}  // namespace netspec::report
