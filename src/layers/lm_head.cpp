// lmHead: per-position logits y = x·Wᵀ, x [B, T, D], W [V, D] (untied, no bias) -> [B, T, V].
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_lm_head(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<LmHead>(layer);
  c.channels_match("sequence length", c.tokens(l.dModel), l.seqLen);
  return linear(c, "", x, l.vocab, false);
}

static int64_t lm_vocab(const Layer& l) { return std::get<LmHead>(l).vocab; }

NETSPEC_REGISTER_LAYER(lmHead, lower_lm_head, {.vocab = lm_vocab})

}  // namespace netspec::layers
