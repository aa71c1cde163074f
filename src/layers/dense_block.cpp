// denseBlock (torchvision DenseNet _DenseBlock, bn_size 4): nLayers dense layers, each
//   y = conv3x3(act(BN(conv1x1(act(BN(x)))))) (growth channels), x = concat(x, y).
// Params per layer denselayer<i+1>: norm1, conv1, norm2, conv2. act = net.convBnAct (ReLU).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_dense_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<DenseBlock>(layer);
  c.image(l.ic);
  Activation act = c.net.convBnAct;
  const int64_t g = l.growth;
  for (int i = 0; i < l.nLayers; ++i) {
    Scope s(c, fmt::format("denselayer{}", i + 1));
    Value* y = bn_act(c, "norm1", x, act);
    y = conv(c, "conv1", y, {4 * g, 1});
    y = bn_act(c, "norm2", y, act);
    y = conv(c, "conv2", y, {g, 3});
    x = concat_channels(c.b, {x, y});
  }
  return x;
}

NETSPEC_REGISTER_LAYER(denseBlock, lower_dense_block)

}  // namespace netspec::layers
