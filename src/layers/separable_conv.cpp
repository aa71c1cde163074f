// separableConv (MobileNet v1 unit): depthwise 3x3 convBn (groups = ic, stride) + act, then
// pointwise 1x1 convBn + act; act is the net's convBnAct.
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_separable_conv(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<SeparableConv>(layer);
  Value* y = conv_bn_act(c, x, l.stride, Padding::same, c.net.convBnAct);
  return conv_bn_act(c, y, 1, Padding::same, c.net.convBnAct);
}

NETSPEC_REGISTER_LAYER(separableConv, lower_separable_conv)

}  // namespace netspec::layers
