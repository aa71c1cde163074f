// fpnDetect: a multi-scale anchor head (YOLOv3/v5-style output layout, FPN neck like
// torchvision's FeaturePyramidNetwork). Input C5 [B, c5, h, w]; C4 [c4, 2h, 2w] and C3
// [c3, 4h, 4w] are the latest earlier layer inputs of those shapes (tap).
//   inner_i = lateral_i(C_i) (1x1 + bias);  P5 = inner_5, P4 = inner_4 + up2(P5),
//   P3 = inner_3 + up2(P4) (nearest 2x);   F_i = smooth_i(P_i) (3x3 + bias)
//   head (shared by the three levels): towerDepth x (3x3 conv + BN + net.convBnAct), pred 1x1
//   (+ bias) -> anchors·oc channels, channel a·oc + o = output o of anchor a (yolov5's view).
// Output [B, Σ_i H_i·W_i·anchors, oc], rows ordered level (finest first), y, x, anchor.
// BN of the shared tower: ONE statistic over every position of all three levels (the levels are
// flattened and concatenated before the BN): the accounting has one BnDesc per tower conv, and
// train (batch stats) and eval (one running stat) then normalise the same population.
// FLOPs: every level's convs are emitted, so the shared head counts once per level.
// CAM features: F_3, the finest smoothed map [B, g5, 4h, 4w] (docs/abi.md).
#include "layers/lower.h"

namespace netspec::layers {

// Nearest 2x upsampling [B, C, H, W] -> [B, C, 2H, 2W]: y[.., i, j] = x[.., i/2, j/2].
Value* up2(hlo::Builder& b, Value* x) {
  const Shape& s = x->type.shape();
  Value* y = b.broadcast_in_dim(x, {s[0], s[1], s[2], 2, s[3], 2}, {0, 1, 2, 4});
  return b.reshape(y, {s[0], s[1], 2 * s[2], 2 * s[3]});
}

namespace {

// One shared tower layer on every level: per-level 3x3 conv (weight w), then one BN over the
// concatenated positions [B, C, Σ H_i·W_i], then the activation; returns the per-level maps.
std::vector<Value*> tower_layer(LowerCtx& c, const std::vector<Value*>& xs, Value* w,
                                const Bn& bn) {
  hlo::Builder& b = c.b;
  std::vector<Value*> flat;
  for (Value* x : xs) {
    Value* y = conv(c, x, w, 1, Padding::same);
    const Shape& s = y->type.shape();
    flat.push_back(b.reshape(y, {s[0], s[1], s[2] * s[3]}));
  }
  Value* y = activation(b, batch_norm(c, b.concatenate(flat, 2), bn), c.net.convBnAct);
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

// A conv declared once ("<name>.weight" [oc, ic, k, k], ".bias") and applied to several maps.
struct SharedConv {
  Value *w, *bias;
  SharedConv(LowerCtx& c, const std::string& name, int64_t ic, int64_t oc, int64_t k)
      : w(c.param(name + ".weight", {oc, ic, k, k}, ParamInit::convWeight, true)),
        bias(c.param(name + ".bias", {oc}, ParamInit::zeros, false)) {}
  Value* operator()(LowerCtx& c, Value* x) const {
    Value* y = conv(c, x, w, 1, Padding::same);
    return c.b.add(y, bcast(c.b, bias, y, 1));
  }
};

Value* lower_fpn_detect(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<FpnDetect>(layer);
  Fm c5 = c.image(l.c5);
  if (c.net.detStride > 0 && c.net.inputHeight > 0)
    c.channels_match("detStride (input height / C5 height)", c.net.inputHeight / c5.h,
                     c.net.detStride);
  hlo::Builder& b = c.b;
  std::vector<Value*> levels{c.tap("C3", l.c3, 4 * c5.h, 4 * c5.w),
                             c.tap("C4", l.c4, 2 * c5.h, 2 * c5.w), x};
  // Declared per level: lateral.i (1x1 ci -> g5), smooth.i (3x3); then tower.d, pred.
  std::vector<SharedConv> lateral, smooth;
  for (int i = 0; i < 3; ++i) {
    lateral.emplace_back(c, fmt::format("lateral.{}", i), levels[i]->type.dim(1), l.g5, 1);
    smooth.emplace_back(c, fmt::format("smooth.{}", i), l.g5, l.g5, 3);
  }
  // Top-down pathway on the (unsmoothed) inner maps, coarsest first.
  std::vector<Value*> p(3);
  p[2] = lateral[2](c, levels[2]);
  for (int i = 1; i >= 0; --i) p[i] = b.add(lateral[i](c, levels[i]), up2(b, p[i + 1]));
  std::vector<Value*> f(3);
  for (int i = 0; i < 3; ++i) f[i] = smooth[i](c, p[i]);
  if (c.cam_features) *c.cam_features = f[0];
  for (int d = 0; d < l.towerDepth; ++d) {
    std::string name = fmt::format("tower.{}", d);
    Value* w = c.param(name + ".conv.weight", {l.g5, l.g5, 3, 3}, ParamInit::convWeight, true);
    f = tower_layer(c, f, w, c.bn(name + ".bn", l.g5));
  }
  const int64_t batch = x->type.dim(0), a = l.anchors, oc = l.oc;
  SharedConv pred(c, "pred", l.g5, a * oc, 1);
  std::vector<Value*> rows;
  for (Value* fi : f) {
    const Shape& s = fi->type.shape();
    // [B, A·oc, H, W] -> [B, A, oc, H, W] -> [B, H, W, A, oc] -> [B, H·W·A, oc]
    Value* y = b.reshape(pred(c, fi), {batch, a, oc, s[2], s[3]});
    y = b.transpose(y, {0, 3, 4, 1, 2});
    rows.push_back(b.reshape(y, {batch, s[2] * s[3] * a, oc}));
  }
  return b.concatenate(rows, 1);
}

std::pair<int64_t, int64_t> detector(const Layer& layer) {
  const auto& l = std::get<FpnDetect>(layer);
  return {l.anchors, l.oc};
}

}  // namespace

NETSPEC_REGISTER_LAYER(fpnDetect, lower_fpn_detect,
                       {.detector = detector, .field_min = {{"towerDepth", 0}}})

}  // namespace netspec::layers
