// Line plots drawn with cairo (canvas.h): antialiased curves, nice auto-scaled axes (a left and an
// optional right y axis), tick labels and axis titles in DejaVu Sans, a legend box, faint curves
// (raw per-step loss under its smoothed curve), markers and vertical marks (epoch boundaries).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/canvas.h"

namespace netspec::report {

struct Series {
  std::string name;                               // legend text; empty: not in the legend
  std::vector<std::pair<double, double>> points;  // (x, y) in data units, x increasing
  Rgb color;
  bool right_axis = false;
  double line_width = 2, alpha = 1;
  bool markers = false;  // a dot at each point (also drawn for a single point)
  bool fit = true;       // false: the axis range ignores it (a raw curve's spikes are clipped)
};

struct PlotSpec {
  int width = 960, height = 540;
  std::string title, x_label = "epoch", left_label = "loss", right_label;
  std::vector<Series> series;
  std::vector<double> vlines;  // x positions of thin dashed vertical marks
  // Fixed ranges (else from the data): e.g. x from 0, the right axis clamped to 0..100.
  std::optional<double> x_min, right_floor, right_ceil;
  std::optional<std::pair<double, double>> left_include;  // also covered by the left axis
};

// A "nice" axis covering [lo, hi]: ticks at 1, 2 or 5 x 10^k steps, about n intervals; the
// range is widened to whole ticks. lo == hi gets a range around the value.
struct Axis {
  double lo = 0, hi = 1, step = 1;
  std::vector<double> ticks;
};
Axis nice_axis(double lo, double hi, int n);
// Tick text with just the decimals the step needs ("0.25", "150", "1e-05" for tiny values).
std::string tick_label(double v, double step);

class Plot {
 public:
  // Lays out and draws `spec` onto `c` (sized spec.width x spec.height).
  Plot(const PlotSpec& spec, const Canvas& c);
  std::pair<double, double> to_pixel(double x, double y, bool right_axis) const;
  const Axis& x_axis() const { return xa_; }
  const Axis& left_axis() const { return la_; }
  const Axis& right_axis() const { return ra_; }
  // Plot area in pixels.
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  // The legend box drawn (x, y, width, height; all 0 without a legend).
  double legend_x = 0, legend_y = 0, legend_w = 0, legend_h = 0;

 private:
  Axis xa_, la_, ra_;
};

// Draws to PNG (raster) or SVG by the path's extension (.png / .svg).
void write_plot(const std::string& path, const PlotSpec& spec);

}  // namespace netspec::report
