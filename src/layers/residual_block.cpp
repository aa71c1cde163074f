// residualBlock (torchvision BasicBlock), nBlocks of
//   out = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)),
// 3x3 convs, stride on conv1 of the first block; shortcut = 1x1 conv (stride) + BN when the
// stride or the width changes, else x. Names follow torchvision: block<i>.conv1 / bn1 /
// downsample.0 / .1. norm = gn: GroupNorm(normGroups) in place of every BN (same names).
#include "layers/block_helpers.h"

namespace netspec::layers {

Value* shortcut(LowerCtx& c, Value* x, int64_t oc, int64_t stride) {
  if (stride == 1 && x->type.dim(1) == oc) return x;
  return conv_bn_act(c, "downsample", x, {oc, 1, stride}, Activation::identity, "0", "1");
}

Value* lower_residual_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ResidualBlock>(layer);
  c.image(l.ic);
  set_conv_norm(c, l.norm, l.normGroups);
  return repeat_blocks(c, l.nBlocks, l.firstStride, x, [&](int, int64_t stride, Value* x) {
    Value* y = conv_bn_act(c, "", x, {l.oc, 3, stride}, Activation::relu, "conv1", "bn1");
    y = conv_bn_act(c, "", y, {l.oc, 3}, Activation::identity, "conv2", "bn2");
    return activation(c.b, c.b.add(y, shortcut(c, x, l.oc, stride)), Activation::relu);
  });
}

NETSPEC_REGISTER_LAYER(residualBlock, lower_residual_block)

}  // namespace netspec::layers
