// tokenCE: per-token softmax cross-entropy for sequence models, logits [B, T, V], labels i32
// [B, T]; tokens whose label is kIgnoreIndex (-100, PyTorch's default) count neither in the sum
// nor in the mean's denominator (reduction='mean' over the kept tokens).
#include "losses/loss.h"

namespace netspec::losses {

// loss = -Σ_{b,t} keep·log p[b,t,y] / max(Σ keep, 1); an ignored label matches no class, so its
// one-hot row is zero and only the count needs the mask.
Value* token_ce(hlo::Builder& b, Value* logits, Value* labels) {
  const hlo::Type& t = logits->type;
  hlo::Type it = hlo::Type::tensor(DType::kI32, t.shape());
  Value* lab = b.broadcast_in_dim(labels, t.shape(), {0, 1});
  Value* onehot = b.convert(b.compare(b.iota(it, 2), lab, "EQ"), t.dtype());
  Value* picked = b.multiply(onehot, log_softmax(b, logits));
  Value* sum = b.reduce(picked, b.scalar(0, t.dtype()), {0, 1, 2}, hlo::OpKind::kAdd);
  Value* keep =
      b.convert(b.compare(labels, b.constant_splat(kIgnoreIndex, labels->type), "NE"), t.dtype());
  Value* count = b.reduce(keep, b.scalar(0, t.dtype()), {0, 1}, hlo::OpKind::kAdd);
  count = b.maximum(count, b.scalar(1, t.dtype()));
  return b.negate(b.divide(sum, count));
}

}  // namespace netspec::losses
