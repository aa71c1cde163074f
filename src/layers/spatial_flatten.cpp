// spatialFlatten (not lowered yet: accounting only; lowering refuses it by name).
// [C, H, W] -> [H*W, C] tokens (row-major positions).
#include "layers/declare.h"

namespace netspec::layers {

Value* account_spatial_flatten(LowerCtx& lc, const Layer&, Value*) {
  Decl c(lc);
  Fm x = c.image(-1);
  return lc.not_lowered({x.h * x.w, x.c});
}

NETSPEC_REGISTER_LAYER(spatialFlatten, account_spatial_flatten, {.lowered = false})

}  // namespace netspec::layers
