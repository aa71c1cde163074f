// Softmax cross-entropy family: classCE (label smoothing; focal when γ > 0) and softLabelCE.
#include <cmath>
#include <limits>

#include "losses/loss.h"

namespace netspec::losses {
Value* log_softmax(hlo::Builder& b, Value* z) { return log_softmax(b, z, z->type.rank() - 1); }

Value* log_softmax(hlo::Builder& b, Value* z, int64_t dim) {
  const hlo::Type& t = z->type;
  hlo::I64s keep;
  for (int64_t d = 0; d < t.rank(); ++d)
    if (d != dim) keep.push_back(d);
  Value* ninf = b.scalar(-std::numeric_limits<double>::infinity(), t.dtype());
  Value* m = b.reduce(z, ninf, {dim}, hlo::OpKind::kMaximum);
  Value* s = b.subtract(z, b.broadcast_in_dim(m, t.shape(), keep));
  Value* sum = b.reduce(b.exponential(s), b.scalar(0, t.dtype()), {dim}, hlo::OpKind::kAdd);
  return b.subtract(s, b.broadcast_in_dim(b.log(sum), t.shape(), keep));
}

// loss = -1/B Σ_i Σ_j q_ij log p_ij, q = (1-ε)·onehot + ε/N; focal: weight (1-p)^γ per term.
Value* class_ce(hlo::Builder& b, Value* logits, Value* labels, double eps, double gamma) {
  const hlo::Type& t = logits->type;
  int64_t n = t.dim(1);
  Value* iota = b.iota(hlo::Type::tensor(DType::kI32, t.shape()), 1);
  Value* lab = b.broadcast_in_dim(labels, t.shape(), {0});
  Value* onehot = b.convert(b.compare(iota, lab, "EQ"), t.dtype());
  Value* q =
      b.add(b.multiply(onehot, b.constant_splat(1 - eps, t)), b.constant_splat(eps / double(n), t));
  return mean_of_sum(b, focal_log_probs(b, q, log_softmax(b, logits), gamma),
                     -1.0 / double(t.dim(0)));
}

Value* focal_log_probs(hlo::Builder& b, Value* w, Value* lsm, double gamma) {
  Value* term = b.multiply(w, lsm);
  if (gamma > 0) {
    const hlo::Type& t = lsm->type;
    Value* one_minus_p = b.subtract(b.constant_splat(1, t), b.exponential(lsm));
    // γ < 1: d(1-p)^γ = γ(1-p)^(γ-1) is infinite at p = 1, where log p = 0: 0·inf = NaN. The
    // base is floored at 1e-6 there (a weight of 1e-6^γ on a term ~0; γ >= 1 is left exact).
    if (gamma < 1) one_minus_p = b.maximum(one_minus_p, b.constant_splat(1e-6, t));
    term = b.multiply(term, b.power(one_minus_p, b.constant_splat(gamma, t)));
  }
  return term;
}

// loss = -1/B Σ_i Σ_j y_ij log softmax(z)_ij for target distributions y.
Value* soft_label_ce(hlo::Builder& b, Value* logits, Value* targets) {
  return mean_of_sum(b, b.multiply(targets, log_softmax(b, logits)),
                     -1.0 / double(logits->type.dim(0)));
}

}  // namespace netspec::losses
