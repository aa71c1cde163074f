// uib (timm UniversalInvertedResidual, MobileNetV4 conv variants):
//   [dw_start preDWk + BN, no act] -> pw_exp 1x1 + BN + act -> [dw_mid postDWk + BN + act]
//   -> pw_proj 1x1 + BN (linear); out = y + x when stride 1 and ic == oc.
// mid = make_divisible(ic · expand). The stride sits on dw_mid when present, else on dw_start;
// act is the net's convBnAct (ReLU). timm's layer scale is off (MobileNetV4-Conv). Drop path as
// timm's: on the branch of a residual block (drop_path(x) + shortcut), rate p·i/N over the
// "efficientnet" family's blocks (timm's builder counts every block, also its last 1x1 ConvBnAct,
// which the zoo writes as a convBn layer outside the family: N there is one less than timm's).
#include "layers/squeeze_excite.h"

namespace netspec::layers {

Value* lower_uib(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<Uib>(layer);
  check_stride12(c, l.stride);
  c.check(l.stride == 1 || l.preDWk > 0 || l.postDWk > 0,
          "a strided uib needs a depthwise conv (got preDWk 0, postDWk 0)");
  c.image(l.ic);
  const Activation act = c.net.convBnAct;
  const int64_t mid = make_divisible(static_cast<double>(l.ic) * l.expand);
  Value* y = x;
  if (l.preDWk > 0)
    y = conv_bn_act(c, "dw_start", y, {l.ic, l.preDWk, l.postDWk > 0 ? 1 : l.stride, l.ic},
                    Activation::identity);
  y = conv_bn_act(c, "pw_exp", y, {mid, 1}, act);
  if (l.postDWk > 0) y = conv_bn_act(c, "dw_mid", y, {mid, l.postDWk, l.stride, mid}, act);
  y = conv_bn_act(c, "pw_proj", y, {l.oc, 1}, Activation::identity);
  y = c.drop_path(y, 0, 0, l.stride == 1 && x->type.shape() == y->type.shape());
  return skip_add(c, x, y, l.stride);
}

NETSPEC_REGISTER_LAYER(uib, lower_uib,
                       {.ramp_family = "efficientnet",
                        .ramp = Ramp::count,
                        .field_min = {{"preDWk", 0}, {"postDWk", 0}}})

}  // namespace netspec::layers
