// convBn: conv without bias, BN, then the net's convBnAct (torchvision Conv2dNormActivation).
#include "layers/lower.h"

namespace netspec::layers {

Value* conv_bn_act(LowerCtx& c, Value* x, int64_t stride, Padding pad, Activation a) {
  Value* w = c.next_param();
  Value* gamma = c.next_param();
  Value* beta = c.next_param();
  return activation(c.b, batch_norm(c, conv(c, x, w, stride, pad), gamma, beta), a);
}

Value* lower_conv_bn(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ConvBn>(layer);
  return conv_bn_act(c, x, l.stride, l.pad, c.net.convBnAct);
}

NETSPEC_REGISTER_LAYER(convBn, lower_conv_bn)

}  // namespace netspec::layers
