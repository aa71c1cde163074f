// fusedMbConv (torchvision EfficientNetV2 FusedMBConv / timm EdgeResidual), nBlocks of
//   expanded != c_in: kxk conv (stride) + BN + act -> [SE] -> project 1x1 + BN (linear)
//   expanded == c_in: one kxk conv "fused" c_in -> oc (stride) + BN + act
//   out = y + x when stride 1 and c_in == oc.
// expanded = make_divisible(c_in · expand, 8); act is the net's convBnAct (SiLU in
// EfficientNetV2, ReLU in MobileNetV4); SE squeeze = max(1, c_in / 4), sigmoid gate.
#include "layers/squeeze_excite.h"

namespace netspec::layers {

Value* lower_fused_mb_conv(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<FusedMbConv>(layer);
  check_mobile_block(c, l.ic, l.stride);
  const Activation act = c.net.convBnAct;
  return repeat_blocks(c, l.nBlocks, l.stride, x, [&](int i, int64_t stride, Value* x) {
    int64_t in_c = x->type.dim(1);
    int64_t e = make_divisible(static_cast<double>(in_c) * l.expand);
    Value* y;
    if (e != in_c) {
      y = conv_bn_act(c, "expand", x, {e, l.k, stride}, act);
      if (l.useSE)
        y = squeeze_excite(c, "se", y, std::max<int64_t>(1, in_c / 4), act, SeGate::sigmoid);
      y = conv_bn_act(c, "project", y, {l.oc, 1}, Activation::identity);
    } else {
      y = conv_bn_act(c, "fused", x, {l.oc, l.k, stride}, act);
    }
    return drop_path_skip_add(c, x, y, i, stride);
  });
}

NETSPEC_REGISTER_LAYER(fusedMbConv, lower_fused_mb_conv,
                       {.ramp_family = "efficientnet", .ramp = Ramp::count})

}  // namespace netspec::layers
