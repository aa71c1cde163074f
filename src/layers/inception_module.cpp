// inceptionModule (torchvision GoogLeNet Inception; BasicConv2d = conv + BN + act, the net's
// bnEps 1e-3 and convBnAct ReLU): concat of
//   branch1 = u1x1(x), branch2 = u3x3(u1x1(x)), branch3 = u3x3(u1x1(x)) (torchvision's 3x3
//   where the paper has 5x5), branch4 = u1x1(maxpool3x3_s1_p1(x)).
// The stride-1 pool pads 1 with -inf on each side, so ceil_mode changes nothing here.
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_inception_module(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<InceptionModule>(layer);
  c.image(l.ic);
  Activation act = c.net.convBnAct;
  auto unit = [&](const char* name, Value* in, int64_t oc, int64_t k) {
    return conv_bn_act(c, name, in, {oc, k}, act);
  };
  Value* b1 = unit("branch1", x, l.b1, 1);
  Value* b2 = unit("branch2.1", unit("branch2.0", x, l.b2reduce, 1), l.b2, 3);
  Value* b3 = unit("branch3.1", unit("branch3.0", x, l.b3reduce, 1), l.b3, 3);
  Value* b4 = unit("branch4.1", max_pool(c.b, x, 3, 1, {1, 1}, {1, 1}), l.b4, 1);
  return concat_channels(c.b, {b1, b2, b3, b4});
}

NETSPEC_REGISTER_LAYER(inceptionModule, lower_inception_module)

}  // namespace netspec::layers
