// cspBlock (CSPNet, Wang et al. 2020, in the C3 form of ultralytics yolov5 models/common.py):
//   a = cbl1x1(x) -> nBlocks of a = a + cbl3x3(cbl1x1(a)) (Bottleneck, e = 1, shortcut)
//   out = cbl1x1(concat(a, cbl1x1(x)))     (cbl = conv, no bias + BN + net.convBnAct)
// Params in the accounting's order: cv1, cv2, m<i>.cv1, m<i>.cv2, cv3 (yolov5 lists cv3
// before m; the names, not the order, carry the mapping).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_csp_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<CspBlock>(layer);
  Activation act = c.net.convBnAct;
  Value* a = conv_bn_act(c, x, 1, Padding::same, act);
  Value* skip = conv_bn_act(c, x, 1, Padding::same, act);
  for (int i = 0; i < l.nBlocks; ++i) {
    Value* y = conv_bn_act(c, a, 1, Padding::same, act);
    a = c.b.add(a, conv_bn_act(c, y, 1, Padding::same, act));
  }
  return conv_bn_act(c, concat_channels(c.b, {a, skip}), 1, Padding::same, act);
}

NETSPEC_REGISTER_LAYER(cspBlock, lower_csp_block)

}  // namespace netspec::layers
