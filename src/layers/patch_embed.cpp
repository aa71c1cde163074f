// patchEmbed (timm PatchEmbed + class token + learned positions):
//   p = conv(x, W, stride = patch, valid) + b  [B, D, h, w] -> tokens [B, h·w, D] (row-major
//   patches, as timm's flatten(2).transpose(1, 2)); y = concat(cls, p) + pos  [B, n + 1, D].
// Params (timm order): cls_token [1, 1, D], pos_embed [1, n + 1, D], proj.weight, proj.bias.
// classToken = false: no cls_token, y = p + pos [B, n, D].
#include "layers/block_helpers.h"

namespace netspec::layers {

Value* lower_patch_embed(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<PatchEmbed>(layer);
  Fm f = patched_image(c, l.ic, l.patch);
  const int64_t n = (f.h / l.patch) * (f.w / l.patch), d = l.dim;
  c.channels_match("nPatches", l.nPatches, n);
  hlo::Builder& b = c.b;
  const int64_t cls = l.classToken ? 1 : 0;
  Value* cls_token = cls ? c.param("cls_token", {1, 1, d}, ParamInit::classToken, false) : nullptr;
  Value* pos = c.param("pos_embed", {1, n + cls, d}, ParamInit::posEmbed, false);
  int64_t batch = x->type.dim(0);
  Value* y = conv(c, "proj", x, {d, l.patch, l.patch, 1, true, Padding::valid});
  y = b.transpose(b.reshape(y, {batch, d, n}), {0, 2, 1});  // [B, n, D]
  if (cls) y = b.concatenate({b.broadcast_in_dim(cls_token, {batch, 1, d}, {0, 1, 2}), y}, 1);
  return b.add(y, b.broadcast_in_dim(pos, y->type.shape(), {0, 1, 2}));
}

NETSPEC_REGISTER_LAYER(patchEmbed, lower_patch_embed)

}  // namespace netspec::layers
