// patchMerging (not lowered yet: accounting only; lowering refuses it by name).
// torchvision PatchMerging: gather 2x2 neighbours -> 4·inDim, LayerNorm, Linear (no bias).
#include "layers/declare.h"

namespace netspec::layers {

Value* account_patch_merging(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<PatchMerging>(layer);
  Decl c(lc);
  Fm x = c.image(l.inDim);
  c.check(x.h % 2 == 0 && x.w % 2 == 0, "needs an even feature map (got {}x{})", x.h, x.w);
  c.linear("reduction", 4 * l.inDim, l.outDim, false, (x.h / 2) * (x.w / 2));
  c.ln("norm", 4 * l.inDim);
  return lc.not_lowered({l.outDim, x.h / 2, x.w / 2});
}

NETSPEC_REGISTER_LAYER(patchMerging, account_patch_merging, {.lowered = false})

}  // namespace netspec::layers
