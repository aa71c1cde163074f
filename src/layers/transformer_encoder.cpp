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

// y = x·Wᵀ + b over the last dim (nn.Linear).
Value* linear(LowerCtx& c, Value* x) {
  Value* w = c.next_param();
  Value* bias = c.next_param();
  hlo::DotDims d;
  d.lhs_contracting = {x->type.rank() - 1};
  d.rhs_contracting = {1};
  Value* y = c.b.dot_general(x, w, d);
  return c.b.add(y, bcast(c.b, bias, y, y->type.rank() - 1));
}

Value* ln(LowerCtx& c, Value* x) {
  Value* g = c.next_param();
  Value* beta = c.next_param();
  return layer_norm(c, x, g, beta, x->type.rank() - 1);
}

// [B, T, 3D] channels [s·D, (s+1)·D) -> [B, H, T, dh].
Value* head_split(hlo::Builder& b, Value* qkv, int64_t s, int64_t heads) {
  const Shape& sh = qkv->type.shape();
  int64_t d = sh[2] / 3;
  Value* part = b.slice(qkv, {0, 0, s * d}, {sh[0], sh[1], (s + 1) * d});
  return b.transpose(b.reshape(part, {sh[0], sh[1], heads, d / heads}), {0, 2, 1, 3});
}

Value* self_attention(LowerCtx& c, const TransformerEncoder& l, Value* h) {
  hlo::Builder& b = c.b;
  Value* qkv = linear(c, h);  // attn.qkv
  Value* q = head_split(b, qkv, 0, l.heads);
  Value* k = head_split(b, qkv, 1, l.heads);
  Value* v = head_split(b, qkv, 2, l.heads);
  if (l.rope) {
    q = apply_rope(b, q);
    k = apply_rope(b, k);
  }
  Value* o = l.flashAttn ? flash_attention(c, q, k, v, l.causalMask)
                         : dense_attention(b, q, k, v, l.causalMask);
  const Shape& sh = h->type.shape();
  o = b.reshape(b.transpose(o, {0, 2, 1, 3}), sh);  // [B, T, H, dh] -> [B, T, D]
  return linear(c, o);                              // attn.proj
}

}  // namespace

Value* lower_transformer_encoder(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<TransformerEncoder>(layer);
  hlo::Builder& b = c.b;
  for (int i = 0; i < l.nBlocks; ++i) {
    // timm Block: x + drop_path(attn(norm1(x))), then x + drop_path(mlp(norm2(x))).
    x = b.add(x, c.drop_path(self_attention(c, l, ln(c, x)), i, 0));  // norm1, attn
    Value* h = activation(b, linear(c, ln(c, x)), Activation::gelu);  // norm2, mlp.fc1
    x = b.add(x, c.drop_path(linear(c, h), i, 1));                    // mlp.fc2
  }
  x = ln(c, x);  // norm
  if (l.keepSequence) return x;
  const Shape& sh = x->type.shape();
  if (l.meanToken) {  // (1/T)·Σ_t x[:, t, :]
    Value* sum = b.reduce(x, b.scalar(0, x->type.dtype()), {1}, hlo::OpKind::kAdd);
    return b.multiply(sum, b.constant_splat(1.0 / double(sh[1]), sum->type));
  }
  return b.reshape(b.slice(x, {0, 0, 0}, {sh[0], 1, sh[2]}), {sh[0], sh[2]});
}

NETSPEC_REGISTER_LAYER(transformerEncoder, lower_transformer_encoder)

}  // namespace netspec::layers
