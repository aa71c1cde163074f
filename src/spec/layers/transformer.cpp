// Token models: patchEmbed + transformerEncoder (timm ViT), transformerDecoder + detrHeads
// (DETR), swinStage + patchMerging (torchvision Swin), mobileVitBlock (timm MobileViT),
// tokenPositionEmbed + lmHead (GPT), mambaBlock (Mamba). Attention FLOPs count q·kᵀ and
// attn·v (2·T·T·dim each, as multiply-adds).
#include "spec/layers/account.h"

namespace netspec::acct {
namespace {
void check_heads(Ctx& c, int dim, int heads) {
  c.positive("dim", dim);
  c.positive("heads", heads);
  c.check(dim % heads == 0, "heads do not divide dim (got dim {}, heads {})", dim, heads);
}

}  // namespace

// Conv patch x patch / stride patch (bias) -> [nPatches, dim], prepend a class token, add
// learned positions: [nPatches + 1, dim]. classToken = false: no class token, [nPatches, dim].
void account(const PatchEmbed& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("dim", l.dim);
  c.positive("patch", l.patch);
  c.positive("nPatches", l.nPatches);
  Fm x = c.image(l.ic);
  c.check(x.h % l.patch == 0 && x.w % l.patch == 0,
          "patch size does not divide the image (got {}x{}, patch {})", x.h, x.w, l.patch);
  int64_t n = (x.h / l.patch) * (x.w / l.patch);
  c.channels_match("nPatches", l.nPatches, n);
  int64_t cls = l.classToken ? 1 : 0;
  if (cls) c.param("cls_token", {1, 1, l.dim}, ParamInit::classToken, false);
  c.param("pos_embed", {1, n + cls, l.dim}, ParamInit::posEmbed, false);
  c.conv("proj", x, l.dim, l.patch, l.patch, 1, true, Padding::valid);
  c.out = {n + cls, l.dim};
}

// nBlocks pre-norm blocks + final LayerNorm "norm"; keepSequence=false returns token 0 [dim]
// (the class token), or the mean over tokens when meanToken.
// causalMask / flashAttn / rope change the computation, not the parameters.
void account(const TransformerEncoder& l, Ctx& c) {
  check_heads(c, l.dim, l.heads);
  c.positive("mlpDim", l.mlpDim);
  c.positive("nBlocks", l.nBlocks);
  if (l.rope)
    c.check((l.dim / l.heads) % 2 == 0, "rope needs an even head dim (got {})", l.dim / l.heads);
  c.check(!(l.keepSequence && l.meanToken),
          "keepSequence and meanToken exclude each other (all tokens, or their mean)");
  int64_t t = c.tokens(l.dim);
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("blocks.{}", b));
    vit_block(c, t, l.dim, l.heads, l.mlpDim);
  }
  c.ln("norm", l.dim);
  c.out = l.keepSequence ? Shape{t, l.dim} : Shape{l.dim};
}

// Mamba (selective SSM) blocks: norm, in_proj (dim -> 2·di), depthwise causal conv1d k=4,
// x_proj (di -> dtRank + 2N), dt_proj, A_log [di, N], D [di], out_proj; di = expand·dim,
// dtRank = ceil(dim / 16). Final LayerNorm "norm_f".
void account(const MambaBlock& l, Ctx& c) {
  c.positive("dim", l.dim);
  c.positive("stateSize", l.stateSize);
  c.positive("expand", l.expand);
  c.positive("nBlocks", l.nBlocks);
  int64_t t = c.tokens(l.dim);
  int64_t di = int64_t{l.expand} * l.dim, r = (l.dim + 15) / 16, n = l.stateSize;
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("blocks.{}", b));
    c.ln("norm", l.dim);
    c.linear("mixer.in_proj", l.dim, 2 * di, false, t);
    c.param("mixer.conv1d.weight", {di, 1, 4}, ParamInit::convWeight, true);
    c.param("mixer.conv1d.bias", {di}, ParamInit::zeros, false);
    c.add_flops(2 * t * di * 4);
    c.linear("mixer.x_proj", di, r + 2 * n, false, t);
    c.linear("mixer.dt_proj", r, di, false, t);
    c.param("mixer.dt_proj.bias", {di}, ParamInit::ssmDtBias, false);
    c.param("mixer.A_log", {di, n}, ParamInit::ssmALog, false);
    c.param("mixer.D", {di}, ParamInit::ssmD, false);
    c.add_flops(6 * t * di * n);  // h = exp(dt·A)·h + dt·B·x; y = C·h
    c.linear("mixer.out_proj", di, l.dim, false, t);
  }
  c.ln("norm_f", l.dim);
  c.out = c.in;
}

// torchvision SwinTransformerBlock x nBlocks on an image [dim, H, W] (odd blocks shift the
// windows): norm1, attn.qkv, attn.proj, relative_position_bias_table [(2w-1)², heads], norm2,
// mlp.0, mlp.3. H and W must be multiples of the window.
void account(const SwinStage& l, Ctx& c) {
  check_heads(c, l.dim, l.heads);
  c.positive("mlpDim", l.mlpDim);
  c.positive("window", l.window);
  c.positive("nBlocks", l.nBlocks);
  Fm x = c.image(l.dim);
  c.check(x.h % l.window == 0 && x.w % l.window == 0,
          "window does not divide the feature map (got {}x{}, window {})", x.h, x.w, l.window);
  int64_t t = x.h * x.w, w2 = int64_t{l.window} * l.window;
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("blocks.{}", b));
    c.ln("norm1", l.dim);
    c.linear("attn.qkv", l.dim, 3 * l.dim, true, t);
    c.linear("attn.proj", l.dim, l.dim, true, t);
    c.param("attn.relative_position_bias_table", {(2 * l.window - 1) * (2 * l.window - 1), l.heads},
            ParamInit::relPosBias, false);
    c.add_flops(2 * 2 * t * w2 * l.dim);
    c.ln("norm2", l.dim);
    c.linear("mlp.0", l.dim, l.mlpDim, true, t);
    c.linear("mlp.3", l.mlpDim, l.dim, true, t);
  }
  c.out = c.in;
}

// torchvision PatchMerging: gather 2x2 neighbours -> 4·inDim, LayerNorm, Linear (no bias).
void account(const PatchMerging& l, Ctx& c) {
  c.positive("inDim", l.inDim);
  c.positive("outDim", l.outDim);
  Fm x = c.image(l.inDim);
  c.check(x.h % 2 == 0 && x.w % 2 == 0, "needs an even feature map (got {}x{})", x.h, x.w);
  c.linear("reduction", 4 * l.inDim, l.outDim, false, (x.h / 2) * (x.w / 2));
  c.ln("norm", 4 * l.inDim);
  c.out = {l.outDim, x.h / 2, x.w / 2};
}

// timm MobileVitBlock: conv_kxk 3x3 + BN + act, conv_1x1 (ic -> dim, no bias), nTxBlocks
// transformer blocks on 2x2 patches, LayerNorm, conv_proj 1x1 (dim -> ic) + BN, conv_fusion
// 3x3 over concat(x, y) (2·ic -> ic) + BN. Output channels = ic.
void account(const MobileVitBlock& l, Ctx& c) {
  c.positive("ic", l.ic);
  check_heads(c, l.dim, l.heads);
  c.positive("mlpDim", l.mlpDim);
  c.positive("nTxBlocks", l.nTxBlocks);
  Fm x = c.image(l.ic);
  c.check(x.h % 2 == 0 && x.w % 2 == 0, "needs an even feature map for 2x2 patches (got {}x{})",
          x.h, x.w);
  Fm y = c.conv_bn("conv_kxk", x, l.ic, 3);
  y = c.conv("conv_1x1", y, l.dim, 1);
  for (int b = 0; b < l.nTxBlocks; ++b) {
    Scope s(c, fmt::format("transformer.{}", b));
    vit_block(c, x.h * x.w, l.dim, l.heads, l.mlpDim);
  }
  c.ln("norm", l.dim);
  y = c.conv_bn("conv_proj", y, l.ic, 1);
  c.conv_bn("conv_fusion", Fm{2 * l.ic, x.h, x.w}, l.ic, 3);
  c.out = x.shape();
}

// DETR decoder: learned queries, nBlocks post-norm layers (self_attn, multihead_attn with
// packed in_proj [3·dim, dim], linear1/linear2, norm1..3), final norm. Memory [T, dim] in,
// [nQueries, dim] out.
void account(const TransformerDecoder& l, Ctx& c) {
  check_heads(c, l.dim, l.heads);
  c.positive("mlpDim", l.mlpDim);
  c.positive("nBlocks", l.nBlocks);
  c.positive("nQueries", l.nQueries);
  int64_t t = c.tokens(l.dim), q = l.nQueries, d = l.dim;
  c.param("query_embed", {q, d}, ParamInit::embedding, false);
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("layers.{}", b));
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
  c.out = {q, d};
}

// DETR heads: class_embed (nClasses + 1 with "no object"), bbox_embed 3-layer MLP -> 4.
// Output per query: [logits (nClasses + 1), box (4)].
void account(const DetrHeads& l, Ctx& c) {
  c.positive("dim", l.dim);
  c.positive("nClasses", l.nClasses);
  int64_t q = c.tokens(l.dim);
  c.linear("class_embed", l.dim, l.nClasses + 1, true, q);
  c.linear("bbox_embed.layers.0", l.dim, l.dim, true, q);
  c.linear("bbox_embed.layers.1", l.dim, l.dim, true, q);
  c.linear("bbox_embed.layers.2", l.dim, 4, true, q);
  c.out = {q, l.nClasses + 5};
}

// Token ids [seqLen] (idsInput) or one-hot rows [seqLen, vocab] -> [seqLen, dModel]:
// tok_emb (gather, or a one-hot matmul when gather=false) + pos_emb (posEmb).
void account(const TokenPositionEmbed& l, Ctx& c) {
  c.positive("vocab", l.vocab);
  c.positive("seqLen", l.seqLen);
  c.positive("dModel", l.dModel);
  if (l.idsInput)
    c.vec(l.seqLen);
  else
    c.channels_match("sequence length", c.tokens(l.vocab), l.seqLen);
  c.param("tok_emb.weight", {l.vocab, l.dModel}, ParamInit::embedding, true);
  if (!l.gather) c.add_flops(2 * int64_t{l.seqLen} * l.vocab * l.dModel);
  if (l.posEmb) c.param("pos_emb", {l.seqLen, l.dModel}, ParamInit::posEmbed, false);
  c.out = {l.seqLen, l.dModel};
}

// Untied vocabulary projection (no bias) per position: [seqLen, dModel] -> [seqLen, vocab].
void account(const LmHead& l, Ctx& c) {
  c.positive("dModel", l.dModel);
  c.positive("vocab", l.vocab);
  c.positive("seqLen", l.seqLen);
  c.channels_match("sequence length", c.tokens(l.dModel), l.seqLen);
  c.linear("", l.dModel, l.vocab, false, l.seqLen);
  c.out = {l.seqLen, l.vocab};
}

}  // namespace netspec::acct
