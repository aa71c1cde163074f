// invertedResidual (torchvision MobileNetV2 InvertedResidual), nBlocks of
//   y = bn(project(act(bn(dw3x3(act(bn(expand1x1(x)))))))), out = y + x when stride 1 and ic == oc;
// the expand conv is absent when expand == 1; hidden = c_in · expand; act is the net's
// convBnAct (relu6); the project is linear. Stride on the first block's depthwise conv.
#include "layers/squeeze_excite.h"

namespace netspec::layers {

Value* lower_inverted_residual(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<InvertedResidual>(layer);
  check_mobile_block(c, l.ic, l.stride);
  const Activation act = c.net.convBnAct;
  return repeat_blocks(c, l.nBlocks, l.stride, x, [&](int, int64_t stride, Value* x) {
    int64_t hidden = x->type.dim(1) * l.expand;
    Value* y = x;
    if (l.expand != 1) y = conv_bn_act(c, "expand", y, {hidden, 1}, act);
    y = conv_bn_act(c, "dw", y, {hidden, 3, stride, hidden}, act);
    y = conv_bn_act(c, "project", y, {l.oc, 1}, Activation::identity);
    return skip_add(c, x, y, stride);
  });
}

NETSPEC_REGISTER_LAYER(invertedResidual, lower_inverted_residual)

}  // namespace netspec::layers
