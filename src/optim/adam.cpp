// Adam (Kingma & Ba 2015) with decoupled weight decay d (AdamW, Loshchilov & Hutter 2019):
//   p -= lr·d·p;  m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²;
//   p -= lr · (m / (1-β1^t)) / (√(v / (1-β2^t)) + eps)
#include "optim/rule.h"

namespace netspec::optim {

AdamMoments adam_moments(hlo::Builder& b, const OptimConfig& c, const StepScalars& s, Value* g,
                         Value* m0, Value* v0) {
  Value* m = axpy(b, c.momentum, m0, 1 - c.momentum, g);
  Value* v = axpy(b, c.beta2, v0, 1 - c.beta2, b.multiply(g, g));
  Value* mhat = b.divide(m, bcast(b, s.bc1, m));
  Value* vhat = b.divide(v, bcast(b, s.bc2, v));
  return {m, v, b.divide(mhat, b.add(b.sqrt(vhat), splat(b, c.eps, v)))};
}

std::vector<std::string> adam_slots(const OptimConfig&) { return {"m", "v"}; }

namespace {

ParamOut adam_update(hlo::Builder& b, const OptimConfig& c, const StepScalars& s,
                     const ParamIn& in) {
  Value* p = in.p;
  Value* lr_t = bcast(b, in.lr, p);
  AdamMoments am = adam_moments(b, c, s, in.g, in.state[0], in.state[1]);
  if (in.decay != 0) p = b.subtract(p, b.multiply(b.multiply(lr_t, splat(b, in.decay, p)), p));
  return {b.subtract(p, b.multiply(lr_t, am.dir)), {am.m, am.v}};
}

}  // namespace

NETSPEC_REGISTER_OPTIMIZER(adam,
                           {.slots = adam_slots, .update = adam_update, .bias_corrected = true})

}  // namespace netspec::optim
