// convNextStage (torchvision CNBlock), nBlocks of
//   x = x + γ ⊙ Linear₂(act(Linear₁(norm(dwconv7x7(x) + b))))
// norm = LayerNorm over channels (eps net.lnEps) or BN when norm = bn; the Linears act per
// position (NHWC), so the first is a dot_general over the channel dim of NCHW giving
// [B, H, W, 4C] and the result is transposed back. γ = layer_scale [C, 1, 1] (init 1e-6),
// declared first as torchvision lists it: layer_scale, block.0 (dw), block.2 (norm), block.3/.5.
// Stochastic depth: the γ-scaled branch times the block's host-drawn keep mask (drop_path).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* channel_norm(LowerCtx& c, const std::string& name, Value* x, Norm n);  // downsample

Value* lower_conv_next_stage(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ConvNextStage>(layer);
  c.image(l.ch);
  hlo::Builder& b = c.b;
  const int64_t ch = l.ch;
  for (int i = 0; i < l.nBlocks; ++i) {
    Scope s(c, fmt::format("{}", i));
    Value* scale = c.param("layer_scale", {ch, 1, 1}, ParamInit::layerScale, false);
    Value* y = conv(c, "block.0", x, {ch, 7, 1, ch, true});
    y = channel_norm(c, "block.2", y, l.norm);
    Value* w1 = c.param("block.3.weight", {4 * ch, ch}, ParamInit::linearWeight, true);
    Value* b1 = c.param("block.3.bias", {4 * ch}, ParamInit::zeros, false);
    hlo::DotDims d1;  // [B, C, H, W] · [4C, C]ᵀ over C -> [B, H, W, 4C]
    d1.lhs_contracting = {1};
    d1.rhs_contracting = {1};
    Value* h = b.dot_general(y, w1, d1);
    h = activation(b, b.add(h, bcast(b, b1, h, 3)), l.act);
    Value* o = linear(c, "block.5", h, ch);  // [B, H, W, 4C] -> [B, H, W, C]
    o = b.transpose(o, {0, 3, 1, 2});
    Value* g = b.reshape(scale, {ch});
    x = b.add(x, c.drop_path(b.multiply(o, bcast(b, g, o, 1)), i));
  }
  return x;
}

NETSPEC_REGISTER_LAYER(convNextStage, lower_conv_next_stage,
                       {.ramp_family = "convnext", .ramp = Ramp::last})

}  // namespace netspec::layers
