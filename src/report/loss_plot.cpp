// loss.png of a run (see loss_plot.h).
#include "report/loss_plot.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace netspec::report {

std::vector<double> ema(const std::vector<double>& v, double span) {
  const double beta = 1 - 1 / std::max(1.0, span);
  std::vector<double> out;
  out.reserve(v.size());
  double m = 0, bias = 1;
  for (double x : v) {
    m = beta * m + (1 - beta) * x;
    bias *= beta;
    out.push_back(bias < 1 ? m / (1 - bias) : x);
  }
  return out;
}

double ema_span(size_t n) { return std::clamp(static_cast<double>(n) / 40, 1.0, 200.0); }

std::vector<std::pair<double, double>> decimate(const std::vector<std::pair<double, double>>& pts,
                                                size_t max_points) {
  if (pts.size() <= max_points || max_points < 2) return pts;
  const size_t buckets = max_points / 2;
  std::vector<std::pair<double, double>> out;
  for (size_t b = 0; b < buckets; ++b) {
    const size_t lo = pts.size() * b / buckets, hi = pts.size() * (b + 1) / buckets;
    if (lo >= hi) continue;
    auto [mn, mx] = std::minmax_element(pts.begin() + lo, pts.begin() + hi,
                                        [](auto& a, auto& c) { return a.second < c.second; });
    if (mn > mx) std::swap(mn, mx);  // keep x order
    out.push_back(*mn);
    if (mx != mn) out.push_back(*mx);
  }
  return out;
}

PlotSpec loss_plot_spec(const std::vector<Row>& epochs, const std::vector<Row>& steps) {
  constexpr Rgb kTrain{214, 39, 40}, kVal{31, 119, 180}, kAcc{44, 160, 44};
  PlotSpec ps;
  ps.title = "training";
  ps.x_label = "epoch";
  ps.left_label = "loss";
  ps.right_label = "val top-1 (%)";
  ps.x_min = 0;
  ps.right_floor = 0;
  ps.right_ceil = 100;
  std::vector<std::pair<double, double>> raw;
  for (const Row& r : steps) {
    auto x = get(r, "epoch"), y = get(r, "train_loss");
    if (x && y && std::isfinite(*y)) raw.emplace_back(*x, *y);
  }
  Series tl{"train loss (epoch mean)", {}, kTrain}, vl{"val loss", {}, kVal},
      va{"val top-1 % (right axis)", {}, kAcc, true};
  tl.markers = vl.markers = va.markers = epochs.size() <= 60;
  int last_epoch = 0;
  for (const Row& r : epochs) {
    double e = get(r, "epoch").value_or(0);
    last_epoch = std::max(last_epoch, static_cast<int>(e));
    if (auto v = get(r, "train_loss")) tl.points.emplace_back(e, *v);
    if (auto v = get(r, "val_loss")) vl.points.emplace_back(e, *v);
    if (auto v = get(r, "val_top1")) va.points.emplace_back(e, 100 * *v);
  }
  if (!raw.empty()) {
    std::vector<double> ys;
    for (auto& p : raw) ys.push_back(p.second);
    std::vector<double> sm = ema(ys, ema_span(ys.size()));
    Series s{"train loss per step (raw)", decimate(raw, 4000), kTrain, false, 1, 0.25};
    // The raw curve's 1st..99th percentile sets the axis: a rare spike is clipped, not squashing
    // the rest.
    s.fit = false;
    std::vector<double> sorted = ys;
    std::sort(sorted.begin(), sorted.end());
    const size_t lo = sorted.size() / 100, hi = sorted.size() - 1 - sorted.size() / 100;
    ps.left_include = std::make_pair(sorted[lo], sorted[hi]);
    std::vector<std::pair<double, double>> smp;
    for (size_t i = 0; i < raw.size(); ++i) smp.emplace_back(raw[i].first, sm[i]);
    Series e{"train loss per step (EMA)", decimate(smp, 4000), {150, 20, 20}, false, 2.2};
    e.fit = false;  // it lies within the raw range
    ps.series.push_back(s);
    ps.series.push_back(e);
    tl.line_width = 1.5;
    tl.alpha = 0.8;
  }
  // Detection runs (docs/detection.md): mAP on the right axis instead of top-1.
  Series m50{"val mAP@0.5 % (right axis)", {}, kAcc, true},
      map{"val mAP@[.5:.95] % (right axis)", {}, {148, 103, 189}, true};
  m50.markers = map.markers = va.markers;
  for (const Row& r : epochs) {
    double e = get(r, "epoch").value_or(0);
    if (auto v = get(r, "val_map50")) m50.points.emplace_back(e, 100 * *v);
    if (auto v = get(r, "val_map")) map.points.emplace_back(e, 100 * *v);
  }
  // Segmentation runs: val_top1 is the pixel accuracy, shown with the mIoU.
  Series miou{"val mIoU % (right axis)", {}, {148, 103, 189}, true};
  miou.markers = va.markers;
  for (const Row& r : epochs)
    if (auto v = get(r, "val_miou"))
      miou.points.emplace_back(get(r, "epoch").value_or(0), 100 * *v);
  // Protein folding (tasks/fold): lDDT-Cα (0-100) on the right axis.
  Series lddt{"val lDDT-Cα (right axis)", {}, kAcc, true};
  lddt.markers = va.markers;
  for (const Row& r : epochs)
    if (auto v = get(r, "val_lddt_ca")) lddt.points.emplace_back(get(r, "epoch").value_or(0), *v);
  ps.series.push_back(tl);
  ps.series.push_back(vl);
  if (!lddt.points.empty()) {
    ps.right_label = "val lDDT-Cα";
    ps.series.push_back(lddt);
  } else if (!miou.points.empty()) {
    ps.right_label = "val pixel accuracy / mIoU (%)";
    va.name = "val pixel accuracy % (right axis)";
    ps.series.push_back(va);
    ps.series.push_back(miou);
  } else if (!m50.points.empty()) {
    ps.right_label = "val mAP (%)";
    ps.series.push_back(m50);
    ps.series.push_back(map);
  } else if (!va.points.empty()) {
    ps.series.push_back(va);
  } else {  // an MSE task (diffusion, regression): no accuracy, no right axis
    ps.right_label.clear();
  }
  if (last_epoch <= 40)
    for (int e = 1; e < last_epoch; ++e) ps.vlines.push_back(e);
  return ps;
}

std::string loss_plot_title(const std::string& dir) {
  // The run dir's name (net and start time by default) tells two runs' plots apart.
  std::filesystem::path p = std::filesystem::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "runs/a/" -> "runs/a"
  const std::string run = p.filename().string();
  return run.empty() || run == "." || run == ".." ? "training" : "training " + run;
}

void write_loss_plots(const std::string& dir, const std::vector<Row>& epochs,
                      const std::vector<Row>& steps) {
  PlotSpec ps = loss_plot_spec(epochs, steps);
  ps.title = loss_plot_title(dir);
  write_plot((std::filesystem::path(dir) / "loss.png").string(), ps);
  write_plot((std::filesystem::path(dir) / "loss.svg").string(), ps);
}

}  // namespace netspec::report
