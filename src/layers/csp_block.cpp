// cspBlock (CSPNet, Wang et al. 2020, in the C3 form of ultralytics yolov5 models/common.py):
//   a = cbl1x1(x) -> nBlocks of a = a + cbl3x3(cbl1x1(a)) (Bottleneck, e = 1, shortcut)
//   out = cbl1x1(concat(a, cbl1x1(x)))     (cbl = conv, no bias + BN + net.convBnAct)
// Params: cv1, cv2, m<i>.cv1, m<i>.cv2, cv3 (yolov5 lists cv3 before m; the names, not the
// order, carry the mapping).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_csp_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<CspBlock>(layer);
  c.check(l.oc % 2 == 0, "oc must be even (got {})", l.oc);
  c.image(l.ic);
  const int64_t h = l.oc / 2;
  Activation act = c.net.convBnAct;
  Value* a = conv_bn_act(c, "cv1", x, {h, 1}, act);
  Value* skip = conv_bn_act(c, "cv2", x, {h, 1}, act);
  for (int i = 0; i < l.nBlocks; ++i) {
    Scope s(c, fmt::format("m{}", i));
    Value* y = conv_bn_act(c, "cv1", a, {h, 1}, act);
    a = c.b.add(a, conv_bn_act(c, "cv2", y, {h, 3}, act));
  }
  return conv_bn_act(c, "cv3", concat_channels(c.b, {a, skip}), {l.oc, 1}, act);
}

NETSPEC_REGISTER_LAYER(cspBlock, lower_csp_block, {.field_min = {{"oc", 2}}})

}  // namespace netspec::layers
