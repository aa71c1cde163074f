// mobileVitBlock (not lowered yet: accounting only; lowering refuses it by name).
// timm MobileVitBlock: conv_kxk 3x3 + BN + act, conv_1x1 (ic -> dim, no bias), nTxBlocks
// transformer blocks on 2x2 patches, LayerNorm, conv_proj 1x1 (dim -> ic) + BN, conv_fusion
// 3x3 over concat(x, y) (2·ic -> ic) + BN. Output channels = ic.
#include "layers/attention.h"
#include "layers/declare.h"

namespace netspec::layers {

Value* account_mobile_vit_block(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<MobileVitBlock>(layer);
  Decl c(lc);
  check_heads(lc, l.dim, l.heads);
  Fm x = c.image(l.ic);
  c.check(x.h % 2 == 0 && x.w % 2 == 0, "needs an even feature map for 2x2 patches (got {}x{})",
          x.h, x.w);
  Fm y = c.conv_bn("conv_kxk", x, l.ic, 3);
  y = c.conv("conv_1x1", y, l.dim, 1);
  for (int b = 0; b < l.nTxBlocks; ++b) {
    Scope s(lc, fmt::format("transformer.{}", b));
    c.vit_block(x.h * x.w, l.dim, l.heads, l.mlpDim);
  }
  c.ln("norm", l.dim);
  y = c.conv_bn("conv_proj", y, l.ic, 1);
  c.conv_bn("conv_fusion", Fm{2 * l.ic, x.h, x.w}, l.ic, 3);
  return lc.not_lowered(x.shape());
}

NETSPEC_REGISTER_LAYER(mobileVitBlock, account_mobile_vit_block, {.lowered = false})

}  // namespace netspec::layers
