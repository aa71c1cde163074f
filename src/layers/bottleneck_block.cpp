// bottleneckBlock (torchvision Bottleneck v1.5, expansion 4), nBlocks of
//   out = relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + shortcut(x)),
// conv1 1x1 -> oc/4, conv2 3x3 (stride here, v1.5), conv3 1x1 -> oc; shortcut as residualBlock.
#include "layers/block_helpers.h"

namespace netspec::layers {

Value* lower_bottleneck_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<BottleneckBlock>(layer);
  c.check(l.oc % 4 == 0, "oc must be a multiple of 4 (expansion 4) (got {})", l.oc);
  c.image(l.ic);
  const int64_t width = l.oc / 4;
  return repeat_blocks(c, l.nBlocks, l.firstStride, x, [&](int, int64_t stride, Value* x) {
    Value* y = conv_bn_act(c, "", x, {width, 1}, Activation::relu, "conv1", "bn1");
    y = conv_bn_act(c, "", y, {width, 3, stride}, Activation::relu, "conv2", "bn2");
    y = conv_bn_act(c, "", y, {l.oc, 1}, Activation::identity, "conv3", "bn3");
    return activation(c.b, c.b.add(y, shortcut(c, x, l.oc, stride)), Activation::relu);
  });
}

NETSPEC_REGISTER_LAYER(bottleneckBlock, lower_bottleneck_block)

}  // namespace netspec::layers
