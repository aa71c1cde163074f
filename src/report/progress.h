// Progress reporting for the training loop. On a terminal: one bar redrawn in place (carriage
// return) with the step count, running loss, samples/s and ETA, at most ~8 times a second. Not a
// terminal: a plain line every `plain_every_s` seconds, so logs stay readable.
#pragma once
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace netspec::report {

// "epoch 1/2 [#####.....] 234/468 loss 0.5123 9876 samples/s ETA 0:12" (bar only when width > 0).
std::string format_progress(const std::string& label, int64_t done, int64_t total, double elapsed_s,
                            double loss, double samples_per_step, int width);
// 75 -> "1:15", 3725 -> "1:02:05".
std::string format_duration(double seconds);

class Progress {
 public:
  Progress(std::ostream& os, bool tty, std::string label, int64_t total, int64_t samples_per_step,
           double plain_every_s = 10);
  // `done` steps of `total` finished (counted from this object's start), `loss` the running mean;
  // `samples` (>= 0): the samples those steps held, for the rate (a short tail batch counts as
  // what it is); < 0: done · samples_per_step.
  void update(int64_t done, double loss, int64_t samples = -1);
  // Erases the bar on a terminal (the caller then prints its epoch line).
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& os_;
  bool tty_;
  std::string label_;
  int64_t total_, sps_;
  double every_;
  Clock::time_point t0_, last_;
  bool drawn_ = false;
};

// True when file descriptor `fd` is a terminal (isatty).
bool is_terminal(int fd);

}  // namespace netspec::report
