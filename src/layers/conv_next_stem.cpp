// convNextStem (torchvision ConvNeXt features[0]): patchify conv k = s = patch, unpadded, with
// bias, then LayerNorm2d over channels (eps net.lnEps, 1e-6 in torchvision). Params: 0, 1.
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_conv_next_stem(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ConvNextStem>(layer);
  Value* y = conv_bias_act(c, x, l.patch, Padding::valid, Activation::identity);
  Value* gamma = c.next_param();
  Value* beta = c.next_param();
  return layer_norm(c, y, gamma, beta, 1);
}

NETSPEC_REGISTER_LAYER(convNextStem, lower_conv_next_stem)

}  // namespace netspec::layers
