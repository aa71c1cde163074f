// lmHead: per-position logits y = x·Wᵀ, x [B, T, D], W [V, D] (untied, no bias) -> [B, T, V].
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_lm_head(LowerCtx& c, const Layer&, Value* x) {
  Value* w = c.next_param();
  hlo::DotDims d;
  d.lhs_contracting = {2};
  d.rhs_contracting = {1};
  return c.b.dot_general(x, w, d);
}

NETSPEC_REGISTER_LAYER(lmHead, lower_lm_head)

}  // namespace netspec::layers
