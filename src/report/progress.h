// Progress reporting for the training loop. On a terminal: one bar redrawn in place (carriage
// return) with the step count, running loss, learning rate, samples/s and ETA, at most ~8 times a
// second. Not a terminal: a plain line every `plain_every_s` seconds, so logs stay readable.
#pragma once
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

namespace netspec::report {

// "epoch 1/2 [#####.....] 234/468 loss 0.5123 acc 87.50% lr 0.001 9876 samples/s ETA 0:12" (bar
// only when width > 0, lr only when >= 0, `extra`, the task's running metric, only when not
// empty). The rate counts the steps done since `first` (a resume starts mid-epoch: 45/100 ..
// 100/100, the rate from the steps this process made).
std::string format_progress(const std::string& label, int64_t done, int64_t total, double elapsed_s,
                            double loss, double samples_per_step, int width, int64_t first = 0,
                            double lr = -1, const std::string& metric = "loss",
                            const std::string& extra = "");
// 75 -> "1:15", 3725 -> "1:02:05".
std::string format_duration(double seconds);

class Progress {
 public:
  // `first`: the steps of `total` already done when this bar starts (a mid-epoch resume).
  Progress(std::ostream& os, bool tty, std::string label, int64_t total, int64_t samples_per_step,
           double plain_every_s = 10, int64_t first = 0);
  // `done` steps of `total` finished (first included), `loss` the running mean; `samples` (>= 0):
  // the samples the steps since `first` held, for the rate (a short tail batch counts as what it
  // is); < 0: (done - first) · samples_per_step. `lr` (>= 0): shown; `extra` after the loss.
  void update(int64_t done, double loss, int64_t samples = -1, double lr = -1,
              const std::string& extra = "");
  // What `loss` is called in the line ("loss"; an evaluation: "accuracy"; "": not shown).
  void metric_name(std::string name) { metric_ = std::move(name); }
  // Erases the bar on a terminal (the caller then prints its epoch line).
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& os_;
  bool tty_;
  std::string label_, metric_ = "loss";
  int64_t total_, sps_, first_;
  double every_;
  Clock::time_point t0_, last_;
  bool drawn_ = false;
};

// Where an evaluation's progress goes (os nullptr: quiet) and whether it is a terminal.
struct EvalLog {
  std::ostream* os = nullptr;
  bool tty = false;
};

// An evaluation's progress (`report`): "evaluating N samples ..." when made, then per batch a
// bar (terminal) or a line every 10 s, with the running metric when one is given, and
// "evaluated N samples in X s" from finish().
class EvalProgress {
 public:
  EvalProgress(const EvalLog& log, int64_t count, int64_t batches, int64_t batch,
               const std::string& what = "samples", std::string metric = "");
  // One more batch done; `metric` (when the bar has one) the running value.
  void batch_done(double metric = 0);
  // Erases the bar and prints the closing line; returns the seconds since construction.
  double finish();

 private:
  std::ostream* os_;
  std::unique_ptr<Progress> bar_;
  int64_t count_, done_ = 0;
  std::string what_;
  std::chrono::steady_clock::time_point t0_;
};

// True when file descriptor `fd` is a terminal (isatty).
bool is_terminal(int fd);

}  // namespace netspec::report
