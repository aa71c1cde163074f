// transformerDecoder: DETR's decoder as torch.nn.TransformerDecoder (post-norm layers, ReLU MLP,
// final LayerNorm "norm") on the memory [T, dim] from the encoder, with the learned queries
// query_embed [nQueries, dim] as the decoder input. Per layer:
//   q = norm1(q + SA(q, q, q));  q = norm2(q + CA(q, mem, mem));  q = norm3(q +
//   linear2(relu(linear1(q))))
// SA/CA: nn.MultiheadAttention with the packed in_proj [3·dim, dim] (+ bias) split as q | k | v
// rows, softmax(q·kᵀ/√dh)·v per head, out_proj. Output [nQueries, dim]. (DETR adds the queries as
// a positional term to q and k of every layer instead and starts from zeros; the spec has no
// memory positions, so the queries enter once, as torch's decoder input.)
#include "layers/attention.h"

namespace netspec::layers {
namespace {

// Parameters of one torch decoder layer, declared in its state_dict order (self_attn,
// multihead_attn, linear1, linear2, norm1..3) before any is applied (norm1 acts before
// multihead_attn).
struct Affine {
  Value* w;
  Value* b;
};
Affine declare(LowerCtx& c, const std::string& name, const Shape& w, int64_t out, ParamInit init,
               bool decay) {
  return {c.param(name + "weight", w, init, decay),
          c.param(name + "bias", {out}, ParamInit::zeros, false)};
}
struct Mha {
  Affine in, out;
};
Mha declare_mha(LowerCtx& c, const std::string& name, int64_t d) {
  return {declare(c, name + ".in_proj_", {3 * d, d}, 3 * d, ParamInit::linearWeight, true),
          declare(c, name + ".out_proj.", {d, d}, d, ParamInit::linearWeight, true)};
}

// nn.MultiheadAttention(query q, key = value = kv): packed in_proj rows q | k | v.
Value* mha(hlo::Builder& b, const Mha& m, Value* q, Value* kv, int64_t heads) {
  int64_t d = q->type.dim(2);
  auto proj = [&](Value* x, int64_t s) {  // rows [s·d, (s+1)·d) of the packed projection
    Value* ws = b.slice(m.in.w, {s * d, 0}, {(s + 1) * d, d});
    Value* bs = b.slice(m.in.b, {s * d}, {(s + 1) * d});
    return head_split(b, linear_apply(b, x, ws, bs), 0, 1, heads);
  };
  Value* o =
      attention_softmax_v_merged(b, attention_scores(b, proj(q, 0), proj(kv, 1)), proj(kv, 2));
  return linear_apply(b, o, m.out.w, m.out.b);
}

}  // namespace

Value* lower_transformer_decoder(LowerCtx& c, const Layer& layer, Value* mem) {
  const auto& l = std::get<TransformerDecoder>(layer);
  check_heads(c, l.dim, l.heads);
  c.tokens(l.dim);
  hlo::Builder& b = c.b;
  const int64_t batch = mem->type.dim(0), nq = l.nQueries, d = l.dim, f = l.mlpDim;
  Value* queries = c.param("query_embed", {nq, d}, ParamInit::embedding, false);
  Value* q = b.broadcast_in_dim(queries, {batch, nq, d}, {1, 2});
  for (int i = 0; i < l.nBlocks; ++i) {
    Scope s(c, fmt::format("layers.{}", i));
    Mha sa = declare_mha(c, "self_attn", d);
    Mha ca = declare_mha(c, "multihead_attn", d);
    Affine l1 = declare(c, "linear1.", {f, d}, f, ParamInit::linearWeight, true);
    Affine l2 = declare(c, "linear2.", {d, f}, d, ParamInit::linearWeight, true);
    Affine n[3];
    for (int k = 0; k < 3; ++k)
      n[k] = declare(c, fmt::format("norm{}.", k + 1), {d}, d, ParamInit::ones, false);
    q = layer_norm(c, b.add(q, mha(b, sa, q, q, l.heads)), n[0].w, n[0].b, 2);
    q = layer_norm(c, b.add(q, mha(b, ca, q, mem, l.heads)), n[1].w, n[1].b, 2);
    Value* h = activation(b, linear_apply(b, q, l1.w, l1.b), Activation::relu);
    q = layer_norm(c, b.add(q, linear_apply(b, h, l2.w, l2.b)), n[2].w, n[2].b, 2);
  }
  return layer_norm(c, "norm", q, 2);
}

NETSPEC_REGISTER_LAYER(transformerDecoder, lower_transformer_decoder)

}  // namespace netspec::layers
