// bottleneckBlock (torchvision Bottleneck v1.5, expansion 4), nBlocks of
//   out = relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + shortcut(x)),
// conv1 1x1 -> oc/4, conv2 3x3 (stride here, v1.5), conv3 1x1 -> oc; shortcut as residualBlock.
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_bottleneck_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<BottleneckBlock>(layer);
  for (int i = 0; i < l.nBlocks; ++i) {
    int64_t stride = i == 0 ? l.firstStride : 1;
    Value* y = conv_bn_act(c, x, 1, Padding::same, Activation::relu);
    y = conv_bn_act(c, y, stride, Padding::same, Activation::relu);
    y = conv_bn_act(c, y, 1, Padding::same, Activation::identity);
    x = activation(c.b, c.b.add(y, shortcut(c, x, l.oc, stride)), Activation::relu);
  }
  return x;
}

NETSPEC_REGISTER_LAYER(bottleneckBlock, lower_bottleneck_block)

}  // namespace netspec::layers
