// tokenPositionEmbed: token ids i32 [B, T] -> tok_emb[ids] (+ pos_emb) [B, T, D].
// gather = true: a true gather of rows of tok_emb [V, D] (its VJP is a scatter-add of the rows'
// cotangents); gather = false: onehot(ids) [B, T, V] · tok_emb. idsInput = false: the input is
// already one-hot (or soft) rows [B, T, V] and is multiplied by tok_emb. pos_emb [T, D] is added
// per position when posEmb. Params: tok_emb.weight, pos_emb.
#include "core/error.h"
#include "layers/lower.h"

namespace netspec::layers {

Value* lower_token_position_embed(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<TokenPositionEmbed>(layer);
  if (l.idsInput)
    c.vec(l.seqLen);
  else
    c.channels_match("sequence length", c.tokens(l.vocab), l.seqLen);
  hlo::Builder& b = c.b;
  int64_t batch = x->type.dim(0), t = l.seqLen, d = l.dModel, v = l.vocab;
  if (l.idsInput && !is_integer(x->type.dtype()))
    c.fail("token ids must be an integer tensor [B, {}] (got {})", t, x->type.str());
  Value* w = c.param("tok_emb.weight", {v, d}, ParamInit::embedding, true);
  DType dt = w->type.dtype();
  Value* y = nullptr;
  if (l.idsInput && l.gather) {
    hlo::GatherDims g;
    g.offset_dims = {2};
    g.collapsed_slice_dims = {0};
    g.start_index_map = {0};
    g.index_vector_dim = 2;
    Value* ids = b.reshape(b.convert(x, DType::kI32), {batch, t, 1});
    y = b.gather(w, ids, g, {1, d});
  } else {
    Value* rows = x;  // [B, T, V]
    if (l.idsInput) {
      hlo::Type it = hlo::Type::tensor(DType::kI32, {batch, t, v});
      Value* ids = b.broadcast_in_dim(b.convert(x, DType::kI32), {batch, t, v}, {0, 1});
      rows = b.convert(b.compare(b.iota(it, 2), ids, "EQ"), dt);
    }
    hlo::DotDims dd;
    dd.lhs_contracting = {2};
    dd.rhs_contracting = {0};
    y = b.dot_general(rows, w, dd);
  }
  if (!l.posEmb) return y;
  Value* pos = c.param("pos_emb", {t, d}, ParamInit::posEmbed, false);
  return b.add(y, b.broadcast_in_dim(pos, {batch, t, d}, {1, 2}));
}

static bool ids_input(const Layer& l) { return std::get<TokenPositionEmbed>(l).idsInput; }
static int64_t vocab(const Layer& l) { return std::get<TokenPositionEmbed>(l).vocab; }
static int64_t seq_len(const Layer& l) { return std::get<TokenPositionEmbed>(l).seqLen; }

NETSPEC_REGISTER_LAYER(tokenPositionEmbed, lower_token_position_embed,
                       {.ids_input = ids_input, .vocab = vocab, .seq_len = seq_len})

}  // namespace netspec::layers
