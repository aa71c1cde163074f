// spatialUnflatten: [B, h·w, ch] tokens -> [B, ch, h, w] (the inverse of spatialFlatten).
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_spatial_unflatten(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<SpatialUnflatten>(layer);
  int64_t t = c.tokens(l.ch);
  c.channels_match("token count h*w", t, int64_t{l.h} * l.w);
  Value* y = c.b.reshape(x, {x->type.dim(0), l.h, l.w, l.ch});
  return c.b.transpose(y, {0, 3, 1, 2});
}

NETSPEC_REGISTER_LAYER(spatialUnflatten, lower_spatial_unflatten)

}  // namespace netspec::layers
