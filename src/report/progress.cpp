// Progress bar and periodic lines (see progress.h).
#include "report/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace netspec::report {

std::string format_duration(double seconds) {
  auto s = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string format_progress(const std::string& label, int64_t done, int64_t total, double elapsed_s,
                            double loss, double samples_per_step, int width, int64_t first,
                            double lr, const std::string& metric, const std::string& extra) {
  std::string bar;
  if (width > 0) {
    int fill = total > 0 ? static_cast<int>(width * std::min(done, total) / total) : 0;
    bar = "[" + std::string(fill, '#') + std::string(width - fill, '.') + "] ";
  }
  // Rate from the steps made since `first`; ETA = remaining steps at that rate.
  double rate = elapsed_s > 0 ? static_cast<double>(done - first) / elapsed_s : 0;
  std::string eta = rate > 0 ? format_duration(static_cast<double>(total - done) / rate) : "?";
  const std::string lr_text = lr >= 0 ? fmt::format(" lr {:.3g}", lr) : "";
  const std::string value = metric.empty() ? "" : fmt::format(" {} {:.4f}", metric, loss);
  return fmt::format("{} {}{}/{}{}{}{} {:.0f} samples/s ETA {}", label, bar, done, total, value,
                     extra.empty() ? "" : " " + extra, lr_text, rate * samples_per_step, eta);
}

Progress::Progress(std::ostream& os, bool tty, std::string label, int64_t total,
                   int64_t samples_per_step, double plain_every_s, int64_t first)
    : os_(os),
      tty_(tty),
      label_(std::move(label)),
      total_(total),
      sps_(samples_per_step),
      first_(first),
      every_(plain_every_s),
      t0_(Clock::now()),
      last_(t0_) {}

void Progress::update(int64_t done, double loss, int64_t samples, double lr,
                      const std::string& extra) {
  auto now = Clock::now();
  // Samples per step so far: exact when the caller counts them (a tail batch is smaller).
  const int64_t made = done - first_;
  const double sps = samples >= 0 && made > 0
                         ? static_cast<double>(samples) / static_cast<double>(made)
                         : static_cast<double>(sps_);
  double since = std::chrono::duration<double>(now - last_).count();
  double el = std::chrono::duration<double>(now - t0_).count();
  if (tty_) {
    if (since < 0.125 && done < total_) return;
    os_ << '\r'
        << format_progress(label_, done, total_, el, loss, sps, 30, first_, lr, metric_, extra)
        << "\x1b[K" << std::flush;
    drawn_ = true;
  } else {
    if (since < every_ || done >= total_) return;
    os_ << format_progress(label_, done, total_, el, loss, sps, 0, first_, lr, metric_, extra)
        << '\n'
        << std::flush;
  }
  last_ = now;
}

void Progress::finish() {
  if (tty_ && drawn_) os_ << "\r\x1b[K" << std::flush;
  drawn_ = false;
}

EvalProgress::EvalProgress(const EvalLog& log, int64_t count, int64_t batches, int64_t batch,
                           const std::string& what, std::string metric)
    : os_(log.os), count_(count), what_(what), t0_(std::chrono::steady_clock::now()) {
  if (!os_) return;
  *os_ << fmt::format("evaluating {} {} ...\n", count, what) << std::flush;
  bar_ = std::make_unique<Progress>(*os_, log.tty, "evaluating", batches, batch);
  bar_->metric_name(std::move(metric));
}

void EvalProgress::batch_done(double metric) {
  if (bar_) bar_->update(++done_, metric);
}

double EvalProgress::finish() {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  if (bar_) {
    bar_->finish();
    bar_.reset();
    *os_ << fmt::format("evaluated {} {} in {:.1f} s\n", count_, what_, s) << std::flush;
  }
  return s;
}

bool is_terminal(int fd) { return isatty(fd) == 1; }

}  // namespace netspec::report
