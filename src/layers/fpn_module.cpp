// fpnModule (not lowered yet: accounting only; lowering refuses it by name).
// Input is C5; C4, C3 (and C2 when c2 > 0) are the latest earlier outputs with those channels
// at 2x, 4x (8x) the resolution. inner_blocks.i: 1x1 ci -> target, layer_blocks.i: 3x3, both
// with bias (i from the finest level). Output: the finest pyramid level [target, H, W].
#include "layers/declare.h"

namespace netspec::layers {

Value* account_fpn_module(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<FpnModule>(layer);
  Decl c(lc);
  Fm c5 = c.image(l.c5);
  std::vector<Fm> levels;
  if (l.c2 > 0) levels.push_back(c.tap("C2", l.c2, 8 * c5.h, 8 * c5.w));
  levels.push_back(c.tap("C3", l.c3, 4 * c5.h, 4 * c5.w));
  levels.push_back(c.tap("C4", l.c4, 2 * c5.h, 2 * c5.w));
  levels.push_back(c5);
  for (size_t i = 0; i < levels.size(); ++i)
    c.conv(fmt::format("inner_blocks.{}", i), levels[i], l.target, 1, 1, 1, true);
  for (size_t i = 0; i < levels.size(); ++i)
    c.conv(fmt::format("layer_blocks.{}", i), Fm{l.target, levels[i].h, levels[i].w}, l.target, 3,
           1, 1, true);
  return lc.not_lowered({l.target, levels[0].h, levels[0].w});
}

NETSPEC_REGISTER_LAYER(fpnModule, account_fpn_module, {.lowered = false, .field_min = {{"c2", 0}}})

}  // namespace netspec::layers
