// uib (timm UniversalInvertedResidual, MobileNetV4 conv variants):
//   [dw_start preDWk + BN, no act] -> pw_exp 1x1 + BN + act -> [dw_mid postDWk + BN + act]
//   -> pw_proj 1x1 + BN (linear); out = y + x when stride 1 and ic == oc.
// The stride sits on dw_mid when present, else on dw_start; act is the net's convBnAct (ReLU).
// timm's layer scale and drop path are off (MobileNetV4-Conv).
#include "layers/squeeze_excite.h"

namespace netspec::layers {

Value* lower_uib(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<Uib>(layer);
  const Activation act = c.net.convBnAct;
  Value* y = x;
  if (l.preDWk > 0)
    y = conv_bn_act(c, y, l.postDWk > 0 ? 1 : l.stride, Padding::same, Activation::identity);
  y = conv_bn_act(c, y, 1, Padding::same, act);
  if (l.postDWk > 0) y = conv_bn_act(c, y, l.stride, Padding::same, act);
  y = conv_bn_act(c, y, 1, Padding::same, Activation::identity);
  return skip_add(c, x, y, l.stride);
}

NETSPEC_REGISTER_LAYER(uib, lower_uib)

}  // namespace netspec::layers
