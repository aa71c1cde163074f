// convNextDownsample (torchvision ConvNeXt features[2i]): LayerNorm2d (or BN when norm = bn),
// then a 2x2 stride-2 unpadded conv with bias. Params: 0 (norm), 1 (conv).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_conv_next_downsample(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ConvNextDownsample>(layer);
  Value* gamma = c.next_param();
  Value* beta = c.next_param();
  Value* y = l.norm == Norm::ln ? layer_norm(c, x, gamma, beta, 1) : batch_norm(c, x, gamma, beta);
  return conv_bias_act(c, y, 2, Padding::valid, Activation::identity);
}

NETSPEC_REGISTER_LAYER(convNextDownsample, lower_conv_next_downsample)

}  // namespace netspec::layers
