// flatten: [B, ...] -> [B, prod(...)] in row-major (NCHW) order, like torch.flatten(x, 1).
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_flatten(LowerCtx& c, const Layer&, Value* x) {
  int64_t n = x->type.dim(0);
  return c.b.reshape(x, {n, x->type.numel() / n});
}

NETSPEC_REGISTER_LAYER(flatten, lower_flatten)

}  // namespace netspec::layers
