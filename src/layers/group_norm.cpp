// groupNorm: torch.nn.GroupNorm(groups, ch) on an image [C, H, W], then `act`. Per sample, the C
// channels form `groups` groups of C/groups; each group is normalised over its (C/groups)·H·W
// values: y = (x - μ_g)·rsqrt(σ²_g + eps)·γ_c + β_c, σ² biased, eps 1e-5 (PyTorch's default).
// No running statistics: train and eval compute the same thing. Also the norm of conv_bn_act
// when a kind's `norm` is gn (conv_bn.cpp).
#include "autodiff/vjp.h"
#include "layers/lower.h"

namespace netspec::layers {
namespace {
constexpr double kGroupNormEps = 1e-5;
}

Value* group_norm(LowerCtx& c, Value* x, Value* gamma, Value* beta, int64_t groups,
                  const char* field) {
  hlo::Builder& b = c.b;
  const Shape s = x->type.shape();  // [B, C, H, W]
  c.check(s.size() == 4, "GroupNorm needs [B, C, H, W] (got rank {})", s.size());
  c.check(groups >= 1 && s[1] % groups == 0,
          "{} must divide the channels (got {} groups for {} channels)", field, groups, s[1]);
  // NCHW keeps a group's C/G channels contiguous: [B, C, H, W] -> [B, G, (C/G)·H·W].
  const int64_t n = s[1] / groups * s[2] * s[3];
  Value* g = b.reshape(x, {s[0], groups, n});
  Value* zero = b.scalar(0, x->type.dtype());
  Value* sum = b.reduce(g, zero, {2}, hlo::OpKind::kAdd);  // [B, G]
  Value* inv_n = b.constant_splat(1.0 / double(n), sum->type);
  // μ [B, G] = Σx / n, a division as batch_norm (exact enough for stop_gradient below).
  Value* mean = b.divide(sum, b.constant_splat(static_cast<double>(n), sum->type));
  // σ²'s gradient through μ is exactly zero (Σ(x - μ) = 0): stop_gradient spares the backward a
  // reduction pass for it (as batch_norm).
  Value* cen =
      b.subtract(g, b.broadcast_in_dim(autodiff::stop_gradient(b, mean), g->type.shape(), {0, 1}));
  Value* var = b.multiply(b.reduce(b.multiply(cen, cen), zero, {2}, hlo::OpKind::kAdd), inv_n);
  Value* inv_std = b.rsqrt(b.add(var, b.constant_splat(kGroupNormEps, var->type)));
  // Folded into one per-(sample, channel) affine map: y = x·scale + shift with
  // scale = γ_c·rsqrt(σ²_g + eps), shift = β_c - μ_g·scale (one pass over x, as batch_norm).
  const Shape bc{s[0], s[1]};
  auto per_channel = [&](Value* v) {  // [B, G] -> [B, C]
    return b.reshape(b.broadcast_in_dim(v, {s[0], groups, s[1] / groups}, {0, 1}), bc);
  };
  Value* scale = b.multiply(per_channel(inv_std), b.broadcast_in_dim(gamma, bc, {1}));
  Value* shift =
      b.subtract(b.broadcast_in_dim(beta, bc, {1}), b.multiply(per_channel(mean), scale));
  return b.add(b.multiply(x, b.broadcast_in_dim(scale, s, {0, 1})),
               b.broadcast_in_dim(shift, s, {0, 1}));
}

Value* group_norm(LowerCtx& c, const std::string& name, Value* x, int64_t groups,
                  const char* field) {
  const int64_t ch = x->type.dim(1);
  Value* gamma = c.param(dot(name, "weight"), {ch}, ParamInit::ones, false);
  Value* beta = c.param(dot(name, "bias"), {ch}, ParamInit::zeros, false);
  return group_norm(c, x, gamma, beta, groups, field);
}

Value* lower_group_norm(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<GroupNorm>(layer);
  c.image(l.ch);
  return activation(c.b, group_norm(c, "", x, l.groups, "groups"), l.act);
}

NETSPEC_REGISTER_LAYER(groupNorm, lower_group_norm)

}  // namespace netspec::layers
