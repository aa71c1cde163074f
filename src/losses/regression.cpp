// Regression losses: floatTargetMse.
#include "losses/loss.h"

namespace netspec::losses {

// Mean squared error over every element: 1/numel Σ (p - y)².
Value* mse(hlo::Builder& b, Value* p, Value* y) {
  Value* d = b.subtract(p, y);
  return mean_of_sum(b, b.multiply(d, d), 1.0 / double(p->type.numel()));
}

}  // namespace netspec::losses
