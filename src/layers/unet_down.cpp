// unetDown: 2x2 max pool (stride 2), then DoubleConv ic -> oc. Its input is the skip connection
// the matching unetUp concatenates (unet_skip). DoubleConv = (3x3 conv, no bias, BN, ReLU) x 2,
// named conv1.conv / conv1.bn / conv2.conv / conv2.bn. norm = gn: GroupNorm(normGroups) in place
// of the BNs.
#include <limits>

#include "layers/lower.h"

namespace netspec::layers {

Value* double_conv(LowerCtx& c, Value* x, int64_t oc) {
  Value* y = conv_bn_act(c, "conv1", x, {oc, 3}, Activation::relu);
  return conv_bn_act(c, "conv2", y, {oc, 3}, Activation::relu);
}

Value* lower_unet_down(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<UnetDown>(layer);
  Fm f = c.image(l.ic);
  set_conv_norm(c, l.norm, l.normGroups);
  c.check(f.h % 2 == 0 && f.w % 2 == 0, "needs an even feature map to pool (got {}x{})", f.h, f.w);
  hlo::WindowOptions w;
  w.window_dimensions = {1, 1, 2, 2};
  w.window_strides = {1, 1, 2, 2};
  Value* init = c.b.scalar(-std::numeric_limits<double>::infinity(), x->type.dtype());
  return double_conv(c, c.b.reduce_window(x, init, w, hlo::OpKind::kMaximum), l.oc);
}

NETSPEC_REGISTER_LAYER(unetDown, lower_unet_down)

}  // namespace netspec::layers
