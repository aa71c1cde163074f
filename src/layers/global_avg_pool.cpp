// globalAvgPool: [B, C, H, W] -> mean over H, W -> [B, C, 1, 1] (AdaptiveAvgPool2d(1)).
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_global_avg_pool(LowerCtx& c, const Layer&, Value* x) {
  c.image(-1);
  const Shape& s = x->type.shape();
  Value* sum = c.b.reduce(x, c.b.scalar(0, x->type.dtype()), {2, 3}, hlo::OpKind::kAdd);
  Value* mean = c.b.multiply(sum, c.b.constant_splat(1.0 / double(s[2] * s[3]), sum->type));
  return c.b.reshape(mean, {s[0], s[1], 1, 1});
}

NETSPEC_REGISTER_LAYER(globalAvgPool, lower_global_avg_pool, {.cam_source = true})

}  // namespace netspec::layers
