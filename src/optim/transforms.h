// Gradient transforms chained in front of the update rule, as optax chains
// GradientTransformations: each step sees every parameter in order, and may rewrite its gradient
// or annotate it (frozen, weight decay, learning-rate multiplier) for the later steps and the
// rule. The default chain of an OptimConfig is
//   freeze -> clip_by_global_norm -> decay_mask -> head_lr
// (each only when configured). Order matters: a parameter frozen before the clip is left out of
// the clipping norm.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace netspec::optim {

// One parameter on its way through the chain.
struct ParamStep {
  const ParamDesc* desc = nullptr;
  Value* g = nullptr;   // its gradient, as transformed so far
  bool frozen = false;  // left unchanged with its state: no rule runs for it
  double decay = 0;     // weight decay d its rule applies
  double lr_mult = 1;   // its learning rate is lr·lr_mult
};

struct GradientTransform {
  std::string name;
  std::function<void(hlo::Builder& b, std::vector<ParamStep>& ps)> apply;
};
using Chain = std::vector<GradientTransform>;

// Marks the parameters whose name starts with one of the prefixes frozen.
GradientTransform freeze(std::vector<std::string> prefixes);
// g *= min(1, max_norm / (‖g‖ + 1e-6)) with ‖g‖ the L2 norm over the gradients of the parameters
// not frozen so far (torch's clip_grad_norm_); every gradient is scaled.
GradientTransform clip_by_global_norm(double max_norm);
// decay = weight_decay where the parameter decays (ParamDesc.decay; every parameter when
// only_marked is false), else 0.
GradientTransform decay_mask(double weight_decay, bool only_marked);
// lr_mult *= mult on the parameters of the last parameterized layer (the head).
GradientTransform head_lr(double mult);

// The chain of c: freeze (if c.freeze names prefixes), clip (if c.grad_clip_norm > 0),
// decay_mask (if c.weight_decay != 0), head_lr (if c.head_lr_mult != 1).
Chain default_chain(const OptimConfig& c);

// Runs each step of the chain over ps, in order.
void run_chain(hlo::Builder& b, const Chain& chain, std::vector<ParamStep>& ps);

// apply_update (optimizer.h) with an explicit chain instead of default_chain(c): c's transform
// fields are then not read, only its rule's.
UpdateResult apply_update(hlo::Builder& b, const OptimConfig& c, const ParamTable& table,
                          const std::vector<Value*>& params, const std::vector<Value*>& grads,
                          const std::vector<Value*>& state, Value* lr, Value* step,
                          const Chain& chain);

}  // namespace netspec::optim
