// Muon (Jordan 2024) for 2-D weight matrices; every other parameter falls back to AdamW. Slots
// {"m", "v"} as Adam's (m = the momentum buffer; v passes through). With lr, decay d:
//   buf = μ·buf + (1-μ)·g;  u = nesterov ? (1-μ)·g + μ·buf : buf   (timm's lerp form)
//   p = p·(1 - lr·d) - lr·0.2·√max(m, n)·NS5(u)   (timm's "match_rms_adamw" scale, so one
//   learning rate serves Muon and its AdamW fallback); NS5 as matrix_opt.h says.
#include <cmath>

#include "optim/matrix_opt.h"
#include "optim/rule.h"

namespace netspec::optim {

bool muon_eligible(const ParamDesc& p) {
  return p.shape.size() == 2 && p.init == ParamInit::linearWeight;
}

namespace {

ParamOut muon_update(hlo::Builder& b, const OptimConfig& c, const StepScalars&, const ParamIn& in) {
  const double mu = c.momentum;
  Value* p = in.p;
  Value* g = in.g;
  Value* buf = in.state[0];
  Value* nb = b.add(b.multiply(splat(b, mu, buf), buf), b.multiply(splat(b, 1 - mu, g), g));
  Value* u =
      c.nesterov ? b.add(b.multiply(splat(b, 1 - mu, g), g), b.multiply(splat(b, mu, nb), nb)) : nb;
  const auto& s = p->type.shape();
  const double scale = 0.2 * std::sqrt(static_cast<double>(std::max(s[0], s[1])));
  Value* lr_t = bcast(b, in.lr, p);
  if (in.decay != 0) p = b.subtract(p, b.multiply(b.multiply(lr_t, splat(b, in.decay, p)), p));
  Value* step = b.multiply(splat(b, scale, p), newton_schulz5(b, u));
  return {b.subtract(p, b.multiply(lr_t, step)), {nb, in.state[1]}};
}

}  // namespace

NETSPEC_REGISTER_OPTIMIZER(muon, {.slots = adam_slots,
                                  .update = muon_update,
                                  .eligible = muon_eligible,
                                  .fallback = OptimizerKind::adam})

}  // namespace netspec::optim
