// patchMerging (timm/torchvision Swin PatchMerging) on an image [inDim, H, W]: each 2x2
// neighbourhood becomes one 4·inDim vector in the order x[0::2, 0::2], x[1::2, 0::2],
// x[0::2, 1::2], x[1::2, 1::2] (channel ww·2C + hh·C + c), then LayerNorm "norm" and Linear
// "reduction" (no bias) -> [outDim, H/2, W/2]. Params (torchvision order): reduction, norm.
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_patch_merging(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<PatchMerging>(layer);
  Fm f = c.image(l.inDim);
  c.check(f.h % 2 == 0 && f.w % 2 == 0, "needs an even feature map (got {}x{})", f.h, f.w);
  hlo::Builder& b = c.b;
  int64_t batch = x->type.dim(0), ch = f.c, h2 = f.h / 2, w2 = f.w / 2;
  Value* w = c.param("reduction.weight", {l.outDim, 4 * ch}, ParamInit::linearWeight, true);
  // [B, C, H/2, hh, W/2, ww] -> [B, H/2, W/2, ww, hh, C] -> [B, H/2, W/2, 4C]
  Value* y = b.reshape(x, {batch, ch, h2, 2, w2, 2});
  y = b.reshape(b.transpose(y, {0, 2, 4, 5, 3, 1}), {batch, h2, w2, 4 * ch});
  y = linear_apply(b, layer_norm(c, "norm", y, 3), w);
  return b.transpose(y, {0, 3, 1, 2});
}

NETSPEC_REGISTER_LAYER(patchMerging, lower_patch_merging)

}  // namespace netspec::layers
