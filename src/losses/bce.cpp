// Binary cross-entropy on logits (multi-hot targets).
#include "losses/loss.h"

namespace netspec::losses {

Value* bce_terms(hlo::Builder& b, Value* z, Value* y) {
  const hlo::Type& t = z->type;
  Value* pos = b.maximum(z, b.constant_splat(0, t));
  Value* soft = b.log_plus_one(b.exponential(b.negate(b.abs(z))));
  return b.add(b.subtract(pos, b.multiply(z, y)), soft);
}

// Binary CE on logits, mean over B x N.
Value* bce_with_logits(hlo::Builder& b, Value* z, Value* y) {
  return mean_of_sum(b, bce_terms(b, z, y), 1.0 / double(z->type.numel()));
}

}  // namespace netspec::losses
