// unetUp: ConvTranspose2d(ic, ic/2, 2, stride 2) (weight [ic, ic/2, 2, 2] + bias), concat
// [skip, up] on channels (Pytorch-UNet's torch.cat([x2, x1])), DoubleConv ic -> oc. The skip is
// the input of the matching unetDown and must be [ic/2, 2H, 2W]. The kernel-2 stride-2 transpose
// conv has no overlap: y[b, o, 2i+a, 2j+e] = Σ_c x[b, c, i, j]·W[c, o, a, e] + bias[o], one
// dot_general + reshape. norm = gn: GroupNorm(normGroups) for DoubleConv's BNs.
#include "layers/lower.h"

namespace netspec::layers {

Value* double_conv(LowerCtx& c, Value* x, int64_t oc);  // unet_down.cpp

// The skip of this unetUp: the input of the unetDown it pairs with (ups and downs nest like
// brackets, the nearest unmatched unetDown before it).
Value* unet_skip(const LowerCtx& c) {
  int depth = 0;
  for (int i = c.info.index - 1; i >= 0; --i) {
    std::string_view k = layer_kind(c.net.layers[static_cast<size_t>(i)]);
    if (k == "unetUp") ++depth;
    if (k == "unetDown" && depth-- == 0) return c.history->at(static_cast<size_t>(i));
  }
  c.fail("no skip connection left (every unetUp needs an earlier unetDown)");
}

Value* lower_unet_up(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<UnetUp>(layer);
  c.check(l.ic % 2 == 0, "ic must be even (got {})", l.ic);
  Fm f = c.image(l.ic);
  set_conv_norm(c, l.norm, l.normGroups);
  Value* skip = unet_skip(c);
  const Shape& ss = skip->type.shape();
  Shape want{l.ic / 2, 2 * f.h, 2 * f.w};
  if (Shape(ss.begin() + 1, ss.end()) != want)
    c.fail("skip shape (got [{}], expected [{}])", fmt::join(ss.begin() + 1, ss.end(), ", "),
           fmt::join(want, ", "));
  hlo::Builder& b = c.b;
  const int64_t n = x->type.dim(0), h = l.ic / 2;
  Value* w = c.param("up.weight", {l.ic, h, 2, 2}, ParamInit::convWeight, true);
  Value* bias = c.param("up.bias", {h}, ParamInit::zeros, false);
  hlo::DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  Value* y = b.dot_general(x, w, d);           // [B, H, W, O, 2, 2]
  y = b.transpose(y, {0, 3, 1, 4, 2, 5});      // [B, O, H, 2, W, 2]
  y = b.reshape(y, {n, h, 2 * f.h, 2 * f.w});  // row 2i + a, column 2j + e
  y = b.add(y, bcast(b, bias, y, 1));
  return double_conv(c, b.concatenate({skip, y}, 1), l.oc);
}

NETSPEC_REGISTER_LAYER(unetUp, lower_unet_up, {.field_min = {{"ic", 2}}})

}  // namespace netspec::layers
