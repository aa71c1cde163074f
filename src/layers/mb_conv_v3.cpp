// mbConvV3 (torchvision MobileNetV3 InvertedResidual):
//   [expand 1x1 + BN + act, absent when expandCh == ic] -> dw kxk (stride) + BN + act
//   -> [SE: relu reduce to make_divisible(expandCh / 4, 8), hard-sigmoid gate]
//   -> project 1x1 + BN (linear); out = y + x when stride 1 and ic == oc. act: relu or hSwish.
#include "layers/squeeze_excite.h"

namespace netspec::layers {

Value* lower_mb_conv_v3(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<MbConvV3>(layer);
  check_mobile_block(c, l.ic, l.stride, l.k);
  const int64_t e = l.expandCh;
  Value* y = x;
  if (e != l.ic) y = conv_bn_act(c, "expand", y, {e, 1}, l.act);
  y = conv_bn_act(c, "dw", y, {e, l.k, l.stride, e}, l.act);
  if (l.useSE)
    y = squeeze_excite(c, "se", y, make_divisible(e / 4), Activation::relu, SeGate::hardSigmoid);
  y = conv_bn_act(c, "project", y, {l.oc, 1}, Activation::identity);
  return skip_add(c, x, y, l.stride);
}

NETSPEC_REGISTER_LAYER(mbConvV3, lower_mb_conv_v3)

}  // namespace netspec::layers
