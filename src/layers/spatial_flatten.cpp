// spatialFlatten: [B, C, H, W] -> [B, H·W, C] tokens (row-major positions: token y·W + x).
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_spatial_flatten(LowerCtx& c, const Layer&, Value* x) {
  Fm f = c.image(-1);
  Value* t = c.b.transpose(x, {0, 2, 3, 1});  // [B, H, W, C]
  return c.b.reshape(t, {x->type.dim(0), f.h * f.w, f.c});
}

NETSPEC_REGISTER_LAYER(spatialFlatten, lower_spatial_flatten)

}  // namespace netspec::layers
