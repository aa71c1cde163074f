// Divergence guard for the training loop: a step loss that is not finite, or that grows past
// kDivergenceFactor times the run's first step loss (measured at the initial or resumed
// parameters; a floor of 1 keeps tiny first losses from tripping it), stops the run with an
// error (exit 2) before anything else is saved, so no diverged model becomes `best` or `last`.
// A validation loss that is not finite is divergence too.
#pragma once
#include <cstdint>

namespace netspec::train {

inline constexpr double kDivergenceFactor = 100;

class DivergenceGuard {
 public:
  // Throws `[train] diverged: ...` naming the step, epoch and batch (1-based).
  void check_step(double loss, int64_t step, int epoch, int64_t batch);
  void check_eval(double val_loss, int epoch) const;

 private:
  double first_ = -1;
};

}  // namespace netspec::train
