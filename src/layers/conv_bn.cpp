// convBn: conv without bias, BN, then the net's convBnAct (torchvision Conv2dNormActivation).
#include "layers/lower.h"

namespace netspec::layers {

Value* conv_bn_act(LowerCtx& c, const std::string& name, Value* x, const ConvSpec& s, Activation a,
                   const char* conv_name, const char* bn_name) {
  ConvSpec nb = s;
  nb.bias = false;
  Value* y = conv(c, dot(name, conv_name), x, nb);
  Bn bn = c.bn(dot(name, bn_name), s.oc);
  return activation(c.b, batch_norm(c, y, bn), a);
}

Value* lower_conv_bn(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ConvBn>(layer);
  c.image(l.ic);
  return conv_bn_act(c, "", x, {l.oc, l.k, l.stride, 1, false, l.pad}, c.net.convBnAct);
}

NETSPEC_REGISTER_LAYER(convBn, lower_conv_bn)

}  // namespace netspec::layers
