// Line plots with cairo (see plot.h).
#include "report/plot.h"

#include <cairo.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/error.h"

namespace netspec::report {
namespace {

constexpr Rgb kAxis{60, 60, 60}, kGrid{232, 232, 232}, kText{30, 30, 30}, kMark{170, 170, 170};

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// Data range of the series on one axis (nullopt when none has points).
std::optional<std::pair<double, double>> range_of(const std::vector<Series>& ss, bool right,
                                                  bool x) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Series& s : ss) {
    if (!x && (s.right_axis != right || !s.fit)) continue;
    for (auto [px, py] : s.points) {
      double v = x ? px : py;
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (lo > hi) return std::nullopt;
  return std::make_pair(lo, hi);
}

}  // namespace

Axis nice_axis(double lo, double hi, int n) {
  if (!(hi > lo)) {
    const double d = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= d;
    hi += d;
  }
  const double raw = (hi - lo) / std::max(1, n);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw * (1 - 1e-9)) {
      step = m * p;
      break;
    }
  Axis a;
  a.step = step;
  a.lo = std::floor(lo / step + 1e-9) * step;
  a.hi = std::ceil(hi / step - 1e-9) * step;
  for (double t = a.lo; t <= a.hi + step * 1e-6; t += step)
    a.ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return a;
}

std::string tick_label(double v, double step) {
  if (v != 0 && std::abs(v) < 1e-3) return fmt::format("{:.0e}", v);
  const int dec =
      step >= 1 ? 0 : std::min(6, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  return fmt::format("{:.{}f}", v, dec);
}

namespace {

// The legend (named series) on a translucent white box in the plot corner that hides the least
// of the curves; p.legend_* record where.
void draw_legend(Plot& p, const PlotSpec& spec, const Canvas& c) {
  cairo_t* cr = c.cr();
  std::vector<const Series*> leg;
  for (const Series& s : spec.series)
    if (!s.name.empty()) leg.push_back(&s);
  if (!leg.empty()) {
    const double lfs = 13, row = 20, sw = 26;
    double w = 0;
    for (const Series* s : leg) w = std::max(w, c.text_width(s->name, lfs));
    const double bw = w + sw + 26, bh = row * leg.size() + 10;
    // The corner whose box hides the least of the curves (matplotlib's loc="best", corners
    // only). Each series counts as the share of its drawn length under the box, sampled along
    // every segment: a 3-epoch validation line weighs as much as 10k raw steps.
    double bx = p.x1 - bw - 10, by = p.y0 + 10;
    double least = 1e300;
    for (auto [cx, cy] :
         {std::pair{p.x1 - bw - 10, p.y0 + 10}, std::pair{p.x1 - bw - 10, p.y1 - bh - 10},
          std::pair{p.x0 + 10, p.y0 + 10}, std::pair{p.x0 + 10, p.y1 - bh - 10}}) {
      double hidden = 0;
      for (const Series& s : spec.series) {
        const int per_segment = s.points.size() > 200 ? 1 : 16;
        size_t n = 0, in = 0;
        for (size_t i = 0; i < s.points.size(); ++i)
          for (int k = 0; k < (i + 1 < s.points.size() ? per_segment : 1); ++k) {
            const double t = static_cast<double>(k) / per_segment;
            const auto& a = s.points[i];
            const auto& b = i + 1 < s.points.size() ? s.points[i + 1] : a;
            auto [px, py] = p.to_pixel(a.first + t * (b.first - a.first),
                                       a.second + t * (b.second - a.second), s.right_axis);
            if (!std::isfinite(py)) continue;
            ++n;
            in += px >= cx && px <= cx + bw && py >= cy && py <= cy + bh;
          }
        if (n > 0) hidden += static_cast<double>(in) / static_cast<double>(n);
      }
      if (hidden < least) least = hidden, bx = cx, by = cy;
    }
    p.legend_x = bx, p.legend_y = by, p.legend_w = bw, p.legend_h = bh;
    c.rect(bx, by, bw, bh, kWhite, 0.85);
    c.color(kGrid);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, bx + 0.5, by + 0.5, bw - 1, bh - 1);
    cairo_stroke(cr);
    for (size_t i = 0; i < leg.size(); ++i) {
      const double ly = by + 5 + row * (i + 0.5);
      c.color(leg[i]->color, std::max(leg[i]->alpha, 0.5));
      cairo_set_line_width(cr, std::max(leg[i]->line_width, 2.0));
      cairo_move_to(cr, bx + 8, ly);
      cairo_line_to(cr, bx + 8 + sw, ly);
      cairo_stroke(cr);
      c.text(bx + 16 + sw, ly + lfs * 0.35, leg[i]->name, lfs, kText);
    }
  }
}

}  // namespace

Plot::Plot(const PlotSpec& spec, const Canvas& c) {
  cairo_t* cr = c.cr();
  const bool has_right = range_of(spec.series, true, false).has_value();
  const double fs = 14;  // tick font size
  x0 = 78;
  x1 = spec.width - (has_right ? 78 : 24);
  y0 = spec.title.empty() ? 20 : 46;
  y1 = spec.height - 58;

  auto xr = range_of(spec.series, false, true).value_or(std::make_pair(0.0, 1.0));
  if (spec.x_min) xr.first = std::min(xr.first, *spec.x_min);
  xa_ = nice_axis(xr.first, xr.second, 8);
  auto lr = range_of(spec.series, false, false).value_or(std::make_pair(0.0, 1.0));
  if (spec.left_include) {
    lr.first = std::min(lr.first, spec.left_include->first);
    lr.second = std::max(lr.second, spec.left_include->second);
  }
  la_ = nice_axis(lr.first, lr.second, 6);
  if (has_right) {
    auto rr = *range_of(spec.series, true, false);
    ra_ = nice_axis(rr.first, rr.second, 6);
    if (spec.right_floor && ra_.lo < *spec.right_floor)
      ra_ = nice_axis(*spec.right_floor, rr.second, 6);
    if (spec.right_ceil && ra_.hi > *spec.right_ceil) {
      ra_ = nice_axis(ra_.lo, *spec.right_ceil, 6);
    }
  }

  if (!spec.title.empty()) c.text(spec.width / 2.0, 30, spec.title, 18, kText, Align::center, true);
  // Grid and tick labels.
  cairo_set_line_width(cr, 1);
  for (double t : la_.ticks) {
    auto [px, py] = to_pixel(xa_.lo, t, false);
    c.color(kGrid);
    cairo_move_to(cr, x0, std::round(py) + 0.5);
    cairo_line_to(cr, x1, std::round(py) + 0.5);
    cairo_stroke(cr);
    c.text(x0 - 8, py + fs * 0.35, tick_label(t, la_.step), fs, kText, Align::right);
  }
  for (double t : xa_.ticks) {
    auto [px, py] = to_pixel(t, la_.lo, false);
    c.color(kGrid);
    cairo_move_to(cr, std::round(px) + 0.5, y0);
    cairo_line_to(cr, std::round(px) + 0.5, y1);
    cairo_stroke(cr);
    c.text(px, y1 + fs + 6, tick_label(t, xa_.step), fs, kText, Align::center);
  }
  if (has_right)
    for (double t : ra_.ticks) {
      auto [px, py] = to_pixel(xa_.lo, t, true);
      c.text(x1 + 8, py + fs * 0.35, tick_label(t, ra_.step), fs, kText, Align::left);
    }
  // Vertical marks (epoch boundaries), thin and dashed.
  const double dash[] = {4, 4};
  cairo_set_dash(cr, dash, 2, 0);
  c.color(kMark);
  for (double v : spec.vlines) {
    if (v <= xa_.lo || v >= xa_.hi) continue;
    double px = std::round(to_pixel(v, la_.lo, false).first) + 0.5;
    cairo_move_to(cr, px, y0);
    cairo_line_to(cr, px, y1);
    cairo_stroke(cr);
  }
  cairo_set_dash(cr, nullptr, 0, 0);
  // Curves, clipped to the plot area.
  cairo_save(cr);
  cairo_rectangle(cr, x0, y0, x1 - x0, y1 - y0);
  cairo_clip(cr);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  for (const Series& s : spec.series) {
    if (s.points.empty()) continue;
    c.color(s.color, s.alpha);
    cairo_set_line_width(cr, s.line_width);
    bool pen = false;
    for (auto [x, y] : s.points) {
      if (!std::isfinite(y)) {
        pen = false;
        continue;
      }
      auto [px, py] = to_pixel(x, y, s.right_axis);
      pen ? cairo_line_to(cr, px, py) : cairo_move_to(cr, px, py);
      pen = true;
    }
    cairo_stroke(cr);
  }
  cairo_restore(cr);
  // Markers unclipped: a point on the last epoch sits on the frame and stays whole.
  for (const Series& s : spec.series)
    if (s.markers || s.points.size() == 1)
      for (auto [x, y] : s.points) {
        if (!std::isfinite(y)) continue;
        auto [px, py] = to_pixel(x, y, s.right_axis);
        c.color(s.color, s.alpha);
        cairo_arc(cr, px, py, s.line_width + 2.5, 0, 2 * M_PI);
        cairo_fill(cr);
      }
  // Axes frame and titles.
  c.color(kAxis);
  cairo_set_line_width(cr, 1.2);
  cairo_rectangle(cr, x0, y0, x1 - x0, y1 - y0);
  cairo_stroke(cr);
  c.text((x0 + x1) / 2, spec.height - 14, spec.x_label, 15, kText, Align::center);
  c.text(22, (y0 + y1) / 2, spec.left_label, 15, kText, Align::center, false, M_PI / 2);
  if (has_right)
    c.text(spec.width - 14, (y0 + y1) / 2, spec.right_label, 15, kText, Align::center, false,
           M_PI / 2);
  draw_legend(*this, spec, c);  // top right inside the plot unless that hides more
}

std::pair<double, double> Plot::to_pixel(double x, double y, bool right_axis) const {
  const Axis& ya = right_axis ? ra_ : la_;
  return {x0 + (x - xa_.lo) / (xa_.hi - xa_.lo) * (x1 - x0),
          y1 - (y - ya.lo) / (ya.hi - ya.lo) * (y1 - y0)};
}

void write_plot(const std::string& path, const PlotSpec& spec) {
  if (ends_with(path, ".svg")) {
    Canvas c(path, spec.width, spec.height);
    Plot p(spec, c);
    c.finish();
    return;
  }
  if (!ends_with(path, ".png")) fail("plot", "{}: expected a .png or .svg path", path);
  Canvas c(spec.width, spec.height);
  Plot p(spec, c);
  c.write_png(path);
}

}  // namespace netspec::report
