// pairTile (not lowered yet: accounting only; lowering refuses it by name).
// Residue features [L, D] -> pair [C, L, L]: Linear(concat(f_i, f_j, relpos planes) -> C) where
// pairPlanes one-hot relative-position planes are appended; pushes [L, D] as the residue track.
#include "layers/declare.h"

namespace netspec::layers {

// The single track's top-of-stack [L, ch]; fails if absent.
int64_t single_track(Decl& c, int64_t l, int64_t ch) {
  Shape want{l, ch};
  if (c.skips().empty() || c.skips().back() != want)
    c.fail("needs the residue track [{}, {}] from an earlier pairTile (got {})", l, ch,
           c.skips().empty() ? std::string("none")
                             : fmt::format("[{}]", fmt::join(c.skips().back(), ", ")));
  return l;
}

Value* account_pair_tile(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<PairTile>(layer);
  Decl c(lc);
  c.channels_match("sequence length", c.tokens(l.D), l.L);
  c.linear("proj", 2 * int64_t{l.D} + l.pairPlanes, l.C, true, int64_t{l.L} * l.L);
  c.skips().push_back(c.in);
  return lc.not_lowered({l.C, l.L, l.L});
}

NETSPEC_REGISTER_LAYER(pairTile, account_pair_tile,
                       {.lowered = false, .field_min = {{"pairPlanes", 0}}})

}  // namespace netspec::layers
