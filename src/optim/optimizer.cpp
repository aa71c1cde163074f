// apply_update: the gradient chain (transforms.h), then per parameter the rule its partition
// gives (rule.h): the configured kind's, or its fallback's where a matrix rule is not eligible.
// The rules, one file each with their math: sgd.cpp, adam.cpp, rmsprop.cpp, lamb.cpp, muon.cpp,
// shampoo.cpp.
#include "optim/optimizer.h"

#include "core/error.h"
#include "optim/rule.h"
#include "optim/transforms.h"

namespace netspec::optim {

OptimConfig OptimConfig::from_train(const TrainConfig& t) {
  OptimConfig c;
  c.kind = t.optimizer;
  c.momentum = t.momentum;
  c.nesterov = t.nesterov;
  c.rms_decay = t.rmspropDecay;
  c.rms_eps = t.rmspropEps;
  c.weight_decay = t.weightDecay;
  c.wd_exclude_norm_bias = t.wdExcludeNormBias;
  c.grad_clip_norm = t.gradClipNorm;
  c.head_lr_mult = t.headLrMult;
  c.freeze = freeze_prefixes(t.freeze);
  return c;
}

std::vector<std::string> freeze_prefixes(const std::string& list) {
  std::vector<std::string> out;
  for (size_t a = 0; a < list.size();) {
    size_t e = list.find(',', a);
    if (e == std::string::npos) e = list.size();
    if (e > a) out.push_back(list.substr(a, e - a));
    a = e + 1;
  }
  return out;
}

bool is_frozen(const std::string& name, const std::vector<std::string>& prefixes) {
  for (const auto& f : prefixes)
    if (name.rfind(f, 0) == 0) return true;
  return false;
}

std::vector<std::string> state_slots(const OptimConfig& c) { return rule_for(c.kind).slots(c); }

namespace {

// t and, when a rule in use is bias corrected, 1 - β1^t and 1 - β2^t.
StepScalars step_scalars(hlo::Builder& b, const OptimConfig& c, Value* step, DType dt) {
  const UpdateRule& r = rule_for(c.kind);
  StepScalars s;
  s.t = b.convert(step, dt);
  if (r.bias_corrected || (r.fallback && rule_for(*r.fallback).bias_corrected)) {
    s.bc1 = b.subtract(splat(b, 1, s.t), b.power(splat(b, c.momentum, s.t), s.t));
    s.bc2 = b.subtract(splat(b, 1, s.t), b.power(splat(b, c.beta2, s.t), s.t));
  }
  return s;
}

}  // namespace

UpdateResult apply_update(hlo::Builder& b, const OptimConfig& c, const ParamTable& table,
                          const std::vector<Value*>& params, const std::vector<Value*>& grads,
                          const std::vector<Value*>& state, Value* lr, Value* step,
                          const Chain& chain) {
  const size_t n = params.size();
  const std::vector<std::string> slot_names = state_slots(c);
  const size_t slots = slot_names.size();
  if (grads.size() != n || state.size() != slots * n || table.params.size() != n)
    fail("optimizer", "operand counts (got {} params, {} grads, {} state, {} in the table)", n,
         grads.size(), state.size(), table.params.size());
  const std::vector<OptimizerKind> rule_of = partition(c.kind, table);
  if (const auto& fb = rule_for(c.kind).fallback; fb && rule_for(*fb).slots(c) != slot_names)
    fail("optimizer", "{}'s fallback {} keeps other state slots", enum_name(c.kind),
         enum_name(*fb));
  std::vector<ParamStep> ps(n);
  for (size_t i = 0; i < n; ++i) ps[i] = {&table.params[i], grads[i]};
  run_chain(b, chain, ps);
  const DType dt = params.empty() ? DType::kF32 : params[0]->type.dtype();
  Value* lr_base = lr->type.dtype() == dt ? lr : b.convert(lr, dt);
  const StepScalars sc = step_scalars(b, c, step, dt);
  UpdateResult r;
  r.params.resize(n);
  r.state.resize(slots * n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<Value*> st;
    for (size_t k = 0; k < slots; ++k) st.push_back(state[k * n + i]);
    ParamOut out{params[i], st};
    if (!ps[i].frozen) {
      Value* lr_i =
          ps[i].lr_mult != 1 ? b.multiply(lr_base, splat(b, ps[i].lr_mult, lr_base)) : lr_base;
      ParamIn in{table.params[i], params[i], ps[i].g, lr_i, ps[i].decay, std::move(st)};
      out = rule_for(rule_of[i]).update(b, c, sc, in);
    }
    r.params[i] = out.p;
    for (size_t k = 0; k < slots; ++k) r.state[k * n + i] = out.state.at(k);
  }
  return r;
}

UpdateResult apply_update(hlo::Builder& b, const OptimConfig& c, const ParamTable& table,
                          const std::vector<Value*>& params, const std::vector<Value*>& grads,
                          const std::vector<Value*>& state, Value* lr, Value* step) {
  return apply_update(b, c, table, params, grads, state, lr, step, default_chain(c));
}

}  // namespace netspec::optim
