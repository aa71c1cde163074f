// mbConv (torchvision EfficientNet MBConv), nBlocks of
//   [expand 1x1 + BN + act] -> dw kxk (stride) + BN + act -> [SE] -> project 1x1 + BN,
//   out = y + x when stride 1 and ic == oc.
// expanded = make_divisible(c_in · expand, 8) (expand conv absent when it equals c_in); SE
// squeeze = max(1, c_in / 4) of the BLOCK INPUT width, act (SiLU) inside, sigmoid gate.
#include "layers/squeeze_excite.h"

namespace netspec::layers {

Value* lower_mb_conv(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<MbConv>(layer);
  c.check(l.k % 2 == 1, "kernel must be odd (got {})", l.k);
  check_stride12(c, l.stride);
  c.image(l.ic);
  for (int i = 0; i < l.nBlocks; ++i) {
    Scope s(c, fmt::format("block{}", i));
    int64_t stride = i == 0 ? l.stride : 1;
    int64_t in_c = x->type.dim(1);
    int64_t e = make_divisible(static_cast<double>(in_c) * l.expand);
    Value* y = x;
    if (e != in_c) y = conv_bn_act(c, "expand", y, {e, 1}, l.act);
    y = conv_bn_act(c, "dw", y, {e, l.k, stride, e}, l.act);
    if (l.useSE)
      y = squeeze_excite(c, "se", y, std::max<int64_t>(1, in_c / 4), l.act, SeGate::sigmoid);
    y = conv_bn_act(c, "project", y, {l.oc, 1}, Activation::identity);
    // Stochastic depth on the residual branch; non-residual blocks still count in the ramp.
    y = c.drop_path(y, i, 0, stride == 1 && x->type.shape() == y->type.shape());
    x = skip_add(c, x, y, stride);
  }
  return x;
}

NETSPEC_REGISTER_LAYER(mbConv, lower_mb_conv, {.ramp_family = "efficientnet", .ramp = Ramp::count})

}  // namespace netspec::layers
