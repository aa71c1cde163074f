// transitionLayer (torchvision DenseNet _Transition): avgpool2x2_s2(conv1x1(act(BN(x)))), the
// pool unpadded (floor for odd sizes, as nn.AvgPool2d(2, 2)). act = net.convBnAct (ReLU).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_transition_layer(LowerCtx& c, const Layer&, Value* x) {
  Value* y = bn_act(c, x, c.net.convBnAct);
  y = conv(c, y, c.next_param(), 1, Padding::same);
  return avg_pool(c.b, y, 2, 2, {0, 0}, {0, 0});
}

NETSPEC_REGISTER_LAYER(transitionLayer, lower_transition_layer)

}  // namespace netspec::layers
