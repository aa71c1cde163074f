// patchEmbed (timm PatchEmbed + class token + learned positions):
//   p = conv(x, W, stride = patch, valid) + b  [B, D, h, w] -> tokens [B, h·w, D] (row-major
//   patches, as timm's flatten(2).transpose(1, 2)); y = concat(cls, p) + pos  [B, n + 1, D].
// Params (ParamTable order): cls_token [1, 1, D], pos_embed [1, n + 1, D], proj.weight, proj.bias.
// classToken = false: no cls_token, y = p + pos [B, n, D].
#include "layers/lower.h"

namespace netspec::layers {
Value* lower_patch_embed(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<PatchEmbed>(layer);
  hlo::Builder& b = c.b;
  bool with_cls = l.classToken;
  Value* cls = with_cls ? c.next_param() : nullptr;
  Value* pos = c.next_param();
  Value* w = c.next_param();
  Value* bias = c.next_param();
  int64_t batch = x->type.dim(0), d = l.dim;
  Value* y = conv(c, x, w, l.patch, Padding::valid);
  y = b.add(y, bcast(b, bias, y, 1));
  int64_t n = y->type.dim(2) * y->type.dim(3);
  y = b.transpose(b.reshape(y, {batch, d, n}), {0, 2, 1});  // [B, n, D]
  if (with_cls) y = b.concatenate({b.broadcast_in_dim(cls, {batch, 1, d}, {0, 1, 2}), y}, 1);
  return b.add(y, b.broadcast_in_dim(pos, y->type.shape(), {0, 1, 2}));
}

NETSPEC_REGISTER_LAYER(patchEmbed, lower_patch_embed)

}  // namespace netspec::layers
