// mbConv (torchvision EfficientNet MBConv), nBlocks of
//   [expand 1x1 + BN + act] -> dw kxk (stride) + BN + act -> [SE] -> project 1x1 + BN,
//   out = y + x when stride 1 and ic == oc.
// expanded = make_divisible(c_in · expand, 8) (expand conv absent when it equals c_in); SE
// squeeze = max(1, c_in / 4) of the BLOCK INPUT width, act (SiLU) inside, sigmoid gate.
#include "layers/squeeze_excite.h"

namespace netspec::layers {

Value* lower_mb_conv(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<MbConv>(layer);
  check_mobile_block(c, l.ic, l.stride, l.k);
  return repeat_blocks(c, l.nBlocks, l.stride, x, [&](int i, int64_t stride, Value* x) {
    int64_t in_c = x->type.dim(1);
    int64_t e = make_divisible(static_cast<double>(in_c) * l.expand);
    Value* y = x;
    if (e != in_c) y = conv_bn_act(c, "expand", y, {e, 1}, l.act);
    y = conv_bn_act(c, "dw", y, {e, l.k, stride, e}, l.act);
    if (l.useSE)
      y = squeeze_excite(c, "se", y, std::max<int64_t>(1, in_c / 4), l.act, SeGate::sigmoid);
    y = conv_bn_act(c, "project", y, {l.oc, 1}, Activation::identity);
    return drop_path_skip_add(c, x, y, i, stride);
  });
}

NETSPEC_REGISTER_LAYER(mbConv, lower_mb_conv, {.ramp_family = "efficientnet", .ramp = Ramp::count})

}  // namespace netspec::layers
