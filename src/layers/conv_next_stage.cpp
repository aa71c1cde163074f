// convNextStage (torchvision CNBlock), nBlocks of
//   x = x + γ ⊙ Linear₂(act(Linear₁(norm(dwconv7x7(x) + b))))
// norm = LayerNorm over channels (eps net.lnEps) or BN when norm = bn; the Linears act per
// position (NHWC), so the first is a dot_general over the channel dim of NCHW giving
// [B, H, W, 4C] and the result is transposed back. γ = layer_scale [C, 1, 1].
// Stochastic depth: the γ-scaled branch times the block's host-drawn keep mask (drop_path).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_conv_next_stage(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ConvNextStage>(layer);
  hlo::Builder& b = c.b;
  for (int i = 0; i < l.nBlocks; ++i) {
    Value* scale = c.next_param();
    Value* y = conv_bias_act(c, x, 1, Padding::same, Activation::identity);
    Value* gamma = c.next_param();
    Value* beta = c.next_param();
    y = l.norm == Norm::ln ? layer_norm(c, y, gamma, beta, 1) : batch_norm(c, y, gamma, beta);
    Value* w1 = c.next_param();
    Value* b1 = c.next_param();
    hlo::DotDims d1;  // [B, C, H, W] · [4C, C]ᵀ over C -> [B, H, W, 4C]
    d1.lhs_contracting = {1};
    d1.rhs_contracting = {1};
    Value* h = b.dot_general(y, w1, d1);
    h = activation(b, b.add(h, bcast(b, b1, h, 3)), l.act);
    Value* w2 = c.next_param();
    Value* b2 = c.next_param();
    hlo::DotDims d2;  // [B, H, W, 4C] · [C, 4C]ᵀ -> [B, H, W, C]
    d2.lhs_contracting = {3};
    d2.rhs_contracting = {1};
    Value* o = b.dot_general(h, w2, d2);
    o = b.transpose(b.add(o, bcast(b, b2, o, 3)), {0, 3, 1, 2});
    Value* g = b.reshape(scale, {scale->type.dim(0)});
    x = b.add(x, c.drop_path(b.multiply(o, bcast(b, g, o, 1)), i));
  }
  return x;
}

NETSPEC_REGISTER_LAYER(convNextStage, lower_conv_next_stage)

}  // namespace netspec::layers
