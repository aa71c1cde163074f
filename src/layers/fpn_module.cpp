// fpnModule: torchvision FeaturePyramidNetwork's top-down pathway, returning its finest level.
// Input is C5; C4, C3 (and C2 when c2 > 0) are the latest earlier layer inputs with those channels
// at 2x, 4x (8x) the resolution (tap). inner_i = inner_blocks.i(C_i) (1x1 + bias, i from the
// finest level); top-down: last = inner_top, last = inner_i + nearest2x(last) down to the finest;
// output layer_blocks.0(last) (3x3 + bias) [target, H, W]. Only the finest output is returned,
// so only layer_blocks.0 is declared (torchvision's coarser layer_blocks would get no gradient).
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_fpn_module(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<FpnModule>(layer);
  Fm c5 = c.image(l.c5);
  std::vector<Value*> levels;
  if (l.c2 > 0) levels.push_back(c.tap("C2", l.c2, 8 * c5.h, 8 * c5.w));
  levels.push_back(c.tap("C3", l.c3, 4 * c5.h, 4 * c5.w));
  levels.push_back(c.tap("C4", l.c4, 2 * c5.h, 2 * c5.w));
  levels.push_back(x);
  std::vector<Value*> inner;
  for (size_t i = 0; i < levels.size(); ++i)
    inner.push_back(
        conv(c, fmt::format("inner_blocks.{}.0", i), levels[i], {l.target, 1, 1, 1, true}));
  Value* last = inner.back();
  for (size_t i = inner.size() - 1; i-- > 0;) last = c.b.add(inner[i], up2(c.b, last));
  return conv(c, "layer_blocks.0.0", last, {l.target, 3, 1, 1, true});
}

NETSPEC_REGISTER_LAYER(fpnModule, lower_fpn_module, {.field_min = {{"c2", 0}}})

}  // namespace netspec::layers
