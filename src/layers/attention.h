// Attention building blocks for the transformer lowerings (transformerEncoder etc. call these).
// dense_attention materialises the [B, H, T, T] score matrix and is the reference; flash_attention
// computes the same softmax(q·kᵀ/√dh + mask)·v by a tiled online softmax over key blocks with a
// custom VJP (no T x T buffer); apply_rope is the rotate-half rotary embedding (base 10000).
#pragma once
#include "layers/lower.h"

namespace netspec::layers {

// q, k, v: [B, H, T, dh] -> [B, H, T, dh]; softmax(q·kᵀ/√dh + causal mask)·v. _merged: the
// same values head-merged, [B, T, H·dh] (= head_merge of the other; fewer copies, see .cpp).
Value* dense_attention(hlo::Builder& b, Value* q, Value* k, Value* v, bool causal);
Value* dense_attention_merged(hlo::Builder& b, Value* q, Value* k, Value* v, bool causal);
Value* flash_attention(LowerCtx& c, Value* q, Value* k, Value* v, bool causal);
// The two halves of dense attention, for callers that add a bias or mask to the scores in
// between (Swin's relative position bias, DETR's cross attention with Tq != Tk):
// s = q·kᵀ/√dh [B, H, Tq, Tk]; softmax(s)·v over keys (max subtracted) [B, H, Tq, dh].
Value* attention_scores(hlo::Builder& b, Value* q, Value* k);
Value* attention_softmax_v(hlo::Builder& b, Value* s, Value* v);
Value* attention_softmax_v_merged(hlo::Builder& b, Value* s, Value* v);  // [B, Tq, H·dh]
// Part s of `parts` packed projections [B, T, parts·D] as heads [B, H, T, dh] (timm's
// reshape(B, T, parts, H, dh): channel s·D + h·dh + j); head_merge is [B, H, T, dh] -> [B, T, D].
Value* head_split(hlo::Builder& b, Value* qkv, int64_t s, int64_t parts, int64_t heads);
Value* head_merge(hlo::Builder& b, Value* o);
// rotary embedding applied to [B, H, T, dh] (rotate-half, base 10000), positions 0..T-1
Value* apply_rope(hlo::Builder& b, Value* x);

// The pre-norm transformer block (timm ViT Block) on x [B, T, D]: norm1, attn.qkv, attn.proj,
// norm2, mlp.fc1, mlp.fc2 in the caller's scope; `block` is its drop-path ordinal
// (transformer_encoder.cpp).
struct VitOptions {
  int64_t heads, mlp_dim;
  bool causal = false, flash = false, rope = false;
  Activation act = Activation::gelu;  // the MLP's (timm Block act_layer; MobileViT: SiLU)
};
Value* vit_block(LowerCtx& c, Value* x, const VitOptions& o, int block);
// "heads do not divide dim (got dim 10, heads 3)".
void check_heads(LowerCtx& c, int dim, int heads);

}  // namespace netspec::layers

namespace netspec::layers {

// --- flash attention internals (probes, tests, benchmarks) ---
// Largest divisor of t that is <= 256 (flash attention's key block).
int64_t flash_block(int64_t t);
// Flash attention with an explicit key block (must divide T): returns {O [B, H, T, dh],
// L [B, H, T]} with L the per-row logsumexp of the scaled, masked scores. Differentiable
// (custom VJP) w.r.t. q, k, v, including through L.
std::vector<Value*> flash_attention_lse(hlo::Builder& b, Value* q, Value* k, Value* v, bool causal,
                                        int64_t block);

}  // namespace netspec::layers
