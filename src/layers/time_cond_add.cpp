// timeCondAdd (not lowered yet: accounting only; lowering refuses it by name).
// Sinusoidal embedding of the diffusion timestep (nFreq sin + nFreq cos), Linear -> ch,
// broadcast-added over H, W. The timestep is a second model input.
#include "layers/declare.h"

namespace netspec::layers {

Value* account_time_cond_add(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<TimeCondAdd>(layer);
  Decl c(lc);
  c.image(l.ch);
  c.linear("time_proj", 2 * int64_t{l.nFreq}, l.ch, true);
  return lc.not_lowered(c.in);
}

NETSPEC_REGISTER_LAYER(timeCondAdd, account_time_cond_add, {.lowered = false})

}  // namespace netspec::layers
