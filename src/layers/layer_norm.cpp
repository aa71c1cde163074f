// layerNorm: y = (x - μ)·rsqrt(σ² + eps)·γ + β over the feature dim: the last dim of [B, D] /
// [B, T, D], the channel dim of [B, C, H, W] (per position, LayerNorm2d). Biased σ², eps from
// NetSpec::lnEps (1e-5 as nn.LayerNorm; ViT and ConvNeXt use 1e-6).
#include "layers/lower.h"

namespace netspec::layers {

Value* layer_norm(LowerCtx& c, Value* x, Value* gamma, Value* beta, int64_t fd) {
  hlo::Builder& b = c.b;
  int64_t rank = x->type.rank();
  int64_t d = x->type.dim(fd);
  hlo::I64s keep;  // dims of the reduced result within x
  for (int64_t i = 0; i < rank; ++i)
    if (i != fd) keep.push_back(i);
  Value* zero = b.scalar(0, x->type.dtype());
  Value* sum = b.reduce(x, zero, {fd}, hlo::OpKind::kAdd);
  Value* inv_d = b.constant_splat(1.0 / double(d), sum->type);
  Value* mean = b.broadcast_in_dim(b.multiply(sum, inv_d), x->type.shape(), keep);
  Value* cen = b.subtract(x, mean);
  Value* var = b.multiply(b.reduce(b.multiply(cen, cen), zero, {fd}, hlo::OpKind::kAdd), inv_d);
  Value* inv_std = b.rsqrt(b.add(var, b.constant_splat(c.net.lnEps, var->type)));
  Value* y = b.multiply(cen, b.broadcast_in_dim(inv_std, x->type.shape(), keep));
  return b.add(b.multiply(y, bcast(b, gamma, y, fd)), bcast(b, beta, y, fd));
}

Value* layer_norm(LowerCtx& c, const std::string& name, Value* x, int64_t fd) {
  int64_t d = x->type.dim(fd);
  Value* gamma = c.param(dot(name, "weight"), {d}, ParamInit::ones, false);
  Value* beta = c.param(dot(name, "bias"), {d}, ParamInit::zeros, false);
  return layer_norm(c, x, gamma, beta, fd);
}

Value* lower_layer_norm(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<LayerNorm>(layer);
  const Shape& in = c.info.in;
  c.channels_match("normalized dim", in.size() == 3 ? in[0] : in.back(), l.dim);
  int64_t rank = x->type.rank();
  return layer_norm(c, "", x, rank == 4 ? 1 : rank - 1);
}

NETSPEC_REGISTER_LAYER(layerNorm, lower_layer_norm)

}  // namespace netspec::layers
