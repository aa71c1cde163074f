// unetDown (not lowered yet: accounting only; lowering refuses it by name).
// Saves its input as the next skip, 2x2 max pool, DoubleConv ic -> oc.
#include "layers/declare.h"

namespace netspec::layers {

// DoubleConv: (3x3 conv, no bias, BN, ReLU) x 2 (also unetUp's).
Fm double_conv(Decl& c, Fm x, int64_t oc) {
  return c.conv_bn("conv2", c.conv_bn("conv1", x, oc, 3), oc, 3);
}

Value* account_unet_down(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<UnetDown>(layer);
  Decl c(lc);
  Fm x = c.image(l.ic);
  c.check(x.h % 2 == 0 && x.w % 2 == 0, "needs an even feature map to pool (got {}x{})", x.h, x.w);
  c.skips().push_back(c.in);
  return lc.not_lowered(double_conv(c, Fm{x.c, x.h / 2, x.w / 2}, l.oc).shape());
}

NETSPEC_REGISTER_LAYER(unetDown, account_unet_down, {.lowered = false})

}  // namespace netspec::layers
