// unetUp (not lowered yet: accounting only; lowering refuses it by name).
// ConvTranspose2d(ic, ic/2, 2, stride 2) (weight [in, out, 2, 2] + bias), concat with the
// latest skip (must be [ic/2, 2H, 2W]), DoubleConv ic -> oc.
#include "layers/declare.h"

namespace netspec::layers {

Fm double_conv(Decl& c, Fm x, int64_t oc);  // unet_down.cpp

Value* account_unet_up(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<UnetUp>(layer);
  Decl c(lc);
  c.check(l.ic % 2 == 0, "ic must be even (got {})", l.ic);
  Fm x = c.image(l.ic);
  if (c.skips().empty()) c.fail("no skip connection left (every unetUp needs an earlier unetDown)");
  Shape skip = c.skips().back();
  c.skips().pop_back();
  Shape want{l.ic / 2, 2 * x.h, 2 * x.w};
  if (skip != want)
    c.fail("skip shape (got [{}], expected [{}])", fmt::join(skip, ", "), fmt::join(want, ", "));
  c.param("up.weight", {l.ic, l.ic / 2, 2, 2}, ParamInit::convWeight, true);
  c.param("up.bias", {l.ic / 2}, ParamInit::zeros, false);
  c.add_flops(2 * x.h * x.w * l.ic * (l.ic / 2) * 4);
  return lc.not_lowered(double_conv(c, Fm{l.ic, 2 * x.h, 2 * x.w}, l.oc).shape());
}

NETSPEC_REGISTER_LAYER(unetUp, account_unet_up, {.lowered = false, .field_min = {{"ic", 2}}})

}  // namespace netspec::layers
