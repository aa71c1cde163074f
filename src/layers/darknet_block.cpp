// darknetBlock (YOLOv3 Darknet-53 residual unit, Redmon & Farhadi 2018; as in ultralytics
// yolov3 / yolov5 Bottleneck with e = 0.5): nBlocks of x = x + cbl3x3(cbl1x1(x)), where
// cbl = conv (no bias) + BN + net.convBnAct and the 1x1 halves the channels; no activation
// after the sum. Params per block: cv1, cv2.
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_darknet_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<DarknetBlock>(layer);
  c.check(l.ch % 2 == 0, "ch must be even (got {})", l.ch);
  c.image(l.ch);
  Activation act = c.net.convBnAct;
  for (int i = 0; i < l.nBlocks; ++i) {
    Scope s(c, fmt::format("block{}", i));
    Value* y = conv_bn_act(c, "cv1", x, {l.ch / 2, 1}, act);
    y = conv_bn_act(c, "cv2", y, {l.ch, 3}, act);
    x = c.b.add(x, y);
  }
  return x;
}

NETSPEC_REGISTER_LAYER(darknetBlock, lower_darknet_block, {.field_min = {{"ch", 2}}})

}  // namespace netspec::layers
