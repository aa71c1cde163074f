// waveNetBlock (not lowered yet: accounting only; lowering refuses it by name).
// Gated dilated causal conv stack on [T, resCh]: layer i has dilation 2^i, filter+gate conv
// (k 2, resCh -> 2·resCh), 1x1 residual and 1x1 skip convs (biases). Output Σ skips [T, skipCh].
#include "layers/declare.h"

namespace netspec::layers {

Value* account_wave_net_block(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<WaveNetBlock>(layer);
  Decl c(lc);
  int64_t t = c.tokens(l.resCh), r = l.resCh;
  for (int i = 0; i < l.nLayers; ++i) {
    Scope s(lc, fmt::format("layers.{}", i));
    c.param("dilated.weight", {2 * r, r, 2}, ParamInit::convWeight, true);
    c.param("dilated.bias", {2 * r}, ParamInit::zeros, false);
    c.param("res.weight", {r, r, 1}, ParamInit::convWeight, true);
    c.param("res.bias", {r}, ParamInit::zeros, false);
    c.param("skip.weight", {l.skipCh, r, 1}, ParamInit::convWeight, true);
    c.param("skip.bias", {l.skipCh}, ParamInit::zeros, false);
    c.add_flops(2 * t * (2 * r * r * 2 + r * r + l.skipCh * r));
  }
  return lc.not_lowered({t, l.skipCh});
}

NETSPEC_REGISTER_LAYER(waveNetBlock, account_wave_net_block, {.lowered = false})

}  // namespace netspec::layers
