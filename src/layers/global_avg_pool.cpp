// globalAvgPool: [B, C, H, W] -> mean over H, W -> [B, C, 1, 1] (AdaptiveAvgPool2d(1)).
#include "layers/lower.h"

namespace netspec::layers {

Value* global_avg_pool(hlo::Builder& b, Value* x) {
  const Shape& s = x->type.shape();
  Value* sum = b.reduce(x, b.scalar(0, x->type.dtype()), {2, 3}, hlo::OpKind::kAdd);
  Value* mean = b.multiply(sum, b.constant_splat(1.0 / double(s[2] * s[3]), sum->type));
  return b.reshape(mean, {s[0], s[1], 1, 1});
}

Value* lower_global_avg_pool(LowerCtx& c, const Layer&, Value* x) {
  c.image(-1);
  return global_avg_pool(c.b, x);
}

NETSPEC_REGISTER_LAYER(globalAvgPool, lower_global_avg_pool, {.cam_source = true})

}  // namespace netspec::layers
