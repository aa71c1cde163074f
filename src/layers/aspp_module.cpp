// asppModule (not lowered yet: accounting only; lowering refuses it by name).
#include "layers/declare.h"

namespace netspec::layers {

Value* account_aspp_module(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<AsppModule>(layer);
  Decl c(lc);
  Fm x = c.image(l.ic);
  c.conv_bn("convs.0", x, l.oc, 1);
  int i = 1;
  for (int64_t rate : {12, 24, 36}) c.conv_bn(fmt::format("convs.{}", i++), x, l.oc, 3, 1, 1, rate);
  c.conv_bn("convs.4", Fm{x.c, 1, 1}, l.oc, 1);  // on the globally pooled map
  c.conv_bn("project", Fm{5 * int64_t{l.oc}, x.h, x.w}, l.oc, 1);
  return lc.not_lowered({l.oc, x.h, x.w});
}

NETSPEC_REGISTER_LAYER(asppModule, account_aspp_module, {.lowered = false})

}  // namespace netspec::layers
