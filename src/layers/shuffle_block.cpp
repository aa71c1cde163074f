// shuffleBlock (ShuffleNet v1, Zhang et al. 2018, Fig. 2 b/c; Megvii ShuffleNet-Series
// ShuffleNetV1/blocks.py): nUnits units of
//   y = BN(gconv1x1_2(BN(dw3x3_s(shuffle_g(act(BN(gconv1x1_1(x))))))))
//   (bottleneck width oc / 4) unit 0 (stride 2): x = act(concat(avgpool3x3_s2(x), y)); later units:
//   x = act(x + y).
// The avg pool pads like the depthwise conv it runs beside (the net's `same` rule) and divides
// by 9 everywhere (nn.AvgPool2d(3, 2, 1), count_include_pad = True). act = net.convBnAct.
// Megvii applies act to the branch only, before the concat: equal for ReLU nets, whose
// block input (and so its average) is already >= 0.
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_shuffle_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ShuffleBlock>(layer);
  c.check(l.oc > l.ic, "oc must exceed ic (unit 0 concatenates the input) (got {} <= {})", l.oc,
          l.ic);
  const int64_t mid = l.oc / 4, g = l.groups;
  c.check(mid % g == 0 && l.ic % g == 0 && (l.oc - l.ic) % g == 0,
          "groups {} must divide ic {}, oc/4 {} and oc-ic {}", l.groups, l.ic, mid, l.oc - l.ic);
  c.image(l.ic);
  hlo::Builder& b = c.b;
  Activation act = c.net.convBnAct;
  for (int u = 0; u < l.nUnits; ++u) {
    Scope s(c, fmt::format("unit{}", u));
    int64_t stride = u == 0 ? 2 : 1;
    int64_t branch_out = u == 0 ? l.oc - l.ic : l.oc;
    Value* y = conv_bn_act(c, "gconv1", x, {mid, 1, 1, g}, act);
    y = channel_shuffle(b, y, l.groups);
    y = conv_bn_act(c, "dw", y, {mid, 3, stride, mid}, Activation::identity);
    y = conv_bn_act(c, "gconv2", y, {branch_out, 1, 1, g}, Activation::identity);
    if (u == 0) {
      const Shape& s = x->type.shape();
      PadStyle ps = c.net.convPadStyle;
      Value* pooled = avg_pool(b, x, 3, 2, spatial_padding(s[2], 3, 2, Padding::same, ps),
                               spatial_padding(s[3], 3, 2, Padding::same, ps));
      x = activation(b, concat_channels(b, {pooled, y}), act);
    } else {
      x = activation(b, b.add(x, y), act);
    }
  }
  return x;
}

NETSPEC_REGISTER_LAYER(shuffleBlock, lower_shuffle_block)

}  // namespace netspec::layers
