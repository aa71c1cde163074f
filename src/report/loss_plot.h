// A run's loss.png / loss.svg from its metrics rows: per-step train loss (raw, faint; and an EMA,
// bold), per-epoch train and val loss (markers), val top-1 % on the right axis, x in epochs (a
// step at batch b of an epoch of S updates sits at epoch - 1 + b/S), dashed epoch boundaries
// while there are few enough to read (<= 40).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "report/metrics_log.h"
#include "report/plot.h"

namespace netspec::report {

// Bias-corrected exponential moving average: m_t = β m_{t-1} + (1-β) v_t, out_t = m_t / (1-β^t),
// β = 1 - 1/span (TensorBoard's smoothing with the start debiased).
std::vector<double> ema(const std::vector<double>& v, double span);
// The EMA span the loss plot uses for n steps: n/40 clamped to [1, 200].
double ema_span(size_t n);
// At most ~max_points points: per bucket of consecutive points its min and its max in x order
// (keeps spikes visible in a faint raw curve of 100k steps).
std::vector<std::pair<double, double>> decimate(const std::vector<std::pair<double, double>>& pts,
                                                size_t max_points);
PlotSpec loss_plot_spec(const std::vector<Row>& epochs, const std::vector<Row>& steps);
// "training mlp-20261205-041939": the plot's title names the run dir.
std::string loss_plot_title(const std::string& dir);
// Writes DIR/loss.png and DIR/loss.svg, titled loss_plot_title(DIR).
void write_loss_plots(const std::string& dir, const std::vector<Row>& epochs,
                      const std::vector<Row>& steps);

}  // namespace netspec::report
