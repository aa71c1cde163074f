// transformerDecoder (not lowered yet: accounting only; lowering refuses it by name).
// DETR decoder: learned queries, nBlocks post-norm layers (self_attn, multihead_attn with
// packed in_proj [3·dim, dim], linear1/linear2, norm1..3), final norm. Memory [T, dim] in,
// [nQueries, dim] out.
#include "layers/attention.h"
#include "layers/declare.h"

namespace netspec::layers {

Value* account_transformer_decoder(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<TransformerDecoder>(layer);
  Decl c(lc);
  check_heads(lc, l.dim, l.heads);
  int64_t t = c.tokens(l.dim), q = l.nQueries, d = l.dim;
  c.param("query_embed", {q, d}, ParamInit::embedding, false);
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(lc, fmt::format("layers.{}", b));
    for (const char* a : {"self_attn", "multihead_attn"}) {
      c.param(fmt::format("{}.in_proj_weight", a), {3 * d, d}, ParamInit::linearWeight, true);
      c.param(fmt::format("{}.in_proj_bias", a), {3 * d}, ParamInit::zeros, false);
      c.linear(fmt::format("{}.out_proj", a), d, d, true, q);
    }
    c.add_flops(2 * q * d * 3 * d + 4 * q * q * d);        // self: q,k,v proj + attention
    c.add_flops(2 * (q + 2 * t) * d * d + 4 * q * t * d);  // cross: q on queries, k,v on memory
    c.linear("linear1", d, l.mlpDim, true, q);
    c.linear("linear2", l.mlpDim, d, true, q);
    c.ln("norm1", d);
    c.ln("norm2", d);
    c.ln("norm3", d);
  }
  c.ln("norm", d);
  return lc.not_lowered({q, d});
}

NETSPEC_REGISTER_LAYER(transformerDecoder, account_transformer_decoder, {.lowered = false})

}  // namespace netspec::layers
