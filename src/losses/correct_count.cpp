// The train step's running-accuracy count (see loss.h): Σ [argmax_c z = y] over the samples of a
// classIndex loss (logits [B, N], classes on dim 1) or the pixels of a perPixelClass one (logits
// [B, NC, H, W], labels [B, H, W]). argmax takes the first of equal maxima, as torch.argmax.
#include <limits>

#include "losses/loss.h"

namespace netspec::losses {
namespace {

// min{c : z_c = max_k z_k} over dim 1 (i32, the other dims kept); NaN rows give NC (no class).
Value* argmax_dim1(hlo::Builder& b, Value* z) {
  const hlo::Type& t = z->type;
  hlo::I64s keep;
  for (int64_t d = 0; d < t.rank(); ++d)
    if (d != 1) keep.push_back(d);
  Value* ninf = b.scalar(-std::numeric_limits<double>::infinity(), t.dtype());
  Value* m = b.reduce(z, ninf, {1}, hlo::OpKind::kMaximum);
  Value* at_max = b.compare(z, b.broadcast_in_dim(m, t.shape(), keep), "EQ");
  const hlo::Type it = hlo::Type::tensor(DType::kI32, t.shape());
  Value* none = b.scalar(static_cast<double>(t.dim(1)), DType::kI32);
  Value* idx = b.select(at_max, b.iota(it, 1), b.constant_splat(static_cast<double>(t.dim(1)), it));
  return b.reduce(idx, none, {1}, hlo::OpKind::kMinimum);
}

}  // namespace

bool counts_correct(LossKind k) {
  if (!is_lowered(k)) return false;
  const LossTraits& t = loss_traits(k);
  return !t.soft && (t.target == TargetKind::classIndex || t.target == TargetKind::perPixelClass);
}

Value* correct_count(hlo::Builder& b, const LossOptions& o, Value* logits, Value* labels) {
  if (!counts_correct(o.kind)) return nullptr;
  Value* hit = b.convert(b.compare(argmax_dim1(b, logits), labels, "EQ"), DType::kI32);
  hlo::I64s all;
  for (int64_t d = 0; d < hit->type.rank(); ++d) all.push_back(d);
  return b.reduce(hit, b.scalar(0, DType::kI32), all, hlo::OpKind::kAdd);
}

}  // namespace netspec::losses
