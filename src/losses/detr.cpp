// detrSet: DETR's set loss on detrHeads rows pred [B, Q, K + 5] = (K + 1 logits, the last "no
// object"; box cx, cy, w, h in [0, 1]) against per-query targets labels [B, Q, 5] = (class,
// box) that the host's Hungarian matching assigned (losses/detr_match.h; class K: unmatched,
// its box a placeholder). With m_q = [class_q ≠ K], n = max(Σ m, 1) and DETR's weights:
//   CE  = -Σ w_q log softmax(z_q)[class_q] / Σ w_q,   w_q = 0.1 for no-object, else 1 (eos_coef)
//   L1  = Σ m_q |box_q - t_q|₁ / n;   GIoU = Σ m_q (1 - GIoU(box_q, t_q)) / n
//   loss = CE + 5·L1 + 2·GIoU
#include "losses/loss.h"

namespace netspec::losses {
namespace {

using hlo::Builder;

Value* part(Builder& b, Value* x, int64_t lo, int64_t hi) {
  const Shape& s = x->type.shape();
  return b.slice(x, {0, 0, lo}, {s[0], s[1], hi});
}
Value* col(Builder& b, Value* x, int64_t i) {
  const Shape& s = x->type.shape();
  return b.reshape(part(b, x, i, i + 1), {s[0], s[1]});
}

// Generalised IoU of boxes (cx, cy, w, h) given as [B, Q] columns: IoU - (C - U) / C with U the
// union and C the enclosing box's area.
Value* giou(Builder& b, Value* p, Value* t) {
  const hlo::Type& ty = col(b, p, 0)->type;
  Value* half = b.constant_splat(0.5, ty);
  Value* zero = b.constant_splat(0, ty);
  auto corners = [&](Value* x, int64_t c) {  // (lo, hi) along axis c (0: x, 1: y)
    Value* ctr = col(b, x, c);
    Value* h = b.multiply(col(b, x, c + 2), half);
    return std::pair{b.subtract(ctr, h), b.add(ctr, h)};
  };
  auto [px0, px1] = corners(p, 0);
  auto [py0, py1] = corners(p, 1);
  auto [tx0, tx1] = corners(t, 0);
  auto [ty0, ty1] = corners(t, 1);
  Value* iw = b.maximum(b.subtract(b.minimum(px1, tx1), b.maximum(px0, tx0)), zero);
  Value* ih = b.maximum(b.subtract(b.minimum(py1, ty1), b.maximum(py0, ty0)), zero);
  Value* inter = b.multiply(iw, ih);
  Value* area_p = b.multiply(col(b, p, 2), col(b, p, 3));
  Value* area_t = b.multiply(col(b, t, 2), col(b, t, 3));
  Value* uni = b.subtract(b.add(area_p, area_t), inter);
  Value* cw = b.subtract(b.maximum(px1, tx1), b.minimum(px0, tx0));
  Value* ch = b.subtract(b.maximum(py1, ty1), b.minimum(py0, ty0));
  Value* encl = b.multiply(cw, ch);
  return b.subtract(b.divide(inter, uni), b.divide(b.subtract(encl, uni), encl));
}

Value* total(Builder& b, Value* x) {
  hlo::I64s dims;
  for (int64_t d = 0; d < x->type.rank(); ++d) dims.push_back(d);
  return b.reduce(x, b.scalar(0, x->type.dtype()), dims, hlo::OpKind::kAdd);
}

}  // namespace

Value* detr_set_loss(Builder& b, Value* pred, Value* labels) {
  const Shape& s = pred->type.shape();
  const int64_t k = s[2] - 5;  // real classes; index k is "no object"
  const DType dt = pred->type.dtype();
  Value* logits = part(b, pred, 0, k + 1);
  Value* box = part(b, pred, k + 1, k + 5);
  Value* tbox = part(b, labels, 1, 5);
  Value* cls = b.convert(col(b, labels, 0), DType::kI32);  // [B, Q]
  hlo::Type rows = hlo::Type::tensor(dt, {s[0], s[1]});
  Value* noobj = b.compare(cls, b.constant_splat(double(k), cls->type), "EQ");
  Value* w = b.select(noobj, b.constant_splat(0.1, rows), b.constant_splat(1, rows));
  Value* m = b.select(noobj, b.constant_splat(0, rows), b.constant_splat(1, rows));
  // picked log-probability: Σ_c [c = class] log softmax(z)[c]
  hlo::Type it = hlo::Type::tensor(DType::kI32, logits->type.shape());
  Value* onehot =
      b.convert(b.compare(b.iota(it, 2), b.broadcast_in_dim(cls, it.shape(), {0, 1}), "EQ"), dt);
  Value* picked =
      b.reduce(b.multiply(onehot, log_softmax(b, logits)), b.scalar(0, dt), {2}, hlo::OpKind::kAdd);
  Value* ce = b.negate(b.divide(total(b, b.multiply(w, picked)), total(b, w)));
  Value* n = b.maximum(total(b, m), b.scalar(1, dt));
  Value* l1 = b.reduce(b.abs(b.subtract(box, tbox)), b.scalar(0, dt), {2}, hlo::OpKind::kAdd);
  l1 = b.divide(total(b, b.multiply(m, l1)), n);
  Value* gl = b.subtract(b.constant_splat(1, rows), giou(b, box, tbox));
  gl = b.divide(total(b, b.multiply(m, gl)), n);
  return b.add(ce, b.add(b.multiply(l1, b.scalar(5, dt)), b.multiply(gl, b.scalar(2, dt))));
}

}  // namespace netspec::losses
