// conv2d: y = act(conv(x, W) + b), W OIHW. Also the shared conv helper and `same` padding rule.
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

Value* lower_conv2d(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<Conv2d>(layer);
  Value* w = c.next_param();
  Value* bias = c.next_param();
  Value* y = conv(c, x, w, l.stride, l.pad);
  y = c.b.add(y, bcast(c.b, bias, y, 1));
  return activation(c.b, y, l.act);
}

NETSPEC_REGISTER_LAYER(conv2d, lower_conv2d)

}  // namespace netspec::layers
