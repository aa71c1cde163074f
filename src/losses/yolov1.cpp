// yolov1Masked: the seed's YOLOv1 grid loss. Prediction p [B, P, gH, gW] with P = 5 + K channels
// per cell (x, y, w, h, conf, K class scores); labels f32 [B, P + 1, gH, gW]: the target in the
// same channel layout (x, y = the centre's offset in the cell in [0, 1], w, h = size relative to
// the image, conf = 1, one-hot class) and the cell mask m (1 on the cell owning an object) last.
// Per image (then averaged over the batch), Σ over cells:
//   λc·m·[(x-x̂)² + (y-ŷ)²] + λc·m·[(√⌈w⌉ε - √⌈ŵ⌉ε)² + (√⌈h⌉ε - √⌈ĥ⌉ε)²]     ⌈w⌉ε = max(w, ε)
//   + m·(conf - ĉonf)² + λn·(1-m)·conf² + m·Σ_k (p_k - p̂_k)²
// useDiouBox replaces the two box terms by λc·m·(1 - DIoU) on the positive parametrisation
// cx = σ(x)/gW, cy = σ(y)/gH, w = exp(w), h = exp(h) against cx* = x*/gW, w* (the cell offset
// j/gW is shared by both boxes and DIoU is translation invariant).
#include "core/error.h"
#include "losses/loss.h"

namespace netspec::losses {
namespace {

// [B, C, H, W] -> [B, H, W] channel k.
Value* chan(hlo::Builder& b, Value* x, int64_t k) {
  const Shape& s = x->type.shape();
  return b.reshape(b.slice(x, {0, k, 0, 0}, {s[0], k + 1, s[2], s[3]}), {s[0], s[2], s[3]});
}

Value* sq(hlo::Builder& b, Value* x) { return b.multiply(x, x); }

}  // namespace

hlo::Type yolov1_label_type(const hlo::Type& pred) {
  if (pred.rank() != 4 || pred.dim(1) < 5)
    fail("loss yolov1Masked", "expects grid predictions [B, 5 + classes, gH, gW] (got {})",
         pred.str());
  return hlo::Type::tensor(pred.dtype(), {pred.dim(0), pred.dim(1) + 1, pred.dim(2), pred.dim(3)});
}

Value* yolov1_diou_cells(hlo::Builder& b, Value* pred, Value* tgt, Value* mask) {
  const hlo::Type& t = mask->type;
  const double gh = double(t.dim(1)), gw = double(t.dim(2));
  Value* pos = b.compare(mask, b.constant_splat(0, t), "GT");
  // Targets off the object cells become a unit box so no label garbage reaches the sum.
  auto target = [&](int64_t k, double off) {
    return b.select(pos, chan(b, tgt, k), b.constant_splat(off, t));
  };
  Value* inv_w = b.constant_splat(1 / gw, t);
  Value* inv_h = b.constant_splat(1 / gh, t);
  Value* px = b.multiply(b.logistic(chan(b, pred, 0)), inv_w);
  Value* py = b.multiply(b.logistic(chan(b, pred, 1)), inv_h);
  Value* pw = b.exponential(chan(b, pred, 2));
  Value* ph = b.exponential(chan(b, pred, 3));
  Value* d = diou_loss(b, px, py, pw, ph, b.multiply(target(0, 0.5), inv_w),
                       b.multiply(target(1, 0.5), inv_h), target(2, 1), target(3, 1));
  return b.multiply(mask, d);
}

Value* yolov1_loss(hlo::Builder& b, const LossOptions& o, Value* pred, Value* labels) {
  const hlo::Type& pt = pred->type;
  const int64_t batch = pt.dim(0), p = pt.dim(1), gh = pt.dim(2), gw = pt.dim(3);
  const hlo::Type t = hlo::Type::tensor(pt.dtype(), {batch, gh, gw});
  Value* tgt = b.slice(labels, {0, 0, 0, 0}, {batch, p, gh, gw});
  Value* m = chan(b, labels, p);
  Value* pos = b.compare(m, b.constant_splat(0, t), "GT");
  Value* zero = b.constant_splat(0, t);
  auto target = [&](int64_t k) { return b.select(pos, chan(b, tgt, k), zero); };
  auto c = [&](double v) { return b.constant_splat(v, t); };
  Value* box = nullptr;
  if (o.diou_box) {
    box = yolov1_diou_cells(b, pred, tgt, m);
  } else {
    // √max(w, ε): the floor keeps the square root's derivative finite at w -> 0 (and w < 0).
    auto root = [&](Value* w) { return b.sqrt(b.maximum(w, c(o.sqrt_eps))); };
    Value* xy = b.add(sq(b, b.subtract(chan(b, pred, 0), target(0))),
                      sq(b, b.subtract(chan(b, pred, 1), target(1))));
    Value* wh = b.add(sq(b, b.subtract(root(chan(b, pred, 2)), root(target(2)))),
                      sq(b, b.subtract(root(chan(b, pred, 3)), root(target(3)))));
    box = b.multiply(m, b.add(xy, wh));
  }
  Value* conf = chan(b, pred, 4);
  Value* obj = b.multiply(m, sq(b, b.subtract(conf, target(4))));
  Value* noobj = b.multiply(b.multiply(b.subtract(c(1), m), sq(b, conf)), c(o.lambda_noobj));
  Value* per_cell = b.add(b.add(b.multiply(box, c(o.lambda_coord)), obj), noobj);
  for (int64_t k = 5; k < p; ++k)
    per_cell = b.add(per_cell, b.multiply(m, sq(b, b.subtract(chan(b, pred, k), target(k)))));
  return mean_of_sum(b, per_cell, 1.0 / double(batch));
}

}  // namespace netspec::losses
