// RMSprop, TF flavour (eps inside the sqrt, momentum on the scaled step), weight decay d as L2:
//   g += d·p;  ms = ρ·ms + (1-ρ)·g²;  mom = μ·mom + lr·g / √(ms + eps);  p -= mom
#include "optim/rule.h"

namespace netspec::optim {
namespace {

std::vector<std::string> rmsprop_slots(const OptimConfig&) { return {"ms", "mom"}; }

ParamOut rmsprop_update(hlo::Builder& b, const OptimConfig& c, const StepScalars&,
                        const ParamIn& in) {
  Value* p = in.p;
  Value* g = in.g;
  Value* lr_t = bcast(b, in.lr, p);
  if (in.decay != 0) g = b.add(g, b.multiply(splat(b, in.decay, p), p));
  Value* ms = axpy(b, c.rms_decay, in.state[0], 1 - c.rms_decay, b.multiply(g, g));
  Value* step_v = b.divide(b.multiply(lr_t, g), b.sqrt(b.add(ms, splat(b, c.rms_eps, ms))));
  Value* mom = b.add(b.multiply(splat(b, c.momentum, p), in.state[1]), step_v);
  return {b.subtract(p, mom), {ms, mom}};
}

}  // namespace

NETSPEC_REGISTER_OPTIMIZER(rmsprop, {.slots = rmsprop_slots, .update = rmsprop_update})

}  // namespace netspec::optim
