// fpnDetect: a multi-scale anchor head (YOLOv3/v5-style output layout, FPN neck like
// torchvision's FeaturePyramidNetwork). Input C5 [B, c5, h, w]; C4 [c4, 2h, 2w] and C3
// [c3, 4h, 4w] are tapped from earlier layer inputs exactly as the accounting taps them.
//   inner_i = lateral_i(C_i) (1x1 + bias);  P5 = inner_5, P4 = inner_4 + up2(P5),
//   P3 = inner_3 + up2(P4) (nearest 2x);   F_i = smooth_i(P_i) (3x3 + bias)
//   head (shared by the three levels): towerDepth x (3x3 conv + BN + net.convBnAct), pred 1x1
//   (+ bias) -> anchors·oc channels, channel a·oc + o = output o of anchor a (yolov5's view).
// Output [B, Σ_i H_i·W_i·anchors, oc], rows ordered level (finest first), y, x, anchor.
// BN of the shared tower: ONE statistic over every position of all three levels (the levels are
// flattened and concatenated before the BN): the accounting has one BnDesc per tower conv, and
// train (batch stats) and eval (one running stat) then normalise the same population.
// CAM features: F_3, the finest smoothed map [B, g5, 4h, 4w] (docs/abi.md).
#include "layers/lower.h"

namespace netspec::layers {
namespace {

// Nearest 2x upsampling [B, C, H, W] -> [B, C, 2H, 2W]: y[.., i, j] = x[.., i/2, j/2].
Value* up2(hlo::Builder& b, Value* x) {
  const Shape& s = x->type.shape();
  Value* y = b.broadcast_in_dim(x, {s[0], s[1], s[2], 2, s[3], 2}, {0, 1, 2, 4});
  return b.reshape(y, {s[0], s[1], 2 * s[2], 2 * s[3]});
}

Value* conv_bias(LowerCtx& c, Value* x, Value* w, Value* bias) {
  Value* y = conv(c, x, w, 1, Padding::same);
  return c.b.add(y, bcast(c.b, bias, y, 1));
}

// One shared tower layer on every level: per-level 3x3 conv, then one BN over the concatenated
// positions [B, C, Σ H_i·W_i], then the activation; returns the per-level maps.
std::vector<Value*> tower_layer(LowerCtx& c, const std::vector<Value*>& xs, Value* w, Value* gamma,
                                Value* beta) {
  hlo::Builder& b = c.b;
  std::vector<Value*> flat;
  for (Value* x : xs) {
    Value* y = conv(c, x, w, 1, Padding::same);
    const Shape& s = y->type.shape();
    flat.push_back(b.reshape(y, {s[0], s[1], s[2] * s[3]}));
  }
  Value* y = activation(b, batch_norm(c, b.concatenate(flat, 2), gamma, beta), c.net.convBnAct);
  std::vector<Value*> out;
  int64_t at = 0;
  for (Value* x : xs) {
    const Shape& s = x->type.shape();
    const int64_t n = s[2] * s[3];
    Value* part = b.slice(y, {0, 0, at}, {s[0], y->type.dim(1), at + n});
    out.push_back(b.reshape(part, {s[0], y->type.dim(1), s[2], s[3]}));
    at += n;
  }
  return out;
}

Value* lower_fpn_detect(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<FpnDetect>(layer);
  hlo::Builder& b = c.b;
  const Shape& s5 = x->type.shape();
  std::vector<Value*> levels{c.tap("C3", l.c3, 4 * s5[2], 4 * s5[3]),
                             c.tap("C4", l.c4, 2 * s5[2], 2 * s5[3]), x};
  // Parameters in the accounting's order: lateral.i, smooth.i (i = 0..2), tower.d, pred.
  struct Pair {
    Value *w, *bias;
  };
  std::vector<Pair> lateral, smooth;
  for (int i = 0; i < 3; ++i) {
    Value* lw = c.next_param();
    lateral.push_back({lw, c.next_param()});
    Value* sw = c.next_param();
    smooth.push_back({sw, c.next_param()});
  }
  // Top-down pathway on the (unsmoothed) inner maps, coarsest first.
  std::vector<Value*> p(3);
  p[2] = conv_bias(c, levels[2], lateral[2].w, lateral[2].bias);
  for (int i = 1; i >= 0; --i)
    p[i] = b.add(conv_bias(c, levels[i], lateral[i].w, lateral[i].bias), up2(b, p[i + 1]));
  std::vector<Value*> f(3);
  for (int i = 0; i < 3; ++i) f[i] = conv_bias(c, p[i], smooth[i].w, smooth[i].bias);
  if (c.cam_features) *c.cam_features = f[0];
  for (int d = 0; d < l.towerDepth; ++d) {
    Value* w = c.next_param();
    Value* gamma = c.next_param();
    Value* beta = c.next_param();
    f = tower_layer(c, f, w, gamma, beta);
  }
  Value* pw = c.next_param();
  Value* pb = c.next_param();
  std::vector<Value*> rows;
  const int64_t batch = s5[0], a = l.anchors, oc = l.oc;
  for (Value* fi : f) {
    const Shape& s = fi->type.shape();
    // [B, A·oc, H, W] -> [B, A, oc, H, W] -> [B, H, W, A, oc] -> [B, H·W·A, oc]
    Value* y = b.reshape(conv_bias(c, fi, pw, pb), {batch, a, oc, s[2], s[3]});
    y = b.transpose(y, {0, 3, 4, 1, 2});
    rows.push_back(b.reshape(y, {batch, s[2] * s[3] * a, oc}));
  }
  return b.concatenate(rows, 1);
}

}  // namespace

NETSPEC_REGISTER_LAYER(fpnDetect, lower_fpn_detect)

}  // namespace netspec::layers
