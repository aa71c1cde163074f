// af2Fold: AlphaFold 2's backbone loss on a structureModule with `frames` (and distogramBins K):
// predictions [B, L, 12 + L·K] = per residue i (R_i row-major, t_i in Å, distogram logits of
// (i, j, k) at 12 + j·K + k); labels [B, L, 13] = the true frames (R, t) and a residue mask.
//   loss = FAPE / 10 Å + 0.3 · CE_dist                                  (AF2 supplement 1.9)
// FAPE (Alg. 28, backbone, Cα points): x_ij = R_iᵀ(t_j - t_i), d_ij = √(|x_ij - x̂_ij|² + 1e-4),
// mean over masked (i, j) of min(d_ij, 10); CE_dist (1.9.8): the true Cα distance's bin of
// K bins whose K - 1 edges are linspace(2.3125, 21.6875), against log softmax(logits_ij).
// Both are means over the pairs of each sample, then over the batch.
#include "core/error.h"
#include "losses/loss.h"

namespace netspec::losses {

namespace {

constexpr double kFapeClamp = 10, kFapeScale = 10, kFapeEps = 1e-4, kDistWeight = 0.3;
constexpr double kFirstEdge = 2.3125, kLastEdge = 21.6875;

Value* cols(hlo::Builder& b, Value* x, int64_t from, int64_t to) {
  const Shape& s = x->type.shape();
  return b.slice(x, {0, 0, from}, {s[0], s[1], to});
}

// x_ij = R_iᵀ(t_j - t_i) as [B, I, 3, J]: R [B, L, 3, 3], t [B, L, 3].
Value* local_points(hlo::Builder& b, Value* r, Value* t) {
  Value* rt_j = b.dot_general(r, t, {{0}, {0}, {2}, {2}});        // [B, I, c, J] = Σ_a R_iac t_ja
  Value* rt_i = b.dot_general(r, t, {{0, 1}, {0, 1}, {2}, {2}});  // [B, I, c]
  return b.subtract(rt_j, b.broadcast_in_dim(rt_i, rt_j->type.shape(), {0, 1, 2}));
}

// Per sample Σ_ij w·v / max(Σ_ij w, 1), then the batch mean: v, w [B, I, J].
Value* pair_mean(hlo::Builder& b, Value* v, Value* w) {
  const DType dt = v->type.dtype();
  Value* num = b.reduce(b.multiply(v, w), b.scalar(0, dt), {1, 2}, hlo::OpKind::kAdd);
  Value* den = b.reduce(w, b.scalar(0, dt), {1, 2}, hlo::OpKind::kAdd);
  den = b.maximum(den, b.constant_splat(1, den->type));
  return mean_of_sum(b, b.divide(num, den), 1.0 / double(v->type.dim(0)));
}

}  // namespace

hlo::Type fold_label_type(const hlo::Type& pred) {
  if (pred.rank() != 3 || pred.dim(2) < 12 || (pred.dim(2) - 12) % pred.dim(1) != 0 ||
      (pred.dim(2) - 12) / pred.dim(1) == 1)
    fail("loss",
         "af2Fold expects a structureModule with frames: true (and distogramBins 0 or >= 2): "
         "[B, L, 12 + L·bins] (got {})",
         pred.str());
  return hlo::Type::tensor(pred.dtype(), {pred.dim(0), pred.dim(1), 13});
}

Value* fold_loss(hlo::Builder& b, Value* pred, Value* labels) {
  const DType dt = pred->type.dtype();
  const int64_t bt = pred->type.dim(0), n = pred->type.dim(1);
  const int64_t bins = (pred->type.dim(2) - 12) / n;
  auto rot = [&](Value* x) { return b.reshape(cols(b, x, 0, 9), {bt, n, 3, 3}); };
  Value *r = rot(pred), *t = cols(b, pred, 9, 12);
  Value *rt = rot(labels), *tt = cols(b, labels, 9, 12);
  Value* m = b.reshape(cols(b, labels, 12, 13), {bt, n});
  const Shape pair{bt, n, n};
  Value* w = b.multiply(b.broadcast_in_dim(m, pair, {0, 1}), b.broadcast_in_dim(m, pair, {0, 2}));

  Value* diff = b.subtract(local_points(b, r, t), local_points(b, rt, tt));  // [B, I, 3, J]
  Value* d2 = b.reduce(b.multiply(diff, diff), b.scalar(0, dt), {2}, hlo::OpKind::kAdd);
  Value* d = b.sqrt(b.add(d2, b.constant_splat(kFapeEps, d2->type)));
  d = b.minimum(d, b.constant_splat(kFapeClamp, d->type));
  Value* loss = b.multiply(pair_mean(b, d, w), b.scalar(1 / kFapeScale, dt));
  if (bins == 0) return loss;

  // True squared Cα distances [B, I, J] and their bins as one-hot [B, I, J, K]:
  // gt_k = [d² > e_k²] (k < K - 1), onehot = (1, gt) - (gt, 0).
  const Shape p3{bt, n, n, 3};
  Value* dv =
      b.subtract(b.broadcast_in_dim(tt, p3, {0, 1, 3}), b.broadcast_in_dim(tt, p3, {0, 2, 3}));
  Value* dist2 = b.reduce(b.multiply(dv, dv), b.scalar(0, dt), {3}, hlo::OpKind::kAdd);
  const Shape edges{bt, n, n, bins - 1};
  const double step = bins > 2 ? (kLastEdge - kFirstEdge) / double(bins - 2) : 0;
  Value* e = b.add(b.multiply(b.iota(hlo::Type::tensor(dt, edges), 3),
                              b.constant_splat(step, hlo::Type::tensor(dt, edges))),
                   b.constant_splat(kFirstEdge, hlo::Type::tensor(dt, edges)));
  Value* gt =
      b.convert(b.compare(b.broadcast_in_dim(dist2, edges, {0, 1, 2}), b.multiply(e, e), "GT"), dt);
  const hlo::Type one = hlo::Type::tensor(dt, {bt, n, n, 1});
  Value* onehot = b.subtract(b.concatenate({b.constant_splat(1, one), gt}, 3),
                             b.concatenate({gt, b.constant_splat(0, one)}, 3));
  Value* logits = b.reshape(cols(b, pred, 12, 12 + n * bins), {bt, n, n, bins});
  Value* ce = b.reduce(b.multiply(onehot, log_softmax(b, logits, 3)), b.scalar(0, dt), {3},
                       hlo::OpKind::kAdd);  // Σ_k onehot·log p = -CE_ij
  Value* dist = b.negate(pair_mean(b, ce, w));
  return b.add(loss, b.multiply(dist, b.scalar(kDistWeight, dt)));
}

}  // namespace netspec::losses
