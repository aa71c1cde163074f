// evoformerBlock: nBlocks AlphaFold-2 Evoformer blocks (openfold EvoformerBlock, AF2 supplement
// Alg. 6) on the pair map z [pairCh, L, L] with a single-sequence MSA m [1, L, msaCh] taken from
// the residue track (the latest pairTile's input). Per block:
//   m += RowAttentionWithPairBias(m, z);  m += ColumnAttention(m);  m += Transition(m)
//   z += OuterProductMean(m);  z += TriMulOutgoing(z);  z += TriMulIncoming(z)
//   z += TriAttentionStartingNode(z);  z += TriAttentionEndingNode(z);  z += Transition(z)
// Heads of 32 channels (8 MSA, 4 pair), outer product 32, triangle multiplication 128,
// transitions 4x; openfold's final (zero) and gating (W = 0, b = 1) inits; no dropout, no masks.
// Output: z. m's updates reach z through the outer product mean within the layer; the layer returns
// z only (a later layer reads the track again).
#include "layers/af2.h"

namespace netspec::layers {
namespace {

using af2::declare_linear;
using af2::declare_ln;
using af2::gated_attention;
using af2::Init;
using hlo::Builder;

constexpr int64_t kMsaHeads = 8, kPairHeads = 4, kOpmC = 32, kTriC = 128, kTransN = 4;
constexpr double kOpmEps = 1e-3;  // openfold OuterProductMean: Σ_s a⊗b / (N_seq + eps)

// MSATransition / PairTransition: linear_2(relu(linear_1(LN(x)))), hidden 4x.
Value* transition(LowerCtx& c, const std::string& n, Value* x) {
  int64_t ch = x->type.dim(x->type.rank() - 1);
  Value* y = layer_norm(c, n + ".layer_norm", x, x->type.rank() - 1);
  y = activation(c.b, linear(c, n + ".linear_1", y, kTransN * ch), Activation::relu);
  return declare_linear(c, n + ".linear_2", kTransN * ch, ch, true, Init::final_)(c.b, y);
}

// MSA row attention with pair bias on m [B, S, L, cm]: bias = linear_z(LN_z(z)) per head.
Value* msa_row_attention(LowerCtx& c, Value* m, Value* z) {
  Builder& b = c.b;
  af2::Ln ln_m = declare_ln(c, "msa_att_row.layer_norm_m", m->type.dim(3));
  af2::Ln ln_z = declare_ln(c, "msa_att_row.layer_norm_z", z->type.dim(3));
  af2::Lin lz = declare_linear(c, "msa_att_row.linear_z", z->type.dim(3), kMsaHeads, false);
  Value* bias = b.transpose(lz(b, ln_z(c, z)), {0, 3, 1, 2});  // [B, H, L, L]
  return gated_attention(c, "msa_att_row.mha", ln_m(c, m), kMsaHeads, bias);
}

// MSA column attention: attention over the sequences s for each residue (rows = residues).
Value* msa_column_attention(LowerCtx& c, Value* m) {
  Builder& b = c.b;
  Value* mt = b.transpose(layer_norm(c, "msa_att_col.layer_norm_m", m, 3), {0, 2, 1, 3});
  return b.transpose(gated_attention(c, "msa_att_col.mha", mt, kMsaHeads, nullptr), {0, 2, 1, 3});
}

// Outer product mean: linear_out(Σ_s a_si ⊗ b_sj) / (S + eps), a, b = linear_1/2(LN(m)).
Value* outer_product_mean(LowerCtx& c, Value* m, int64_t cz) {
  Builder& b = c.b;
  const int64_t bt = m->type.dim(0), s = m->type.dim(1), n = m->type.dim(2);
  Value* mn = layer_norm(c, "outer_product_mean.layer_norm", m, 3);
  Value* a = linear(c, "outer_product_mean.linear_1", mn, kOpmC);
  Value* bb = linear(c, "outer_product_mean.linear_2", mn, kOpmC);
  // outer[b, i, c, j, e] = Σ_s a[b, s, i, c]·bb[b, s, j, e]
  Value* outer = b.dot_general(a, bb, {{0}, {0}, {1}, {1}});
  outer = b.reshape(b.transpose(outer, {0, 1, 3, 2, 4}), {bt, n, n, kOpmC * kOpmC});
  Value* y = declare_linear(c, "outer_product_mean.linear_out", kOpmC * kOpmC, cz, true,
                            Init::final_)(b, outer);
  return b.multiply(y, b.constant_splat(1.0 / (static_cast<double>(s) + kOpmEps), y->type));
}

// Triangle multiplicative update (Alg. 11/12) on z [B, L, L, cz]:
//   a, b = linear_p(LN(z)) ⊙ σ(linear_g(LN(z)));  outgoing x_ij = Σ_k a_ik b_jk,
//   incoming x_ij = Σ_k a_ki b_kj;  out = linear_z(LN_out(x)) ⊙ σ(linear_g(LN(z)))
Value* tri_mul(LowerCtx& c, const std::string& n, Value* z, bool outgoing) {
  Builder& b = c.b;
  const int64_t cz = z->type.dim(3);
  af2::Lin ap = declare_linear(c, n + ".linear_a_p", cz, kTriC, true);
  af2::Lin ag = declare_linear(c, n + ".linear_a_g", cz, kTriC, true, Init::gating);
  af2::Lin bp = declare_linear(c, n + ".linear_b_p", cz, kTriC, true);
  af2::Lin bg = declare_linear(c, n + ".linear_b_g", cz, kTriC, true, Init::gating);
  af2::Lin g = declare_linear(c, n + ".linear_g", cz, cz, true, Init::gating);
  af2::Lin lz = declare_linear(c, n + ".linear_z", kTriC, cz, true, Init::final_);
  af2::Ln ln_in = declare_ln(c, n + ".layer_norm_in", cz);
  af2::Ln ln_out = declare_ln(c, n + ".layer_norm_out", kTriC);
  Value* zn = ln_in(c, z);
  Value* a = b.multiply(ap(b, zn), b.logistic(ag(b, zn)));
  Value* bb = b.multiply(bp(b, zn), b.logistic(bg(b, zn)));
  int64_t k = outgoing ? 2 : 1;  // the summed index: z[i, k] (outgoing) or z[k, i] (incoming)
  Value* x = b.transpose(b.dot_general(a, bb, {{0, 3}, {0, 3}, {k}, {k}}), {0, 2, 3, 1});
  return b.multiply(lz(b, ln_out(c, x)), b.logistic(g(b, zn)));
}

// Triangle attention around the starting node (Alg. 13): along j for each row i, bias b_jk from
// linear(LN(z)); the ending node (Alg. 14) is the same on zᵀ, transposed back.
Value* tri_attention(LowerCtx& c, const std::string& n, Value* z, bool starting) {
  Builder& b = c.b;
  if (!starting) z = b.transpose(z, {0, 2, 1, 3});
  const int64_t cz = z->type.dim(3);
  af2::Ln ln = declare_ln(c, n + ".layer_norm", cz);
  af2::Lin lin = declare_linear(c, n + ".linear", cz, kPairHeads, false);
  Value* zn = ln(c, z);
  Value* bias = b.transpose(lin(b, zn), {0, 3, 1, 2});  // [B, H, L, L]
  Value* y = gated_attention(c, n + ".mha", zn, kPairHeads, bias);
  return starting ? y : b.transpose(y, {0, 2, 1, 3});
}

}  // namespace

Value* lower_evoformer_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<EvoformerBlock>(layer);
  Fm f = af2::pair_map(c, l.pairCh);
  Builder& b = c.b;
  const int64_t bt = x->type.dim(0), n = f.h;
  Value* m = b.reshape(af2::residue_track(c, n, l.msaCh), {bt, 1, n, l.msaCh});  // [B, S=1, L, cm]
  Value* z = af2::to_channels_last(b, x);                                        // [B, L, L, cz]
  for (int i = 0; i < l.nBlocks; ++i) {
    Scope s(c, fmt::format("blocks.{}", i));
    m = b.add(m, msa_row_attention(c, m, z));
    m = b.add(m, msa_column_attention(c, m));
    m = b.add(m, transition(c, "msa_transition", m));
    z = b.add(z, outer_product_mean(c, m, l.pairCh));
    z = b.add(z, tri_mul(c, "tri_mul_out", z, true));
    z = b.add(z, tri_mul(c, "tri_mul_in", z, false));
    z = b.add(z, tri_attention(c, "tri_att_start", z, true));
    z = b.add(z, tri_attention(c, "tri_att_end", z, false));
    z = b.add(z, transition(c, "pair_transition", z));
  }
  return af2::to_channels_first(b, z);
}

NETSPEC_REGISTER_LAYER(evoformerBlock, lower_evoformer_block)

}  // namespace netspec::layers
