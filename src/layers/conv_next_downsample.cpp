// convNextDownsample (torchvision ConvNeXt features[2i]): LayerNorm2d (or BN when norm = bn),
// then a 2x2 stride-2 unpadded conv with bias. Params: 0 (norm), 1 (conv).
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* channel_norm(LowerCtx& c, const std::string& name, Value* x, Norm n) {
  if (n == Norm::ln) return layer_norm(c, name, x, 1);
  c.check(n == Norm::bn, "norm must be ln or bn (got {})", enum_name(n));
  return batch_norm(c, x, c.bn(name, x->type.dim(1)));
}

Value* lower_conv_next_downsample(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ConvNextDownsample>(layer);
  Fm f = c.image(l.ic);
  c.check(f.h % 2 == 0 && f.w % 2 == 0, "needs an even feature map (got {}x{})", f.h, f.w);
  Value* y = channel_norm(c, "0", x, l.norm);
  return conv(c, "1", y, {l.oc, 2, 2, 1, true, Padding::valid});
}

NETSPEC_REGISTER_LAYER(convNextDownsample, lower_conv_next_downsample)

}  // namespace netspec::layers
