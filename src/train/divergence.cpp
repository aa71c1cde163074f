#include "train/divergence.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace netspec::train {

void DivergenceGuard::check_step(double loss, int64_t step, int epoch, int64_t batch) {
  if (!std::isfinite(loss))
    fail("train",
         "diverged: loss is {} at step {} (epoch {}, batch {}); stopped, the last checkpoint is "
         "kept (lower the learning rate?)",
         loss, step, epoch, batch);
  if (first_ < 0) {
    first_ = loss;
    return;
  }
  const double limit = kDivergenceFactor * std::max(first_, 1.0);
  if (loss > limit)
    fail("train",
         "diverged: loss {:.4g} at step {} (epoch {}, batch {}) is more than {:g}x the run's "
         "first step loss {:.4g} (limit {:.4g}); stopped, the last checkpoint is kept (lower the "
         "learning rate?)",
         loss, step, epoch, batch, kDivergenceFactor, first_, limit);
}

void DivergenceGuard::check_eval(double val_loss, int epoch) const {
  if (!std::isfinite(val_loss))
    fail("train",
         "diverged: the validation loss after epoch {} is {}; stopped before saving, the last "
         "checkpoint is kept (lower the learning rate?)",
         epoch, val_loss);
}

}  // namespace netspec::train
