// shuffleV2Block (torchvision shufflenetv2.InvertedResidual), nUnits units, unit 0 stride 2:
//   branch1(x) = act(BN(pw1x1(BN(dw3x3_s2(x)))))        (unit 0 only)
//   branch2(x) = act(BN(pw1x1(BN(dw3x3_s(act(BN(pw1x1(x))))))))
//   unit 0: out = concat(branch1(x), branch2(x)); later: x1, x2 = halves of x,
//   out = concat(x1, branch2(x2)); then channel_shuffle(out, 2). act = net.convBnAct (ReLU).
#include "layers/convnet_blocks.h"

namespace netspec::layers {
namespace {
Value* branch2(LowerCtx& c, Value* x, int64_t bf, int64_t stride) {
  Activation act = c.net.convBnAct;
  Value* y = conv_bn_act(c, "branch2.pw1", x, {bf, 1}, act);
  y = conv_bn_act(c, "branch2.dw", y, {bf, 3, stride, bf}, Activation::identity);
  return conv_bn_act(c, "branch2.pw2", y, {bf, 1}, act);
}
}  // namespace

Value* lower_shuffle_v2_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ShuffleV2Block>(layer);
  c.check(l.oc % 2 == 0, "oc must be even (got {})", l.oc);
  c.image(l.ic);
  hlo::Builder& b = c.b;
  int64_t bf = l.oc / 2;
  for (int u = 0; u < l.nUnits; ++u) {
    Scope s(c, fmt::format("unit{}", u));
    Value* out;
    if (u == 0) {
      int64_t ic = x->type.dim(1);
      Value* b1 = conv_bn_act(c, "branch1.dw", x, {ic, 3, 2, ic}, Activation::identity);
      b1 = conv_bn_act(c, "branch1.pw", b1, {bf, 1}, c.net.convBnAct);
      out = concat_channels(b, {b1, branch2(c, x, bf, 2)});
    } else {
      Value* x1 = slice_channels(b, x, 0, bf);
      Value* x2 = slice_channels(b, x, bf, l.oc);
      out = concat_channels(b, {x1, branch2(c, x2, bf, 1)});
    }
    x = channel_shuffle(b, out, 2);
  }
  return x;
}

NETSPEC_REGISTER_LAYER(shuffleV2Block, lower_shuffle_v2_block, {.field_min = {{"oc", 2}}})

}  // namespace netspec::layers
