// Binary cross-entropy on logits (multi-hot targets).
#include "losses/loss.h"

namespace netspec::losses {

// Binary CE on logits, mean over B x N: max(z, 0) - z·y + log(1 + exp(-|z|)).
Value* bce_with_logits(hlo::Builder& b, Value* z, Value* y) {
  const hlo::Type& t = z->type;
  Value* pos = b.maximum(z, b.constant_splat(0, t));
  Value* soft = b.log_plus_one(b.exponential(b.negate(b.abs(z))));
  Value* l = b.add(b.subtract(pos, b.multiply(z, y)), soft);
  return mean_of_sum(b, l, 1.0 / double(t.numel()));
}

}  // namespace netspec::losses
