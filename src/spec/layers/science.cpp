// Scientific-model blocks: pairTile, evoformerBlock, structureModule (AlphaFold2-style protein
// trunk, openfold layout, single-sequence MSA), waveNetBlock (WaveNet), positionalEncoding and
// nerfMLP (NeRF). The single/MSA track rides on the side stack: pairTile pushes the residue
// features [L, D], evoformerBlock reads them, structureModule pops them.
#include "spec/layers/account.h"

namespace netspec::acct {
namespace {
constexpr int64_t kAttnC = 32, kMsaHeads = 8, kPairHeads = 4, kOpmC = 32, kTriC = 128;
constexpr int64_t kIpaHeads = 12, kIpaC = 16, kIpaQp = 4, kIpaVp = 8;

// Gated attention (openfold Attention): q, k, v (no bias), gate (bias), out (bias).
void gated_attention(Ctx& c, const std::string& n, int64_t ch, int64_t heads, int64_t rows,
                     int64_t len) {
  int64_t hc = heads * kAttnC;
  c.linear(n + ".linear_q", ch, hc, false, rows);
  c.linear(n + ".linear_k", ch, hc, false, rows);
  c.linear(n + ".linear_v", ch, hc, false, rows);
  c.linear(n + ".linear_g", ch, hc, true, rows);
  c.linear(n + ".linear_o", hc, ch, true, rows);
  c.add_flops(4 * rows * len * hc);
}

void transition(Ctx& c, const std::string& n, int64_t ch, int64_t rows) {
  c.ln(n + ".layer_norm", ch);
  c.linear(n + ".linear_1", ch, 4 * ch, true, rows);
  c.linear(n + ".linear_2", 4 * ch, ch, true, rows);
}

void tri_mul(Ctx& c, const std::string& n, int64_t cz, int64_t l) {
  int64_t rows = l * l;
  c.ln(n + ".layer_norm_in", cz);
  for (const char* p : {"linear_a_p", "linear_a_g", "linear_b_p", "linear_b_g"})
    c.linear(n + "." + p, cz, kTriC, true, rows);
  c.linear(n + ".linear_g", cz, cz, true, rows);
  c.add_flops(2 * l * l * l * kTriC);
  c.ln(n + ".layer_norm_out", kTriC);
  c.linear(n + ".linear_z", kTriC, cz, true, rows);
}

// The single track's top-of-stack [L, ch]; fails if absent.
int64_t single_track(Ctx& c, int64_t l, int64_t ch) {
  Shape want{l, ch};
  if (c.skips.empty() || c.skips.back() != want)
    c.fail("needs the residue track [{}, {}] from an earlier pairTile (got {})", l, ch,
           c.skips.empty() ? std::string("none") : fmt::format("[{}]", fmt::join(c.skips.back(), ", ")));
  return l;
}
}  // namespace

// Residue features [L, D] -> pair [C, L, L]: Linear(concat(f_i, f_j, relpos planes) -> C) where
// pairPlanes one-hot relative-position planes are appended; pushes [L, D] as the residue track.
void account(const PairTile& l, Ctx& c) {
  c.positive("L", l.L);
  c.positive("D", l.D);
  c.positive("C", l.C);
  c.positive("pairPlanes", l.pairPlanes, 0);
  c.channels_match("sequence length", c.tokens(l.D), l.L);
  c.linear("proj", 2 * int64_t{l.D} + l.pairPlanes, l.C, true, int64_t{l.L} * l.L);
  c.skips.push_back(c.in);
  c.out = {l.C, l.L, l.L};
}

// Per block: MSA row attention with pair bias, column attention, MSA transition, outer product
// mean, triangle multiplication out/in, triangle attention start/end, pair transition.
void account(const EvoformerBlock& l, Ctx& c) {
  c.positive("msaCh", l.msaCh);
  c.positive("pairCh", l.pairCh);
  c.positive("nBlocks", l.nBlocks);
  Fm z = c.image(l.pairCh);
  c.check(z.h == z.w, "pair representation must be square (got {}x{})", z.h, z.w);
  int64_t n = single_track(c, z.h, l.msaCh), cm = l.msaCh, cz = l.pairCh;
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("blocks.{}", b));
    c.ln("msa_att_row.layer_norm_m", cm);
    c.ln("msa_att_row.layer_norm_z", cz);
    c.linear("msa_att_row.linear_z", cz, kMsaHeads, false, n * n);
    gated_attention(c, "msa_att_row.mha", cm, kMsaHeads, n, n);
    c.ln("msa_att_col.layer_norm_m", cm);
    gated_attention(c, "msa_att_col.mha", cm, kMsaHeads, n, 1);
    transition(c, "msa_transition", cm, n);
    c.ln("outer_product_mean.layer_norm", cm);
    c.linear("outer_product_mean.linear_1", cm, kOpmC, true, n);
    c.linear("outer_product_mean.linear_2", cm, kOpmC, true, n);
    c.linear("outer_product_mean.linear_out", kOpmC * kOpmC, cz, true, n * n);
    tri_mul(c, "tri_mul_out", cz, n);
    tri_mul(c, "tri_mul_in", cz, n);
    for (const char* t : {"tri_att_start", "tri_att_end"}) {
      c.ln(std::string(t) + ".layer_norm", cz);
      c.linear(std::string(t) + ".linear", cz, kPairHeads, false, n * n);
      gated_attention(c, std::string(t) + ".mha", cz, kPairHeads, n * n, n);
    }
    transition(c, "pair_transition", cz, n * n);
  }
  c.out = c.in;
}

// AF2 structure module: layer_norm_s/z, linear_in, then nBlocks iterations with SHARED weights
// of invariant point attention (12 heads, 16 ch, 4 query / 8 value points), transition (3
// linears + LN) and backbone update (FLOPs: one iteration). Pops the residue track; output
// Cα coordinates [L, 3].
void account(const StructureModule& l, Ctx& c) {
  c.positive("singleCh", l.singleCh);
  c.positive("pairCh", l.pairCh);
  c.positive("nBlocks", l.nBlocks);
  Fm z = c.image(l.pairCh);
  c.check(z.h == z.w, "pair representation must be square (got {}x{})", z.h, z.w);
  int64_t n = single_track(c, z.h, l.singleCh), cs = l.singleCh, cz = l.pairCh;
  c.skips.pop_back();
  c.ln("layer_norm_s", cs);
  c.ln("layer_norm_z", cz);
  c.linear("linear_in", cs, cs, true, n);
  int64_t h = kIpaHeads, hc = h * kIpaC;
  c.linear("ipa.linear_q", cs, hc, true, n);
  c.linear("ipa.linear_kv", cs, 2 * hc, true, n);
  c.linear("ipa.linear_q_points", cs, h * kIpaQp * 3, true, n);
  c.linear("ipa.linear_kv_points", cs, h * (kIpaQp + kIpaVp) * 3, true, n);
  c.linear("ipa.linear_b", cz, h, true, n * n);
  c.param("ipa.head_weights", {h}, ParamInit::zeros, false);
  c.linear("ipa.linear_out", h * (cz + kIpaC + kIpaVp * 4), cs, true, n);
  c.ln("layer_norm_ipa", cs);
  for (int i = 1; i <= 3; ++i) c.linear(fmt::format("transition.linear_{}", i), cs, cs, true, n);
  c.ln("transition.layer_norm", cs);
  c.linear("bb_update.linear", cs, 6, true, n);
  c.out = {n, 3};
}

// Gated dilated causal conv stack on [T, resCh]: layer i has dilation 2^i, filter+gate conv
// (k 2, resCh -> 2·resCh), 1x1 residual and 1x1 skip convs (biases). Output Σ skips [T, skipCh].
void account(const WaveNetBlock& l, Ctx& c) {
  c.positive("resCh", l.resCh);
  c.positive("skipCh", l.skipCh);
  c.positive("nLayers", l.nLayers);
  int64_t t = c.tokens(l.resCh), r = l.resCh;
  for (int i = 0; i < l.nLayers; ++i) {
    Scope s(c, fmt::format("layers.{}", i));
    c.param("dilated.weight", {2 * r, r, 2}, ParamInit::convWeight, true);
    c.param("dilated.bias", {2 * r}, ParamInit::zeros, false);
    c.param("res.weight", {r, r, 1}, ParamInit::convWeight, true);
    c.param("res.bias", {r}, ParamInit::zeros, false);
    c.param("skip.weight", {l.skipCh, r, 1}, ParamInit::convWeight, true);
    c.param("skip.bias", {l.skipCh}, ParamInit::zeros, false);
    c.add_flops(2 * t * (2 * r * r * 2 + r * r + l.skipCh * r));
  }
  c.out = {t, l.skipCh};
}

// NeRF encoding γ(p) = (p, sin(2^k π p), cos(2^k π p)) for k < nFreq: [inDim (1 + 2 nFreq)].
void account(const PositionalEncoding& l, Ctx& c) {
  c.positive("inDim", l.inDim);
  c.positive("nFreq", l.nFreq, 0);
  c.vec(l.inDim);
  c.out = {int64_t{l.inDim} * (1 + 2 * l.nFreq)};
}

// NeRF MLP on concat(γ(pos), γ(dir)): 8 ReLU layers of `hidden` with the position re-injected
// at layer 5, sigma head, feature layer, direction layer (hidden/2), rgb head. Output [4].
void account(const NerfMlp& l, Ctx& c) {
  c.positive("posDim", l.posDim);
  c.positive("dirDim", l.dirDim);
  c.positive("hidden", l.hidden, 2);
  c.vec(int64_t{l.posDim} + l.dirDim);
  int64_t h = l.hidden;
  for (int i = 0; i < 8; ++i)
    c.linear(fmt::format("pts_linears.{}", i), i == 0 ? l.posDim : (i == 5 ? h + l.posDim : h), h,
             true);
  c.linear("alpha_linear", h, 1, true);
  c.linear("feature_linear", h, h, true);
  c.linear("views_linears.0", h + l.dirDim, h / 2, true);
  c.linear("rgb_linear", h / 2, 3, true);
  c.out = {4};
}

}  // namespace netspec::acct
