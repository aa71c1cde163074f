// Line plots drawn by hand into an RGB buffer and written as PNG (libpng): axes with numbered
// ticks, up to two y axes (left: e.g. loss, right: e.g. accuracy), a legend, and a tiny built-in
// 3x5 bitmap font (digits, letters, a few signs; drawn at 2x). Enough for loss.png per run.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace netspec::report {

using Rgb = std::array<uint8_t, 3>;

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // row-major, 3 bytes per pixel
  Image(int w, int h, Rgb bg);
  Rgb at(int x, int y) const;
  void set(int x, int y, Rgb c);  // ignores points outside
};

struct Curve {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y) in data units, x increasing
  Rgb color;
  bool right_axis = false;
};

struct PlotSpec {
  int width = 800, height = 480;
  std::string x_label = "epoch", left_label = "loss", right_label = "accuracy";
  std::vector<Curve> curves;
};

inline constexpr Rgb kBackground{255, 255, 255};

// Draws the plot; the axes' ranges come from the data (left from 0 or the minimum, right 0..1
// unless the data leave it). Layout: to_pixel maps a data point of curve i to its pixel.
class Plot {
 public:
  explicit Plot(PlotSpec spec);
  const Image& image() const { return img_; }
  std::pair<int, int> to_pixel(double x, double y, bool right_axis) const;

 private:
  PlotSpec spec_;
  Image img_;
  int x0_, x1_, y0_, y1_;  // plot area: x0 left, x1 right, y0 top, y1 bottom
  double xmin_, xmax_, lmin_, lmax_, rmin_, rmax_;
  void draw();
};

// Draws `text` (upper-cased) with its top-left at (x, y), `scale` pixels per font dot.
void draw_text(Image& img, int x, int y, const std::string& text, Rgb c, int scale = 2);
int text_width(const std::string& text, int scale = 2);
// Writes an 8-bit RGB PNG. Throws netspec::Error naming the path on failure.
void write_png(const std::string& path, const Image& img);

}  // namespace netspec::report
