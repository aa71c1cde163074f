// Per-pixel segmentation losses on logits [B, NC, H, W] and labels i32 [B, H, W] (the seed's
// seg-loss block). Softmax over the channel dim; N = B·H·W pixels.
//   perPixelCE          -1/N Σ_k Σ_c q_kc log p_kc, q = (1-ε)·onehot + ε/NC (label smoothing ε)
//   perPixelFocalCE(γ)  -1/N Σ_k Σ_c q_kc (1 - p_kc)^γ log p_kc (γ = 0: the same graph as CE)
//   perPixelWeightedCE  -Σ_k w_{y_k} log p_{k,y_k} / Σ_k w_{y_k} (torch CrossEntropyLoss(weight))
//   perPixelDice        1 - 1/NC Σ_c (2 I_c + s)/(P_c + Y_c + s), per class over the whole batch:
//                       I_c = Σ p_c y_c, P_c = Σ p_c, Y_c = Σ y_c (raw one-hot y, s = kDiceSmooth)
//   perPixelDiceCE      Dice + CE, label smoothing on the CE half only.
// Gradients come from the VJP rules (no hand-written backward), checked by finite differences.
#include "core/error.h"
#include "losses/loss.h"

namespace netspec::losses {
namespace {

// The Dice smoothing term: regularises the ratio and scores an absent, unpredicted class 1.
constexpr double kDiceSmooth = 1.0;

// onehot(labels) [B, NC, H, W] in the logits' dtype.
Value* onehot(hlo::Builder& b, Value* labels, const hlo::Type& t) {
  Value* iota = b.iota(hlo::Type::tensor(DType::kI32, t.shape()), 1);
  Value* lab = b.broadcast_in_dim(labels, t.shape(), {0, 2, 3});
  return b.convert(b.compare(iota, lab, "EQ"), t.dtype());
}

int64_t pixels(const hlo::Type& t) { return t.dim(0) * t.dim(2) * t.dim(3); }

Value* ce(hlo::Builder& b, Value* logits, Value* labels, double eps, double gamma) {
  const hlo::Type& t = logits->type;
  Value* q = onehot(b, labels, t);
  if (eps > 0)
    q = b.add(b.multiply(q, b.constant_splat(1 - eps, t)),
              b.constant_splat(eps / double(t.dim(1)), t));
  Value* terms = focal_log_probs(b, q, log_softmax(b, logits, 1), gamma);
  return mean_of_sum(b, terms, -1.0 / double(pixels(t)));
}

Value* weighted_ce(hlo::Builder& b, Value* logits, Value* labels, const std::vector<double>& w) {
  const hlo::Type& t = logits->type;
  if (static_cast<int64_t>(w.size()) != t.dim(1))
    fail("loss", "perPixelWeightedCE lossWeights count (got {}, expected {} = the class count)",
         w.size(), t.dim(1));
  Value* wc = b.constant(Tensor::from<double>(t.dtype(), {t.dim(1)}, w));
  Value* wq = b.multiply(onehot(b, labels, t), b.broadcast_in_dim(wc, t.shape(), {1}));
  Value* num = mean_of_sum(b, b.multiply(wq, log_softmax(b, logits, 1)), -1.0);
  // Σ_k w_{y_k} depends on the labels only; max(., tiny) keeps an all-zero-weight batch finite.
  Value* den = b.maximum(mean_of_sum(b, wq, 1.0), b.scalar(1e-30, t.dtype()));
  return b.divide(num, den);
}

Value* dice(hlo::Builder& b, Value* logits, Value* labels) {
  const hlo::Type& t = logits->type;
  Value* p = b.exponential(log_softmax(b, logits, 1));
  Value* y = onehot(b, labels, t);
  Value* zero = b.scalar(0, t.dtype());
  auto per_class = [&](Value* v) { return b.reduce(v, zero, {0, 2, 3}, hlo::OpKind::kAdd); };
  const hlo::Type ct = hlo::Type::tensor(t.dtype(), {t.dim(1)});
  Value* s = b.constant_splat(kDiceSmooth, ct);
  Value* num = b.add(b.multiply(per_class(b.multiply(p, y)), b.constant_splat(2, ct)), s);
  Value* den = b.add(b.add(per_class(p), per_class(y)), s);
  Value* mean_d = mean_of_sum(b, b.divide(num, den), 1.0 / double(t.dim(1)));
  return b.subtract(b.scalar(1, t.dtype()), mean_d);
}

}  // namespace

bool is_per_pixel(LossKind k) {
  return k == LossKind::perPixelCE || k == LossKind::perPixelDice ||
         k == LossKind::perPixelDiceCE || k == LossKind::perPixelWeightedCE ||
         k == LossKind::perPixelFocalCE;
}

Value* per_pixel_loss(hlo::Builder& b, const LossOptions& o, Value* logits, Value* labels) {
  const double eps = o.label_smoothing;
  if (eps > 0 && (o.kind == LossKind::perPixelDice || o.kind == LossKind::perPixelWeightedCE))
    fail("loss", "{} does not take labelSmoothing (got {}, expected 0)", enum_name(o.kind), eps);
  switch (o.kind) {
    case LossKind::perPixelCE:
      return ce(b, logits, labels, eps, 0);
    case LossKind::perPixelFocalCE:
      return ce(b, logits, labels, eps, o.focal_gamma);
    case LossKind::perPixelWeightedCE:
      return weighted_ce(b, logits, labels, o.class_weights);
    case LossKind::perPixelDice:
      return dice(b, logits, labels);
    case LossKind::perPixelDiceCE:
      return b.add(dice(b, logits, labels), ce(b, logits, labels, eps, 0));
    default:
      fail("loss", "internal: {} is not a per-pixel loss", enum_name(o.kind));
  }
}

}  // namespace netspec::losses
