// transformerEncoder (timm ViT Block x nBlocks, pre-norm), per block on x [B, T, D]:
//   x = x + proj(attn(LN1(x)));  x = x + fc2(gelu(fc1(LN2(x))));  then the final LN "norm".
// attn: qkv = h·Wqkvᵀ + b [B, T, 3D], split as timm's reshape(B, T, 3, H, dh) (channel
// s·D + h·dh + j), softmax(q·kᵀ/√dh [+ causal mask])·v per head (attention.h; flashAttn picks the
// tiled kernel), RoPE (rotate-half, GPT-NeoX/LLaMA style) on q and k when `rope`; heads merge
// back to [B, T, D]. Output: every token when keepSequence, else the class token (token 0), or
// the mean over tokens when meanToken.
// GELU is the exact erf form (nn.GELU default, timm's Mlp). LN eps: NetSpec::lnEps.
#include "layers/attention.h"
#include "layers/lower.h"

namespace netspec::layers {
namespace {

Value* self_attention(LowerCtx& c, const VitOptions& o, Value* h) {
  hlo::Builder& b = c.b;
  const Shape& sh = h->type.shape();
  Value* qkv = linear(c, "attn.qkv", h, 3 * sh[2]);
  Value* q = head_split(b, qkv, 0, 3, o.heads);
  Value* k = head_split(b, qkv, 1, 3, o.heads);
  Value* v = head_split(b, qkv, 2, 3, o.heads);
  if (o.rope) {
    q = apply_rope(b, q);
    k = apply_rope(b, k);
  }
  Value* out = o.flash ? head_merge(b, flash_attention(c, q, k, v, o.causal))
                       : dense_attention_merged(b, q, k, v, o.causal);
  return linear(c, "attn.proj", out, sh[2]);
}

}  // namespace

Value* vit_block(LowerCtx& c, Value* x, const VitOptions& o, int block) {
  hlo::Builder& b = c.b;
  // timm Block: x + drop_path(attn(norm1(x))), then x + drop_path(mlp(norm2(x))).
  x = b.add(x, c.drop_path(self_attention(c, o, layer_norm(c, "norm1", x, 2)), block, 0));
  Value* h = activation(b, linear(c, "mlp.fc1", layer_norm(c, "norm2", x, 2), o.mlp_dim), o.act);
  return b.add(x, c.drop_path(linear(c, "mlp.fc2", h, x->type.dim(2)), block, 1));
}

void check_heads(LowerCtx& c, int dim, int heads) {
  c.check(dim % heads == 0, "heads do not divide dim (got dim {}, heads {})", dim, heads);
}

Value* lower_transformer_encoder(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<TransformerEncoder>(layer);
  check_heads(c, l.dim, l.heads);
  if (l.rope)
    c.check((l.dim / l.heads) % 2 == 0, "rope needs an even head dim (got {})", l.dim / l.heads);
  c.check(!(l.keepSequence && l.meanToken),
          "keepSequence and meanToken exclude each other (all tokens, or their mean)");
  c.tokens(l.dim);
  hlo::Builder& b = c.b;
  const VitOptions o{l.heads, l.mlpDim, l.causalMask, l.flashAttn, l.rope};
  for (int i = 0; i < l.nBlocks; ++i) {
    Scope s(c, fmt::format("blocks.{}", i));
    x = vit_block(c, x, o, i);
  }
  x = layer_norm(c, "norm", x, 2);
  if (l.keepSequence) return x;
  const Shape& sh = x->type.shape();
  if (l.meanToken) {  // (1/T)·Σ_t x[:, t, :]
    Value* sum = b.reduce(x, b.scalar(0, x->type.dtype()), {1}, hlo::OpKind::kAdd);
    return b.multiply(sum, b.constant_splat(1.0 / double(sh[1]), sum->type));
  }
  return b.reshape(b.slice(x, {0, 0, 0}, {sh[0], 1, sh[2]}), {sh[0], sh[2]});
}

static bool sees_future(const Layer& l) { return !std::get<TransformerEncoder>(l).causalMask; }

NETSPEC_REGISTER_LAYER(transformerEncoder, lower_transformer_encoder,
                       {.ramp_family = "vit", .ramp = Ramp::last, .non_causal = sees_future})

}  // namespace netspec::layers
