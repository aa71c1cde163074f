// structureModule (not lowered yet: accounting only; lowering refuses it by name).
// AF2 structure module: layer_norm_s/z, linear_in, then nBlocks iterations with SHARED weights
// of invariant point attention (12 heads, 16 ch, 4 query / 8 value points), transition (3
// linears + LN) and backbone update (FLOPs: one iteration). Pops the residue track; output
// Cα coordinates [L, 3].
#include "layers/declare.h"

namespace netspec::layers {

int64_t single_track(Decl& c, int64_t l, int64_t ch);  // pair_tile.cpp
constexpr int64_t kIpaHeads = 12, kIpaC = 16, kIpaQp = 4, kIpaVp = 8;

Value* account_structure_module(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<StructureModule>(layer);
  Decl c(lc);
  Fm z = c.image(l.pairCh);
  c.check(z.h == z.w, "pair representation must be square (got {}x{})", z.h, z.w);
  int64_t n = single_track(c, z.h, l.singleCh), cs = l.singleCh, cz = l.pairCh;
  c.skips().pop_back();
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
  return lc.not_lowered({n, 3});
}

NETSPEC_REGISTER_LAYER(structureModule, account_structure_module, {.lowered = false})

}  // namespace netspec::layers
