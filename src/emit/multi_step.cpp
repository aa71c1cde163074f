// emit_multi_step: a while over K stacked batches around the inlined train step (multi_step.h).
#include "emit/multi_step.h"

#include "core/error.h"
#include "emit/signature.h"
#include "hlo/builder.h"
#include "hlo/passes.h"

namespace netspec::emit {
namespace {

// Inputs that change per step get a leading K dim; params and optimizer state are carried.
bool per_step_input(const TensorInfo& ti) {
  return ti.role == "input" || ti.role == "label" || ti.role == "mask" ||
         ti.role == "hyperparameter";
}
bool carried(const TensorInfo& ti) { return ti.role == "param" || ti.role == "optimizer_state"; }

Shape stacked(int64_t k, const Shape& s) {
  Shape r{k};
  r.insert(r.end(), s.begin(), s.end());
  return r;
}

// x[i] of a stacked value x [K, ...]: dynamic_slice at (i, 0, ...) then drop the unit dim.
hlo::Value* row(hlo::Builder& b, hlo::Value* x, hlo::Value* i, hlo::Value* zero) {
  const Shape& s = x->type.shape();
  std::vector<hlo::Value*> at{i};
  hlo::I64s sizes{1};
  for (size_t d = 1; d < s.size(); ++d) {
    at.push_back(zero);
    sizes.push_back(s[d]);
  }
  return b.reshape(b.dynamic_slice(x, at, sizes), Shape(s.begin() + 1, s.end()));
}

// acc with row i set to v: dynamic_update_slice(acc, v[None], (i, 0, ...)).
hlo::Value* set_row(hlo::Builder& b, hlo::Value* acc, hlo::Value* v, hlo::Value* i,
                    hlo::Value* zero) {
  std::vector<hlo::Value*> at{i};
  for (size_t d = 0; d < v->type.shape().size(); ++d) at.push_back(zero);
  return b.dynamic_update_slice(acc, b.reshape(v, stacked(1, v->type.shape())), at);
}

}  // namespace

Emitted emit_multi_step(const Emitted& step, int64_t k) {
  const Manifest& sm = step.manifest;
  if (k < 1) fail("emit", "steps per call must be >= 1 (got {})", k);
  if (sm.module != "train_step" || sm.replicas != 1)
    fail("emit", "the K-step module wraps a one-replica train_step (got {} with {} replicas)",
         sm.module, sm.replicas);
  Emitted e;
  e.module = hlo::clone_module(*step.module);
  hlo::Module& m = *e.module;
  hlo::Func* one = m.find(sm.entry);
  if (!one) fail("emit", "train_step module has no @{}", sm.entry);
  one->name = "train_step_once";
  one->is_public = false;

  // Carried state: input position of each param / optimizer_state, matched to the outputs of the
  // same role in order (the step returns them in its input order).
  std::vector<size_t> state_in;
  std::vector<TensorInfo> ins;
  std::vector<hlo::Type> in_types;
  for (size_t j = 0; j < sm.inputs.size(); ++j) {
    TensorInfo ti = sm.inputs[j];
    if (carried(ti))
      state_in.push_back(j);
    else if (per_step_input(ti))
      ti.shape = stacked(k, ti.shape);
    else
      fail("emit", "train_step input '{}' has role {} (not per-step, not state)", ti.name, ti.role);
    in_types.push_back(hlo::Type::tensor(ti.dtype, ti.shape));
    ins.push_back(std::move(ti));
  }
  ins.push_back(TensorInfo{"n_steps", {}, DType::kI32, "hyperparameter", 0});
  in_types.push_back(hlo::Type::tensor(DType::kI32, {}));

  std::vector<size_t> state_out, acc_out;  // output positions: carried, stacked
  std::vector<TensorInfo> outs;
  for (size_t o = 0; o < sm.outputs.size(); ++o) {
    TensorInfo ti = sm.outputs[o];
    if (carried(ti)) {
      state_out.push_back(o);
    } else {
      acc_out.push_back(o);
      ti.shape = stacked(k, ti.shape);
    }
    outs.push_back(std::move(ti));
  }
  if (state_out.size() != state_in.size())
    fail("emit", "train_step returns {} params/optimizer states for {} inputs", state_out.size(),
         state_in.size());
  for (size_t s = 0; s < state_in.size(); ++s) {
    const TensorInfo &a = sm.inputs[state_in[s]], &r = sm.outputs[state_out[s]];
    if (a.role != r.role || a.shape != r.shape || a.dtype != r.dtype)
      fail("emit", "train_step state output '{}' does not match input '{}'", r.name, a.name);
  }

  hlo::Func* f = m.add_func("main", in_types);
  hlo::Builder b(f->body.get());
  hlo::Value* n = f->arg(ins.size() - 1);
  // Loop state: (i, state..., stacked outputs...); stacked inputs are read from the enclosing
  // function (implicit capture), never copied per iteration.
  std::vector<hlo::Value*> init{b.scalar(0, DType::kI32)};
  for (size_t j : state_in) init.push_back(f->arg(j));
  for (size_t o : acc_out)
    init.push_back(b.constant_splat(0, hlo::Type::tensor(outs[o].dtype, outs[o].shape)));
  const size_t ns = state_in.size();
  std::vector<hlo::Value*> res = b.while_(
      init,
      [&](hlo::Builder& c, const std::vector<hlo::Value*>& a) -> std::vector<hlo::Value*> {
        return {c.compare(a[0], n, "LT")};
      },
      [&](hlo::Builder& c, const std::vector<hlo::Value*>& a) -> std::vector<hlo::Value*> {
        hlo::Value* i = a[0];
        hlo::Value* zero = c.scalar(0, DType::kI32);
        std::vector<hlo::Value*> args;
        for (size_t j = 0, s = 0; j < sm.inputs.size(); ++j)
          args.push_back(carried(sm.inputs[j]) ? a[1 + s++] : row(c, f->arg(j), i, zero));
        std::vector<hlo::Value*> r = hlo::inline_call(c.block(), *one, args);
        std::vector<hlo::Value*> next{c.add(i, c.scalar(1, DType::kI32))};
        for (size_t o : state_out) next.push_back(r[o]);
        for (size_t q = 0; q < acc_out.size(); ++q)
          next.push_back(set_row(c, a[1 + ns + q], r[acc_out[q]], i, zero));
        return next;
      });
  std::vector<hlo::Value*> ret(outs.size());
  for (size_t s = 0; s < ns; ++s) ret[state_out[s]] = res[1 + s];
  for (size_t q = 0; q < acc_out.size(); ++q) ret[acc_out[q]] = res[1 + ns + q];
  b.func_return(ret);
  erase_func(m, one);

  e.manifest = sm;
  e.manifest.module = "train_steps";
  e.manifest.inputs = std::move(ins);
  e.manifest.outputs = std::move(outs);
  return e;
}

}  // namespace netspec::emit
