// transitionLayer (torchvision DenseNet _Transition): avgpool2x2_s2(conv1x1(act(BN(x)))), the
// pool unpadded (floor for odd sizes, as nn.AvgPool2d(2, 2)). act = net.convBnAct (ReLU).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_transition_layer(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<TransitionLayer>(layer);
  Fm f = c.image(l.ic);
  c.check(f.h >= 2 && f.w >= 2, "feature map too small to pool (got {}x{})", f.h, f.w);
  Value* y = bn_act(c, "norm", x, c.net.convBnAct);
  y = conv(c, "conv", y, {l.oc, 1});
  return avg_pool(c.b, y, 2, 2, {0, 0}, {0, 0});
}

NETSPEC_REGISTER_LAYER(transitionLayer, lower_transition_layer)

}  // namespace netspec::layers
