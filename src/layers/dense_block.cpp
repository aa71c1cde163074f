// denseBlock (torchvision DenseNet _DenseBlock, bn_size 4): nLayers dense layers, each
//   y = conv3x3(act(BN(conv1x1(act(BN(x)))))) (growth channels), x = concat(x, y).
// Params per layer: norm1, conv1, norm2, conv2. act = net.convBnAct (ReLU in torchvision).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_dense_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<DenseBlock>(layer);
  Activation act = c.net.convBnAct;
  for (int i = 0; i < l.nLayers; ++i) {
    Value* y = bn_act(c, x, act);
    y = conv(c, y, c.next_param(), 1, Padding::same);
    y = bn_act(c, y, act);
    y = conv(c, y, c.next_param(), 1, Padding::same);
    x = concat_channels(c.b, {x, y});
  }
  return x;
}

NETSPEC_REGISTER_LAYER(denseBlock, lower_dense_block)

}  // namespace netspec::layers
