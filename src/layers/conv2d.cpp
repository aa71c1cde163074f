// conv2d: y = act(conv(x, W) + b), W OIHW. Also the shared conv helpers and the `same` padding
// rule.
#include "layers/lower.h"

namespace netspec::layers {

std::pair<int64_t, int64_t> spatial_padding(int64_t h, int64_t k, int64_t s, Padding pad,
                                            PadStyle style) {
  if (pad == Padding::valid) return {0, 0};
  if (s > 1 && style == PadStyle::symmetric) return {(k - 1) / 2, (k - 1) / 2};
  int64_t out = (h + s - 1) / s;
  int64_t total = std::max<int64_t>((out - 1) * s + k - h, 0);
  return {total / 2, total - total / 2};  // extra row on the high side
}

int64_t conv_out(int64_t h, int64_t k, int64_t s, Padding p, int64_t d) {
  int64_t ke = d * (k - 1) + 1;
  return p == Padding::same ? (h + s - 1) / s : (h - ke) / s + 1;
}

Value* conv(LowerCtx& c, Value* x, Value* w, int64_t stride, Padding pad) {
  const Shape& xs = x->type.shape();
  const Shape& ws = w->type.shape();
  hlo::ConvOptions o;
  o.dims = hlo::ConvOptions::nchw(2);
  o.window_strides = {stride, stride};
  o.padding = {spatial_padding(xs[2], ws[2], stride, pad, c.net.convPadStyle),
               spatial_padding(xs[3], ws[3], stride, pad, c.net.convPadStyle)};
  o.feature_group_count = xs[1] / ws[1];
  return c.b.convolution(x, w, o);
}

Value* conv(LowerCtx& c, const std::string& name, Value* x, const ConvSpec& s) {
  const Shape& xs = x->type.shape();
  int64_t ic = xs[1];
  if (ic % s.groups != 0 || s.oc % s.groups != 0)
    c.fail("{}: groups {} do not divide channels {} -> {}", c.full(name), s.groups, ic, s.oc);
  int64_t h = conv_out(xs[2], s.k, s.stride, s.pad), w = conv_out(xs[3], s.k, s.stride, s.pad);
  if (h <= 0 || w <= 0)
    c.fail("{}: spatial size goes to zero ({}x{} with kernel {} stride {})", c.full(name), xs[2],
           xs[3], s.k, s.stride);
  Value* wt =
      c.param(dot(name, "weight"), {s.oc, ic / s.groups, s.k, s.k}, ParamInit::convWeight, true);
  Value* bias = s.bias ? c.param(dot(name, "bias"), {s.oc}, ParamInit::zeros, false) : nullptr;
  Value* y = conv(c, x, wt, s.stride, s.pad);
  return bias ? c.b.add(y, bcast(c.b, bias, y, 1)) : y;
}

Value* lower_conv2d(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<Conv2d>(layer);
  c.image(l.ic);
  return activation(c.b, conv(c, "", x, {l.oc, l.k, l.stride, 1, true, l.pad}), l.act);
}

NETSPEC_REGISTER_LAYER(conv2d, lower_conv2d)

}  // namespace netspec::layers
