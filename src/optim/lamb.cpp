// LAMB (You et al. 2020): Adam's direction plus decay, scaled by the layer's trust ratio:
//   m, v as adam;  r = m̂ / (√v̂ + eps) + d·p;  p -= lr·(‖p‖/‖r‖)·r  (ratio 1 if a norm is 0)
#include "optim/rule.h"

namespace netspec::optim {
namespace {

ParamOut lamb_update(hlo::Builder& b, const OptimConfig& c, const StepScalars& s,
                     const ParamIn& in) {
  Value* p = in.p;
  Value* lr_t = bcast(b, in.lr, p);
  AdamMoments am = adam_moments(b, c, s, in.g, in.state[0], in.state[1]);
  Value* upd = am.dir;
  if (in.decay != 0) upd = b.add(upd, b.multiply(splat(b, in.decay, p), p));
  Value* pn = b.sqrt(sum_sq(b, p));
  Value* un = b.sqrt(sum_sq(b, upd));
  Value* zero = splat(b, 0, pn);
  Value* ok = b.and_(b.compare(pn, zero, "GT"), b.compare(un, zero, "GT"));
  Value* ratio = b.select(ok, b.divide(pn, b.select(ok, un, splat(b, 1, un))), splat(b, 1, pn));
  return {b.subtract(p, b.multiply(b.multiply(lr_t, bcast(b, ratio, p)), upd)), {am.m, am.v}};
}

}  // namespace

NETSPEC_REGISTER_OPTIMIZER(lamb,
                           {.slots = adam_slots, .update = lamb_update, .bias_corrected = true})

}  // namespace netspec::optim
