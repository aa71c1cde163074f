// Shampoo (Gupta et al. 2018, the seed's rule) for square 2-D weight matrices with both dims >= 16;
// every other parameter falls back to AdamW. Slots {"m", "v"} hold L and R (the weight's shape).
//   L = β2·L + (1-β2)·G·Gᵀ;  R = β2·R + (1-β2)·Gᵀ·G
//   p = p·(1 - lr·d) - lr·root(L/(1-β2^t))·G·root(R/(1-β2^t)),  root(A) = (A + δI)^{-1/4}
// with δ = ε·tr(A)/n + 1e-30 (matrix_opt.h). At t = 1 the step is (up to δ) the polar factor of G.
#include "optim/matrix_opt.h"
#include "optim/rule.h"

namespace netspec::optim {

bool shampoo_eligible(const ParamDesc& p) {
  return muon_eligible(p) && p.shape[0] == p.shape[1] && p.shape[0] >= 16;
}

namespace {

ParamOut shampoo_update(hlo::Builder& b, const OptimConfig& c, const StepScalars& s,
                        const ParamIn& in) {
  const double beta = c.beta2;
  Value* p = in.p;
  Value* g = in.g;
  Value* l = in.state[0];
  Value* r = in.state[1];
  Value* nl =
      b.add(b.multiply(splat(b, beta, l), l), b.multiply(splat(b, 1 - beta, l), mm(b, g, g, true)));
  Value* gtg = mm(b, t2(b, g), t2(b, g), true);  // Gᵀ·G
  Value* nr = b.add(b.multiply(splat(b, beta, r), r), b.multiply(splat(b, 1 - beta, r), gtg));
  Value* lh = b.divide(nl, bcast(b, s.bc2, nl));
  Value* rh = b.divide(nr, bcast(b, s.bc2, nr));
  Value* pre = mm(b, mm(b, inverse_fourth_root(b, lh), g), inverse_fourth_root(b, rh));
  Value* lr_t = bcast(b, in.lr, p);
  if (in.decay != 0) p = b.subtract(p, b.multiply(b.multiply(lr_t, splat(b, in.decay, p)), p));
  return {b.subtract(p, b.multiply(lr_t, pre)), {nl, nr}};
}

}  // namespace

NETSPEC_REGISTER_OPTIMIZER(shampoo, {.slots = adam_slots,
                                     .update = shampoo_update,
                                     .bias_corrected = true,
                                     .eligible = shampoo_eligible,
                                     .fallback = OptimizerKind::adam})

}  // namespace netspec::optim
