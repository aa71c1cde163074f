// Update rules and their registry. Each rule is one file (src/optim/<kind>.cpp) holding its state
// slots and its per-parameter update, and ends with one registration line:
//   NETSPEC_REGISTER_OPTIMIZER(rmsprop, {.slots = rmsprop_slots, .update = rmsprop_update})
// A rule sees one parameter after the gradient transforms (transforms.h) have run: its value, its
// transformed gradient, its scalar learning rate (head-lr applied), its weight decay (mask
// applied) and its own state slots. Matrix rules (Muon, Shampoo) update only the parameters they
// are eligible for; the others go to their fallback rule (AdamW), which shares their slots.
// The library is linked whole-archive so these static registrars are never dropped.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace netspec::optim {

// Scalars of the step shared by every parameter, built once before the parameter loop (param
// dtype): t = the 1-based step; bc1 = 1 - β1^t, bc2 = 1 - β2^t when a rule in use is bias
// corrected (nullptr otherwise).
struct StepScalars {
  Value* t = nullptr;
  Value* bc1 = nullptr;
  Value* bc2 = nullptr;
};

// One parameter as its rule sees it. lr is a scalar; state holds this parameter's slots in
// state_slots order.
struct ParamIn {
  const ParamDesc& desc;
  Value* p;
  Value* g;
  Value* lr;
  double decay;
  std::vector<Value*> state;
};

struct ParamOut {
  Value* p;
  std::vector<Value*> state;  // same slots, same order
};

using SlotsFn = std::vector<std::string> (*)(const OptimConfig& c);
using UpdateFn = ParamOut (*)(hlo::Builder& b, const OptimConfig& c, const StepScalars& s,
                              const ParamIn& in);

struct UpdateRule {
  SlotsFn slots = nullptr;
  UpdateFn update = nullptr;
  bool bias_corrected = false;  // reads StepScalars::bc1 / bc2
  // Matrix rules: the parameters this rule updates; every other one goes to `fallback`, whose
  // slots must be the same. nullptr: every parameter.
  bool (*eligible)(const ParamDesc& p) = nullptr;
  std::optional<OptimizerKind> fallback{};
};

// The rule registered for `kind`; throws `[optimizer] optimizer kind has no update rule (got X,
// expected one of: ...)` if none is.
const UpdateRule& rule_for(OptimizerKind kind);
// The registered kinds, in OptimizerKind order.
std::vector<OptimizerKind> registered_kinds();

// The partition by eligibility: the kind whose rule updates each parameter of the table (the
// configured kind where its rule is eligible, its fallback elsewhere).
std::vector<OptimizerKind> partition(OptimizerKind kind, const ParamTable& table);

struct RuleRegistrar {
  RuleRegistrar(OptimizerKind kind, UpdateRule rule);
};
#define NETSPEC_REGISTER_OPTIMIZER(kind, ...)                              \
  static const ::netspec::optim::RuleRegistrar optimizer_registrar_##kind{ \
      ::netspec::OptimizerKind::kind, ::netspec::optim::UpdateRule __VA_ARGS__};

// Adam's slots {"m", "v"}: adam, lamb, and muon and shampoo, whose signature is their AdamW
// fallback's (adam.cpp).
std::vector<std::string> adam_slots(const OptimConfig& c);

// Adam's moments and direction, shared by adam and lamb (adam.cpp):
//   m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²;  dir = (m / bc1) / (√(v / bc2) + eps)
struct AdamMoments {
  Value* m;
  Value* v;
  Value* dir;
};
AdamMoments adam_moments(hlo::Builder& b, const OptimConfig& c, const StepScalars& s, Value* g,
                         Value* m0, Value* v0);

// --- element-wise helpers shared by the rules and transforms ---
// v splatted to like's type.
inline Value* splat(hlo::Builder& b, double v, Value* like) {
  return b.constant_splat(v, like->type);
}
// A scalar broadcast to like's shape.
inline Value* bcast(hlo::Builder& b, Value* s, Value* like) {
  return b.broadcast_in_dim(s, like->type.shape(), {});
}
// Σ x² over every element (a scalar).
inline Value* sum_sq(hlo::Builder& b, Value* x) {
  hlo::I64s dims;
  for (int64_t d = 0; d < x->type.rank(); ++d) dims.push_back(d);
  return b.reduce(b.multiply(x, x), b.scalar(0, x->type.dtype()), dims, hlo::OpKind::kAdd);
}
// a·x + c·y
inline Value* axpy(hlo::Builder& b, double a, Value* x, double c, Value* y) {
  return b.add(b.multiply(splat(b, a, x), x), b.multiply(splat(b, c, y), y));
}

}  // namespace netspec::optim
