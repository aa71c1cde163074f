// detrHeads (DETR's prediction heads) on the decoder output [Q, dim]: class_embed, a Linear to
// nClasses + 1 logits (the last class is "no object"), and bbox_embed, a 3-layer MLP (ReLU
// between) whose sigmoid is the box (cx, cy, w, h) in [0, 1] image units. Output per query:
// [logits (nClasses + 1), box (4)] = [Q, nClasses + 5] (the DETR set loss reads both parts).
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_detr_heads(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<DetrHeads>(layer);
  c.tokens(l.dim);
  hlo::Builder& b = c.b;
  Value* logits = linear(c, "class_embed", x, l.nClasses + 1);
  Value* h = activation(b, linear(c, "bbox_embed.layers.0", x, l.dim), Activation::relu);
  h = activation(b, linear(c, "bbox_embed.layers.1", h, l.dim), Activation::relu);
  Value* box = b.logistic(linear(c, "bbox_embed.layers.2", h, 4));
  return b.concatenate({logits, box}, 2);
}

NETSPEC_REGISTER_LAYER(detrHeads, lower_detr_heads)

}  // namespace netspec::layers
