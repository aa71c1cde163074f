// In-graph optimizer updates: (params, grads, state, lr, step) -> (new params, new state), built
// into the train step and the standalone optimizer module. State is slot-major: all of slot 0
// (one tensor per parameter, same shape), then slot 1, ... (state_slots names them). `lr` is an
// f32 scalar input and `step` an i32 scalar: the 1-based number of this update (Adam's t).
// An update is a chain of gradient transforms (transforms.h: freeze, global-norm clipping, weight
// decay mask, head-lr) followed by one update rule per parameter (rule.h: a registry keyed by
// OptimizerKind, one file per rule; Muon and Shampoo partition the parameters by eligibility and
// hand the rest to AdamW).
#pragma once
#include <string>
#include <vector>

#include "hlo/builder.h"
#include "spec/param_table.h"
#include "spec/train_config.h"

namespace netspec::optim {

using hlo::Value;

struct OptimConfig {
  OptimizerKind kind = OptimizerKind::sgd;
  double momentum = 0;      // sgd momentum μ / adam β1 / rmsprop momentum / lamb β1
  bool nesterov = false;    // sgd
  double beta2 = 0.999;     // adam, lamb
  double eps = 1e-8;        // adam, lamb
  double rms_decay = 0.9;   // rmsprop ρ
  double rms_eps = 1e-8;    // rmsprop (TF flavour: inside the sqrt)
  double weight_decay = 0;  // sgd/rmsprop: L2 into the gradient; adam: decoupled (AdamW); lamb
  bool wd_exclude_norm_bias = true;  // decay only params whose ParamDesc.decay is set
  double grad_clip_norm = 0;         // clip the global L2 norm over ALL grads (0: off)
  double head_lr_mult = 1;           // lr multiplier for the last parameterized layer
  std::vector<std::string> freeze;   // parameter-name prefixes left unchanged (no update, no state)
  static OptimConfig from_train(const TrainConfig& t);
};

// The `freeze` field's comma-separated parameter-name prefixes, empty items dropped ("a,,b" is
// {"a", "b"}), and whether `name` starts with one of them. The freeze transform, the trainer's
// check that each prefix names a parameter and `train`'s trainable count all read it through these.
std::vector<std::string> freeze_prefixes(const std::string& list);
bool is_frozen(const std::string& name, const std::vector<std::string>& prefixes);

// The rule's slot names: sgd {} or {"momentum"}, adam/lamb/muon/shampoo {"m", "v"}, rmsprop
// {"ms", "mom"}. Throws for a kind with no registered rule.
std::vector<std::string> state_slots(const OptimConfig& c);

struct UpdateResult {
  std::vector<Value*> params;
  std::vector<Value*> state;  // slot-major, like the input
};

// The default chain of c (transforms.h), then each parameter's rule; a frozen parameter keeps its
// value and state.
UpdateResult apply_update(hlo::Builder& b, const OptimConfig& c, const ParamTable& table,
                          const std::vector<Value*>& params, const std::vector<Value*>& grads,
                          const std::vector<Value*>& state, Value* lr, Value* step);

}  // namespace netspec::optim
