// detrHeads (not lowered yet: accounting only; lowering refuses it by name).
// DETR heads: class_embed (nClasses + 1 with "no object"), bbox_embed 3-layer MLP -> 4.
// Output per query: [logits (nClasses + 1), box (4)].
#include "layers/declare.h"

namespace netspec::layers {

Value* account_detr_heads(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<DetrHeads>(layer);
  Decl c(lc);
  int64_t q = c.tokens(l.dim);
  c.linear("class_embed", l.dim, l.nClasses + 1, true, q);
  c.linear("bbox_embed.layers.0", l.dim, l.dim, true, q);
  c.linear("bbox_embed.layers.1", l.dim, l.dim, true, q);
  c.linear("bbox_embed.layers.2", l.dim, 4, true, q);
  return lc.not_lowered({q, l.nClasses + 5});
}

NETSPEC_REGISTER_LAYER(detrHeads, account_detr_heads, {.lowered = false})

}  // namespace netspec::layers
