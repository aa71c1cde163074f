// convNextStem (torchvision ConvNeXt features[0]): patchify conv k = s = patch, unpadded, with
// bias, then LayerNorm2d over channels (eps net.lnEps, 1e-6 in torchvision). Params: 0, 1.
#include "layers/block_helpers.h"
#include "layers/convnet_blocks.h"

namespace netspec::layers {

Value* lower_conv_next_stem(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<ConvNextStem>(layer);
  patched_image(c, l.ic, l.patch);
  Value* y = conv(c, "0", x, {l.oc, l.patch, l.patch, 1, true, Padding::valid});
  return layer_norm(c, "1", y, 1);
}

NETSPEC_REGISTER_LAYER(convNextStem, lower_conv_next_stem)

}  // namespace netspec::layers
