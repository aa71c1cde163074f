// nerfMLP (NeRF's MLP as nerf-pytorch's NeRF with use_viewdirs) on x = concat(γ(pos), γ(dir))
// [posDim + dirDim]: h = γ(pos); 8 Linear+ReLU layers of `hidden` ("pts_linears.i"), the output
// of the 5th (i = 4) concatenated with γ(pos) again (skip), then
//   σ = alpha_linear(h);  f = feature_linear(h);  v = relu(views_linears.0(concat(f, γ(dir))))
//   rgb = rgb_linear(v)
// Output [4] = (rgb, σ) raw, as nerf-pytorch returns them (the renderer applies sigmoid / relu).
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_nerf_mlp(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<NerfMlp>(layer);
  c.vec(int64_t{l.posDim} + l.dirDim);
  hlo::Builder& b = c.b;
  const int64_t n = x->type.dim(0), h = l.hidden;
  Value* pos = b.slice(x, {0, 0}, {n, l.posDim});
  Value* dir = b.slice(x, {0, l.posDim}, {n, int64_t{l.posDim} + l.dirDim});
  Value* y = pos;
  for (int i = 0; i < 8; ++i) {
    y = activation(b, linear(c, fmt::format("pts_linears.{}", i), y, h), Activation::relu);
    if (i == 4) y = b.concatenate({pos, y}, 1);  // nerf-pytorch skips = [4]
  }
  Value* sigma = linear(c, "alpha_linear", y, 1);
  Value* feat = linear(c, "feature_linear", y, h);
  Value* v = activation(b, linear(c, "views_linears.0", b.concatenate({feat, dir}, 1), h / 2),
                        Activation::relu);
  Value* rgb = linear(c, "rgb_linear", v, 3);
  return b.concatenate({rgb, sigma}, 1);
}

NETSPEC_REGISTER_LAYER(nerfMLP, lower_nerf_mlp, {.field_min = {{"hidden", 2}}})

}  // namespace netspec::layers
