// evoformerBlock (not lowered yet: accounting only; lowering refuses it by name).
// Per block: MSA row attention with pair bias, column attention, MSA transition, outer product
// mean, triangle multiplication out/in, triangle attention start/end, pair transition.
#include "layers/declare.h"

namespace netspec::layers {

int64_t single_track(Decl& c, int64_t l, int64_t ch);  // pair_tile.cpp

namespace {
constexpr int64_t kAttnC = 32, kMsaHeads = 8, kPairHeads = 4, kOpmC = 32, kTriC = 128;

// Gated attention (openfold Attention): q, k, v (no bias), gate (bias), out (bias).
void gated_attention(Decl& c, const std::string& n, int64_t ch, int64_t heads, int64_t rows,
                     int64_t len) {
  int64_t hc = heads * kAttnC;
  c.linear(n + ".linear_q", ch, hc, false, rows);
  c.linear(n + ".linear_k", ch, hc, false, rows);
  c.linear(n + ".linear_v", ch, hc, false, rows);
  c.linear(n + ".linear_g", ch, hc, true, rows);
  c.linear(n + ".linear_o", hc, ch, true, rows);
  c.add_flops(4 * rows * len * hc);
}

void transition(Decl& c, const std::string& n, int64_t ch, int64_t rows) {
  c.ln(n + ".layer_norm", ch);
  c.linear(n + ".linear_1", ch, 4 * ch, true, rows);
  c.linear(n + ".linear_2", 4 * ch, ch, true, rows);
}

void tri_mul(Decl& c, const std::string& n, int64_t cz, int64_t l) {
  int64_t rows = l * l;
  c.ln(n + ".layer_norm_in", cz);
  for (const char* p : {"linear_a_p", "linear_a_g", "linear_b_p", "linear_b_g"})
    c.linear(n + "." + p, cz, kTriC, true, rows);
  c.linear(n + ".linear_g", cz, cz, true, rows);
  c.add_flops(2 * l * l * l * kTriC);
  c.ln(n + ".layer_norm_out", kTriC);
  c.linear(n + ".linear_z", kTriC, cz, true, rows);
}

}  // namespace

Value* account_evoformer_block(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<EvoformerBlock>(layer);
  Decl c(lc);
  Fm z = c.image(l.pairCh);
  c.check(z.h == z.w, "pair representation must be square (got {}x{})", z.h, z.w);
  int64_t n = single_track(c, z.h, l.msaCh), cm = l.msaCh, cz = l.pairCh;
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(lc, fmt::format("blocks.{}", b));
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
  return lc.not_lowered(c.in);
}

NETSPEC_REGISTER_LAYER(evoformerBlock, account_evoformer_block, {.lowered = false})

}  // namespace netspec::layers
