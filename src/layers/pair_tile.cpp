// pairTile: residue features f [L, D] -> pair map z [C, L, L] (NCHW),
//   z[:, i, j] = proj(concat(f_i, f_j, onehot_p(relpos(i, j))))   (proj: Linear(2D + p -> C))
// computed as W_i·f_i + W_j·f_j + W_p[:, bin(i, j)] + bias without the [L, L, 2D + p] concat.
// The p relative-position planes one-hot bin = clamp(i - j + ⌊p/2⌋, 0, p - 1) (AF2's relpos
// with k = ⌊p/2⌋ for odd p: offsets -k..k). Its input is the residue track that evoformerBlock
// and structureModule read (af2::residue_track).
#include "layers/af2.h"

namespace netspec::layers {

Value* lower_pair_tile(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<PairTile>(layer);
  c.channels_match("sequence length", c.tokens(l.D), l.L);
  hlo::Builder& b = c.b;
  const int64_t bt = x->type.dim(0), n = l.L, d = l.D, p = l.pairPlanes, ch = l.C;
  Value* w = c.param("proj.weight", {ch, 2 * d + p}, ParamInit::linearWeight, true);
  Value* bias = c.param("proj.bias", {ch}, ParamInit::zeros, false);
  Value* fi = linear_apply(b, x, b.slice(w, {0, 0}, {ch, d}));      // [B, L, C]
  Value* fj = linear_apply(b, x, b.slice(w, {0, d}, {ch, 2 * d}));  // [B, L, C]
  Shape out{bt, ch, n, n};
  Value* z = b.add(b.broadcast_in_dim(fi, out, {0, 2, 1}), b.broadcast_in_dim(fj, out, {0, 3, 1}));
  z = b.add(z, bcast(b, bias, z, 1));
  if (p > 0) {
    hlo::Type it = hlo::Type::tensor(DType::kI32, {n, n, p});
    Value* bin = b.add(b.subtract(b.iota(it, 0), b.iota(it, 1)),
                       b.constant_splat(static_cast<double>(p / 2), it));
    bin = b.maximum(b.minimum(bin, b.constant_splat(static_cast<double>(p - 1), it)),
                    b.constant_splat(0, it));
    Value* onehot = b.convert(b.compare(bin, b.iota(it, 2), "EQ"), w->type.dtype());
    Value* rel = linear_apply(b, onehot, b.slice(w, {0, 2 * d}, {ch, 2 * d + p}));  // [L, L, C]
    z = b.add(z, b.broadcast_in_dim(rel, out, {2, 3, 1}));
  }
  return z;
}

NETSPEC_REGISTER_LAYER(pairTile, lower_pair_tile, {.field_min = {{"pairPlanes", 0}}})

}  // namespace netspec::layers
