// swinStage (not lowered yet: accounting only; lowering refuses it by name).
// torchvision SwinTransformerBlock x nBlocks on an image [dim, H, W] (odd blocks shift the
// windows): norm1, attn.qkv, attn.proj, relative_position_bias_table [(2w-1)², heads], norm2,
// mlp.0, mlp.3. H and W must be multiples of the window.
#include "layers/attention.h"
#include "layers/declare.h"

namespace netspec::layers {

Value* account_swin_stage(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<SwinStage>(layer);
  Decl c(lc);
  check_heads(lc, l.dim, l.heads);
  Fm x = c.image(l.dim);
  c.check(x.h % l.window == 0 && x.w % l.window == 0,
          "window does not divide the feature map (got {}x{}, window {})", x.h, x.w, l.window);
  int64_t t = x.h * x.w, w2 = int64_t{l.window} * l.window;
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(lc, fmt::format("blocks.{}", b));
    c.ln("norm1", l.dim);
    c.linear("attn.qkv", l.dim, 3 * l.dim, true, t);
    c.linear("attn.proj", l.dim, l.dim, true, t);
    c.param("attn.relative_position_bias_table", {(2 * l.window - 1) * (2 * l.window - 1), l.heads},
            ParamInit::relPosBias, false);
    c.add_flops(2 * 2 * t * w2 * l.dim);
    c.ln("norm2", l.dim);
    c.linear("mlp.0", l.dim, l.mlpDim, true, t);
    c.linear("mlp.3", l.mlpDim, l.dim, true, t);
  }
  return lc.not_lowered(c.in);
}

NETSPEC_REGISTER_LAYER(swinStage, account_swin_stage, {.lowered = false})

}  // namespace netspec::layers
