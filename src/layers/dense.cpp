// dense: y = act(x·Wᵀ + b) with W [out, in] (PyTorch layout), on [B, in] or per token [B, T, in].
// Also the shared nn.Linear helper.
#include "layers/lower.h"

namespace netspec::layers {

Value* linear_apply(hlo::Builder& b, Value* x, Value* w, Value* bias) {
  hlo::DotDims d;
  d.lhs_contracting = {x->type.rank() - 1};
  d.rhs_contracting = {1};
  Value* y = b.dot_general(x, w, d);
  return bias ? b.add(y, bcast(b, bias, y, y->type.rank() - 1)) : y;
}

Value* linear(LowerCtx& c, const std::string& name, Value* x, int64_t out, bool bias) {
  int64_t in = x->type.dim(x->type.rank() - 1);
  Value* w = c.param(dot(name, "weight"), {out, in}, ParamInit::linearWeight, true);
  Value* bv = bias ? c.param(dot(name, "bias"), {out}, ParamInit::zeros, false) : nullptr;
  return linear_apply(c.b, x, w, bv);
}

Value* lower_dense(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<Dense>(layer);
  if (c.info.in.size() == 2)
    c.tokens(l.in);
  else
    c.vec(l.in);
  return activation(c.b, linear(c, "", x, l.out), l.act);
}

NETSPEC_REGISTER_LAYER(dense, lower_dense, {.classifier = true})

}  // namespace netspec::layers
