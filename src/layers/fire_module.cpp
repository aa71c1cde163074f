// fireModule (torchvision SqueezeNet Fire): s = relu(conv1x1(x) + b), then
// concat(relu(conv1x1(s) + b), relu(conv3x3(s) + b)) along channels (3x3 padded 1 on each side).
// Params: squeeze, expand1x1, expand3x3 (weight, bias each).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_fire_module(LowerCtx& c, const Layer&, Value* x) {
  Value* s = conv_bias_act(c, x, 1, Padding::same, Activation::relu);
  Value* e1 = conv_bias_act(c, s, 1, Padding::same, Activation::relu);
  Value* e3 = conv_bias_act(c, s, 1, Padding::same, Activation::relu);
  return concat_channels(c.b, {e1, e3});
}

NETSPEC_REGISTER_LAYER(fireModule, lower_fire_module)

}  // namespace netspec::layers
