// spatialUnflatten (not lowered yet: accounting only; lowering refuses it by name).
#include "layers/declare.h"

namespace netspec::layers {

Value* account_spatial_unflatten(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<SpatialUnflatten>(layer);
  Decl c(lc);
  int64_t t = c.tokens(l.ch);
  c.channels_match("token count h*w", t, int64_t{l.h} * l.w);
  return lc.not_lowered({l.ch, l.h, l.w});
}

NETSPEC_REGISTER_LAYER(spatialUnflatten, account_spatial_unflatten, {.lowered = false})

}  // namespace netspec::layers
