// SGD with optional momentum μ and Nesterov (torch.optim.SGD), weight decay d as L2:
//   g += d·p;  buf = μ·buf + g;  g = nesterov ? g + μ·buf : buf  (μ > 0);  p -= lr·g
#include "optim/rule.h"

namespace netspec::optim {
namespace {

std::vector<std::string> sgd_slots(const OptimConfig& c) {
  return c.momentum > 0 ? std::vector<std::string>{"momentum"} : std::vector<std::string>{};
}

ParamOut sgd_update(hlo::Builder& b, const OptimConfig& c, const StepScalars&, const ParamIn& in) {
  Value* p = in.p;
  Value* g = in.g;
  Value* lr_t = bcast(b, in.lr, p);
  ParamOut out{nullptr, {}};
  if (in.decay != 0) g = b.add(g, b.multiply(splat(b, in.decay, p), p));
  if (!in.state.empty()) {
    Value* buf = b.add(b.multiply(splat(b, c.momentum, p), in.state[0]), g);
    out.state.push_back(buf);
    g = c.nesterov ? b.add(g, b.multiply(splat(b, c.momentum, p), buf)) : buf;
  }
  out.p = b.subtract(p, b.multiply(lr_t, g));
  return out;
}

}  // namespace

NETSPEC_REGISTER_OPTIMIZER(sgd, {.slots = sgd_slots, .update = sgd_update})

}  // namespace netspec::optim
