// Bounds on runs that a hostile or buggy module could make endless: an iteration cap per
// `while` execution and a wall-clock deadline. `netspec run` and `netspec gradcheck` set them
// from --max-iterations and --timeout; the library default is unbounded, so the trainer's
// modules (which have no open-ended loops) are exempt by construction. Process-wide: set once
// before running, read by every replica thread. Header-only (no link dependency).
#pragma once
#include <chrono>
#include <cstdint>
#include <string_view>

#include "core/error.h"

namespace netspec::exec {

struct RunLimits {
  int64_t max_while_iterations = 0;  // per execution of one while op; 0 = unbounded
  double timeout_s = 0;              // 0 = none; else the deadline below is set
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

inline RunLimits& run_limits() {
  static RunLimits limits;
  return limits;
}

// Sets the limits; the deadline starts now.
inline void set_run_limits(int64_t max_while_iterations, double timeout_s) {
  RunLimits& l = run_limits();
  l.max_while_iterations = max_while_iterations;
  l.timeout_s = timeout_s;
  l.deadline = timeout_s > 0 ? std::chrono::steady_clock::now() +
                                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                       std::chrono::duration<double>(timeout_s))
                             : std::chrono::steady_clock::time_point::max();
}

// Throws `[where] ran past the wall-clock limit` once the deadline has passed.
inline void check_deadline(std::string_view where) {
  const RunLimits& l = run_limits();
  if (l.timeout_s > 0 && std::chrono::steady_clock::now() > l.deadline)
    fail(where, "ran past the wall-clock limit of {} s (--timeout)", l.timeout_s);
}

// Called before iteration `it` (0-based) of a while body: throws once the cap is passed or the
// deadline is over (the ref and cpu executors' while loops).
inline void check_while_iteration(int64_t it) {
  const int64_t cap = run_limits().max_while_iterations;
  if (cap > 0 && it >= cap)
    fail("while",
         "the loop ran {} iterations and its condition is still true (limit: "
         "--max-iterations {})",
         it, cap);
  check_deadline("while");
}

}  // namespace netspec::exec
