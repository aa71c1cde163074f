// mambaBlock (not lowered yet: accounting only; lowering refuses it by name).
// Mamba (selective SSM) blocks: norm, in_proj (dim -> 2·di), depthwise causal conv1d k=4,
// x_proj (di -> dtRank + 2N), dt_proj, A_log [di, N], D [di], out_proj; di = expand·dim,
// dtRank = ceil(dim / 16). Final LayerNorm "norm_f".
#include "layers/declare.h"

namespace netspec::layers {

Value* account_mamba_block(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<MambaBlock>(layer);
  Decl c(lc);
  int64_t t = c.tokens(l.dim);
  int64_t di = int64_t{l.expand} * l.dim, r = (l.dim + 15) / 16, n = l.stateSize;
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(lc, fmt::format("blocks.{}", b));
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
  return lc.not_lowered(c.in);
}

NETSPEC_REGISTER_LAYER(mambaBlock, account_mamba_block, {.lowered = false})

}  // namespace netspec::layers
