// fireModule (torchvision SqueezeNet Fire): s = relu(conv1x1(x) + b), then
// concat(relu(conv1x1(s) + b), relu(conv3x3(s) + b)) along channels (3x3 padded 1 on each side).
// Params: squeeze, expand1x1, expand3x3 (weight, bias each).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_fire_module(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<FireModule>(layer);
  c.image(l.ic);
  auto unit = [&](const char* name, Value* in, int64_t oc, int64_t k) {
    return activation(c.b, conv(c, name, in, {oc, k, 1, 1, true}), Activation::relu);
  };
  Value* s = unit("squeeze", x, l.squeeze, 1);
  Value* e1 = unit("expand1x1", s, l.e1x1, 1);
  Value* e3 = unit("expand3x3", s, l.e3x3, 3);
  return concat_channels(c.b, {e1, e3});
}

NETSPEC_REGISTER_LAYER(fireModule, lower_fire_module)

}  // namespace netspec::layers
