// separableConv (MobileNet v1 unit): depthwise 3x3 convBn "dw" (groups = ic, stride) + act, then
// pointwise 1x1 convBn "pw" + act; act is the net's convBnAct.
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_separable_conv(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<SeparableConv>(layer);
  c.image(l.ic);
  Value* y = conv_bn_act(c, "dw", x, {l.ic, 3, l.stride, l.ic}, c.net.convBnAct);
  return conv_bn_act(c, "pw", y, {l.oc, 1}, c.net.convBnAct);
}

NETSPEC_REGISTER_LAYER(separableConv, lower_separable_conv)

}  // namespace netspec::layers
