// mobileVitBlock (timm MobileVitBlock, patch 2x2) on an image [ic, H, W]:
//   y = conv_1x1(conv_kxk(x))                       3x3 conv+BN+act, then 1x1 ic -> dim (no bias)
//   unfold: [B, dim, H, W] -> [B·4, N, dim], one sequence per pixel offset (ph, pw) of the 2x2
//           patches, N = (H/2)(W/2) patches in row-major order (timm's reshape/transpose chain)
//   y = norm(transformer(y))                        nTxBlocks timm Blocks (heads, mlpDim, act)
//   fold back to [B, dim, H, W]; y = conv_proj(y)   1x1 dim -> ic + BN + act
//   out = conv_fusion(concat(x, y))                 3x3 2·ic -> ic + BN + act
// act: the net's convBnAct (SiLU = swish in timm's MobileViT), also the transformer MLP's.
#include "layers/attention.h"

namespace netspec::layers {

Value* lower_mobile_vit_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<MobileVitBlock>(layer);
  check_heads(c, l.dim, l.heads);
  Fm f = c.image(l.ic);
  c.check(f.h % 2 == 0 && f.w % 2 == 0, "needs an even feature map for 2x2 patches (got {}x{})",
          f.h, f.w);
  hlo::Builder& b = c.b;
  const Activation act = c.net.convBnAct;
  int64_t batch = x->type.dim(0), d = l.dim, nh = f.h / 2, nw = f.w / 2;
  Value* y = conv_bn_act(c, "conv_kxk", x, {l.ic, 3}, act);
  y = conv(c, "conv_1x1", y, {d, 1});
  // [B, C, nh, ph, nw, pw] -> [B, ph, pw, nh, nw, C] -> [B·4, N, C]
  y = b.reshape(y, {batch, d, nh, 2, nw, 2});
  y = b.reshape(b.transpose(y, {0, 3, 5, 2, 4, 1}), {batch * 4, nh * nw, d});
  const VitOptions o{.heads = l.heads, .mlp_dim = l.mlpDim, .act = act};
  for (int i = 0; i < l.nTxBlocks; ++i) {
    Scope s(c, fmt::format("transformer.{}", i));
    y = vit_block(c, y, o, i);
  }
  y = layer_norm(c, "norm", y, 2);
  y = b.reshape(y, {batch, 2, 2, nh, nw, d});
  y = b.reshape(b.transpose(y, {0, 5, 3, 1, 4, 2}), {batch, d, f.h, f.w});
  y = conv_bn_act(c, "conv_proj", y, {l.ic, 1}, act);
  return conv_bn_act(c, "conv_fusion", b.concatenate({x, y}, 1), {l.ic, 3}, act);
}

NETSPEC_REGISTER_LAYER(mobileVitBlock, lower_mobile_vit_block,
                       {.ramp_family = "mobilevit", .ramp = Ramp::last})

}  // namespace netspec::layers
