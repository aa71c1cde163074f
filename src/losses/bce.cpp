// Binary cross-entropy on logits (multi-hot targets).
#include "losses/loss.h"

namespace netspec::losses {

Value* bce_terms(hlo::Builder& b, Value* z, Value* y) {
  const hlo::Type& t = z->type;
  Value* pos = b.maximum(z, b.constant_splat(0, t));
  Value* soft = b.log_plus_one(b.exponential(b.negate(b.abs(z))));
  return b.add(b.subtract(pos, b.multiply(z, y)), soft);
}

Value* focal_bce_terms(hlo::Builder& b, Value* z, Value* y, double gamma) {
  Value* ce = bce_terms(b, z, y);
  if (gamma == 0) return ce;
  const hlo::Type& t = z->type;
  // (1-p)^γ = exp(-γ·softplus(z)), p^γ = exp(-γ·softplus(-z)); softplus(±z) = bce_terms(z, 0|1).
  Value* ng = b.constant_splat(-gamma, t);
  Value* w1 = b.exponential(b.multiply(ng, bce_terms(b, z, b.constant_splat(0, t))));
  Value* w0 = b.exponential(b.multiply(ng, bce_terms(b, z, b.constant_splat(1, t))));
  Value* w = b.add(b.multiply(y, w1), b.multiply(b.subtract(b.constant_splat(1, t), y), w0));
  return b.multiply(w, ce);
}

// Binary CE on logits, mean over B x N.
Value* bce_with_logits(hlo::Builder& b, Value* z, Value* y) {
  return mean_of_sum(b, bce_terms(b, z, y), 1.0 / double(z->type.numel()));
}

}  // namespace netspec::losses
