// nerfMLP (not lowered yet: accounting only; lowering refuses it by name).
// NeRF MLP on concat(γ(pos), γ(dir)): 8 ReLU layers of `hidden` with the position re-injected
// at layer 5, sigma head, feature layer, direction layer (hidden/2), rgb head. Output [4].
#include "layers/declare.h"

namespace netspec::layers {

Value* account_nerf_mlp(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<NerfMlp>(layer);
  Decl c(lc);
  c.vec(int64_t{l.posDim} + l.dirDim);
  int64_t h = l.hidden;
  for (int i = 0; i < 8; ++i)
    c.linear(fmt::format("pts_linears.{}", i), i == 0 ? l.posDim : (i == 5 ? h + l.posDim : h), h,
             true);
  c.linear("alpha_linear", h, 1, true);
  c.linear("feature_linear", h, h, true);
  c.linear("views_linears.0", h + l.dirDim, h / 2, true);
  c.linear("rgb_linear", h / 2, 3, true);
  return lc.not_lowered({4});
}

NETSPEC_REGISTER_LAYER(nerfMLP, account_nerf_mlp,
                       {.lowered = false, .field_min = {{"hidden", 2}}})

}  // namespace netspec::layers
