// yoloAnchor: the anchor-based detection loss of an fpnDetect head (YOLOv3 box decoding,
// YOLOv5-style balancing). Prediction p [B, N, 5 + K] per anchor row: (tx, ty, tw, th, obj,
// K class logits); rows ordered level (finest first), y, x, anchor like fpnDetect's output.
// Labels f32 [B, N, 6]: (m, x*, y*, w*, h*, c) with m = 1 on the rows that own an object, x*, y*
// its centre's offset inside the cell in [0, 1], w* = log(w / anchor_w), h* = log(h / anchor_h)
// and c the class index (a float). Per image b (then averaged over the batch):
//   L_b = 1/N Σ_n BCE(obj_n, m_n) + Σ_n m_n·(box_n + cls_n) / max(1, Σ_n m_n)
//   box_n (useDiouBox) = 1 - DIoU(decoded, target) in grid units, decoded centre σ(tx), σ(ty),
//         size anchor·exp(tw), anchor·exp(th) (anchor in grid units = pixels / level stride);
//         else (σ(tx) - x*)² + (σ(ty) - y*)² + (tw - w*)² + (th - h*)²
//   cls_n = -w_c·(1 - p_c)^γ·log p_c, p = softmax over the K class logits (w: yoloClsWeights,
//         γ: yoloClsFocalGamma); no class term when K = 0.
// DIoU is translation invariant, so only each row's anchor size (a constant [N]) is baked in.
#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "core/tensor.h"
#include "layers/lower.h"
#include "losses/loss.h"
#include "spec/layer.h"

namespace netspec::losses {
namespace {

constexpr double kDiouEps = 1e-7;  // as ultralytics bbox_iou

Value* col(hlo::Builder& b, Value* x, int64_t k) {  // [B, N, C] -> [B, N] column k
  const Shape& s = x->type.shape();
  return b.reshape(b.slice(x, {0, 0, k}, {s[0], s[1], k + 1}), {s[0], s[1]});
}

Value* sq(hlo::Builder& b, Value* x) { return b.multiply(x, x); }

// [B, N] -> [B]: Σ over the rows of each image.
Value* row_sum(hlo::Builder& b, Value* x) {
  return b.reduce(x, b.scalar(0, x->type.dtype()), {1}, hlo::OpKind::kAdd);
}

Value* const_rows(hlo::Builder& b, const std::vector<double>& v, const hlo::Type& like) {
  Tensor t = Tensor::from<double>(like.dtype(), {like.dim(1)}, v);
  return b.broadcast_in_dim(b.constant(std::move(t)), like.shape(), {1});
}

}  // namespace

Value* diou_loss(hlo::Builder& b, Value* px, Value* py, Value* pw, Value* ph, Value* tx, Value* ty,
                 Value* tw, Value* th) {
  const hlo::Type& t = px->type;
  Value* half = b.constant_splat(0.5, t);
  Value* zero = b.constant_splat(0, t);
  auto lo = [&](Value* c, Value* s) { return b.subtract(c, b.multiply(s, half)); };
  auto hi = [&](Value* c, Value* s) { return b.add(c, b.multiply(s, half)); };
  Value *px1 = lo(px, pw), *px2 = hi(px, pw), *py1 = lo(py, ph), *py2 = hi(py, ph);
  Value *tx1 = lo(tx, tw), *tx2 = hi(tx, tw), *ty1 = lo(ty, th), *ty2 = hi(ty, th);
  Value* iw = b.maximum(b.subtract(b.minimum(px2, tx2), b.maximum(px1, tx1)), zero);
  Value* ih = b.maximum(b.subtract(b.minimum(py2, ty2), b.maximum(py1, ty1)), zero);
  Value* inter = b.multiply(iw, ih);
  Value* uni = b.add(b.subtract(b.add(b.multiply(pw, ph), b.multiply(tw, th)), inter),
                     b.constant_splat(kDiouEps, t));
  Value* cw = b.subtract(b.maximum(px2, tx2), b.minimum(px1, tx1));  // enclosing box
  Value* ch = b.subtract(b.maximum(py2, ty2), b.minimum(py1, ty1));
  Value* c2 = b.add(b.add(sq(b, cw), sq(b, ch)), b.constant_splat(kDiouEps, t));
  Value* rho2 = b.add(sq(b, b.subtract(px, tx)), sq(b, b.subtract(py, ty)));
  return b.add(b.subtract(b.constant_splat(1, t), b.divide(inter, uni)), b.divide(rho2, c2));
}

YoloRows yolo_rows(const LossOptions& o, int64_t n) {
  const char* where = "loss yoloAnchor";
  const auto& s = o.fpn_scales;
  if (s.empty() || s.size() > 5)
    fail(where, "fpnScales must give 1 to 5 level strides, finest first (got {} values)", s.size());
  const int64_t levels = static_cast<int64_t>(s.size());
  for (int64_t lv = 0; lv < levels; ++lv)
    if (!(s[0] > 0 && s[lv] == double(int64_t{1} << lv) * s[0]))
      fail(where, "fpnScales must be [s, 2s, 4s, ...] like fpnDetect's C3/C4/C5 levels (got [{}])",
           fmt::join(s, ", "));
  if (o.anchors.empty() || o.anchors.size() % 2 != 0)
    fail(where, "anchors must be non-empty w,h pairs in pixels (got {} values)", o.anchors.size());
  for (double v : o.anchors)
    if (!(v > 0)) fail(where, "anchors must be positive (got {})", v);
  const int64_t pairs = static_cast<int64_t>(o.anchors.size() / 2);
  const int64_t a = o.det_anchors > 0 ? o.det_anchors : pairs;
  if (pairs != a && pairs != levels * a)
    fail(where,
         "anchors: {} pairs for {} anchors per cell (expected {} shared by every level or "
         "{} level by level)",
         pairs, a, a, levels * a);
  // N = A·(cells of the finest level)·Σ_l 4^-l: with L levels the finest has 4^(L-1)/Σ_l 4^l of
  // the cells (3 levels: 16/21).
  YoloRows r;
  r.anchors = a;
  const int64_t cells = n / a;
  int64_t parts = 0;
  for (int64_t lv = 0; lv < levels; ++lv) parts += int64_t{1} << (2 * lv);
  if (n % a != 0 || cells % parts != 0)
    fail(where,
         "anchors/fpnScales: {} prediction rows do not split into {} levels of {} anchors at "
         "strides [{}] (fpnDetect anchors or the anchor list disagree)",
         n, levels, a, fmt::join(s, ", "));
  const int64_t fine = cells / parts << (2 * (levels - 1));
  for (int64_t lv = 0; lv < levels; ++lv) r.level_rows.push_back((fine >> (2 * lv)) * a);
  for (int64_t lv = 0; lv < levels; ++lv)
    for (int64_t i = 0; i < r.level_rows[lv]; ++i) {
      const int64_t k = (pairs == a ? 0 : lv * a) + i % a;  // this row's anchor pair
      r.anchor_w.push_back(o.anchors[2 * k] / s[lv]);
      r.anchor_h.push_back(o.anchors[2 * k + 1] / s[lv]);
    }
  return r;
}

LossOptions for_net(const LossOptions& o, const NetSpec& net) {
  LossOptions r = o;
  if (o.kind != LossKind::yoloAnchor) return r;
  const Layer* head = nullptr;
  for (const Layer& l : net.layers)
    if (layers::traits(l).detector) head = &l;
  if (!head) fail("loss yoloAnchor", "net {} has no detector head (fpnDetect)", net.name);
  if (o.fpn_scales.size() != 3)
    fail("loss yoloAnchor", "fpnScales must give the 3 fpnDetect level strides (got {} values)",
         o.fpn_scales.size());
  r.det_anchors = layers::traits(*head).detector(*head).first;
  if (net.detStride > 0 && o.fpn_scales.size() == 3 && o.fpn_scales[2] != net.detStride)
    fail("loss yoloAnchor",
         "fpnScales: the coarsest stride must be the net's detStride (got {}, "
         "expected {})",
         o.fpn_scales[2], net.detStride);
  return r;
}

Value* yolo_loss(hlo::Builder& b, const LossOptions& o, Value* pred, Value* labels) {
  const hlo::Type& pt = pred->type;
  if (pt.rank() != 3 || pt.dim(2) < 5)
    fail("loss yoloAnchor", "expects predictions [B, N, 5 + classes] (got {})", pt.str());
  const int64_t batch = pt.dim(0), n = pt.dim(1), k = pt.dim(2) - 5;
  const YoloRows rows = yolo_rows(o, n);
  if (!o.cls_weights.empty() && static_cast<int64_t>(o.cls_weights.size()) != k)
    fail("loss yoloAnchor", "yoloClsWeights: one weight per class (got {}, expected {})",
         o.cls_weights.size(), k);
  const hlo::Type t = hlo::Type::tensor(pt.dtype(), {batch, n});
  const hlo::Type tb = hlo::Type::tensor(pt.dtype(), {batch});
  Value* m = col(b, labels, 0);
  Value* pos = b.compare(m, b.constant_splat(0, t), "GT");
  // Targets of non-object rows are replaced by 0 so no label garbage (inf, NaN) reaches the sum.
  auto target = [&](int64_t j) { return b.select(pos, col(b, labels, j), b.constant_splat(0, t)); };

  // Objectness: focal BCE on logits, mean over the N rows (γ = 0: plain BCE).
  Value* l_obj = b.multiply(row_sum(b, focal_bce_terms(b, col(b, pred, 4), m, o.obj_focal_gamma)),
                            b.constant_splat(1.0 / double(n), tb));

  Value* sx = b.logistic(col(b, pred, 0));
  Value* sy = b.logistic(col(b, pred, 1));
  Value *tw = col(b, pred, 2), *th = col(b, pred, 3);
  Value *gx = target(1), *gy = target(2), *gw = target(3), *gh = target(4);
  Value* box = nullptr;
  if (o.diou_box) {
    Value* aw = const_rows(b, rows.anchor_w, t);
    Value* ah = const_rows(b, rows.anchor_h, t);
    box = diou_loss(b, sx, sy, b.multiply(aw, b.exponential(tw)), b.multiply(ah, b.exponential(th)),
                    gx, gy, b.multiply(aw, b.exponential(gw)), b.multiply(ah, b.exponential(gh)));
  } else {
    box = b.add(b.add(sq(b, b.subtract(sx, gx)), sq(b, b.subtract(sy, gy))),
                b.add(sq(b, b.subtract(tw, gw)), sq(b, b.subtract(th, gh))));
  }
  Value* per_row = box;
  if (k > 0) {
    // -w_c·(1 - p_c)^γ·log p_c of the target class c (one-hot of the rounded class index).
    const hlo::Type tk = hlo::Type::tensor(pt.dtype(), {batch, n, k});
    Value* lsm = log_softmax(b, b.slice(pred, {0, 0, 5}, {batch, n, 5 + k}));
    Value* cls = b.convert(b.round_nearest_even(target(5)), DType::kI32);
    Value* iota = b.iota(hlo::Type::tensor(DType::kI32, tk.shape()), 2);
    Value* hot = b.compare(iota, b.broadcast_in_dim(cls, tk.shape(), {0, 1}), "EQ");
    Value* w = b.convert(hot, pt.dtype());
    if (!o.cls_weights.empty()) {
      Tensor wt = Tensor::from<double>(pt.dtype(), {k}, o.cls_weights);
      w = b.multiply(w, b.broadcast_in_dim(b.constant(std::move(wt)), tk.shape(), {2}));
    }
    Value* term = focal_log_probs(b, w, lsm, o.cls_focal_gamma);
    Value* ce = b.negate(b.reduce(term, b.scalar(0, pt.dtype()), {2}, hlo::OpKind::kAdd));
    per_row = b.add(per_row, ce);
  }
  // Box and class terms over the object rows, normalised by max(1, #objects) per image.
  Value* npos = b.maximum(row_sum(b, m), b.constant_splat(1, tb));
  Value* l_pos = b.divide(row_sum(b, b.multiply(m, per_row)), npos);
  return mean_of_sum(b, b.add(l_obj, l_pos), 1.0 / double(batch));
}

}  // namespace netspec::losses
