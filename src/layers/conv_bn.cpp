// convBn: conv without bias, BN, then the net's convBnAct (torchvision Conv2dNormActivation).
// norm = gn swaps the BN for GroupNorm(normGroups) here and in every kind that calls
// set_conv_norm (residualBlock, unetDown, unetUp): same parameter names, no running stats.
#include "layers/lower.h"

namespace netspec::layers {

Value* conv_bn_act(LowerCtx& c, const std::string& name, Value* x, const ConvSpec& s, Activation a,
                   const char* conv_name, const char* bn_name) {
  ConvSpec nb = s;
  nb.bias = false;
  Value* y = conv(c, dot(name, conv_name), x, nb);
  if (c.conv_norm.kind == Norm::gn)
    return activation(c.b, group_norm(c, dot(name, bn_name), y, c.conv_norm.groups, "normGroups"),
                      a);
  Bn bn = c.bn(dot(name, bn_name), s.oc);
  return activation(c.b, batch_norm(c, y, bn), a);
}

void set_conv_norm(LowerCtx& c, Norm n, int64_t groups) {
  c.check(n != Norm::ln, "norm must be bn or gn (got {})", enum_name(n));
  c.conv_norm = {n, groups};
}

Value* lower_conv_bn(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ConvBn>(layer);
  c.image(l.ic);
  set_conv_norm(c, l.norm, l.normGroups);
  return conv_bn_act(c, "", x, {l.oc, l.k, l.stride, 1, false, l.pad}, c.net.convBnAct);
}

NETSPEC_REGISTER_LAYER(convBn, lower_conv_bn)

}  // namespace netspec::layers
