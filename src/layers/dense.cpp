// dense: y = act(x·Wᵀ + b) with W [out, in] (PyTorch layout), on [B, in] or per token [B, T, in].
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_dense(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<Dense>(layer);
  Value* w = c.next_param();
  Value* bias = c.next_param();
  hlo::DotDims d;
  d.lhs_contracting = {x->type.rank() - 1};
  d.rhs_contracting = {1};
  Value* y = c.b.dot_general(x, w, d);
  y = c.b.add(y, bcast(c.b, bias, y, y->type.rank() - 1));
  return activation(c.b, y, l.act);
}

NETSPEC_REGISTER_LAYER(dense, lower_dense)

}  // namespace netspec::layers
