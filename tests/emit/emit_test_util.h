// Helpers for the emit tests: tiny nets, deterministic inputs, running a module on an executor.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/vjp.h"
#include "emit/emit.h"
#include "exec/backend.h"
#include "gradcheck/gradcheck.h"
#include "hlo/ir.h"
#include "hlo/passes.h"
#include "layers/param_table.h"
#include "spec/zoo.h"

namespace netspec::emit::testing {

// Emit options with only the batch size set (the layer tests' modules).
inline EmitOptions opts(int64_t batch = 3) {
  EmitOptions o;
  o.batch = batch;
  return o;
}

// Deterministic values in [-1, 1] (or [0, 1] when positive), distinct per seed.
inline Tensor random_tensor(const hlo::Type& t, uint64_t seed, bool positive = false) {
  Tensor out(t.dtype(), t.shape());
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < out.numel(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = static_cast<double>(s >> 11) / 9007199254740992.0;  // [0, 1)
    double v = positive ? u : 2 * u - 1;
    if (t.dtype() == DType::kF32)
      out.data<float>()[i] = static_cast<float>(v);
    else if (t.dtype() == DType::kF64)
      out.data<double>()[i] = v;
    else if (t.dtype() == DType::kI32)
      out.data<int32_t>()[i] = static_cast<int32_t>(u * 3);
  }
  return out;
}

// Train-step inputs in manifest order (parameters in [-1, 1], state zero, labels < classes).
inline std::vector<Tensor> step_inputs(const Emitted& e, int64_t classes) {
  std::vector<Tensor> in;
  uint64_t seed = 1;
  for (const auto& ti : e.manifest.inputs) {
    hlo::Type t = hlo::Type::tensor(ti.dtype, ti.shape);
    if (ti.name == "lr") {
      in.push_back(Tensor::scalar_f32(0.05f));
    } else if (ti.name == "step") {
      in.push_back(Tensor::from<int>(DType::kI32, {}, {1}));
    } else if (ti.role == "optimizer_state") {
      in.emplace_back(ti.dtype, ti.shape);
    } else if (ti.dtype == DType::kI32) {
      Tensor y(DType::kI32, ti.shape);
      for (int64_t i = 0; i < y.numel(); ++i)
        y.data<int32_t>()[i] = static_cast<int32_t>((i * 7 + 3) % classes);
      in.push_back(y);
    } else {
      // running variances positive (the eval forward takes their rsqrt)
      in.push_back(random_tensor(t, seed++, ti.name.find("running_var") != std::string::npos));
    }
  }
  return in;
}

inline std::vector<Tensor> run_main(const hlo::Module& m, const std::vector<Tensor>& in,
                                    const std::string& backend = "ref") {
  auto exe =
      exec::make_backend(backend)->load(std::shared_ptr<const hlo::Module>(hlo::clone_module(m)));
  return exe->run("main", in);
}

inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    d = std::max(d, std::abs(a.as_double(i) - b.as_double(i)));
  return d;
}

// Gradchecks the train-step loss (params, x, labels) -> loss of `net` in f64 on `backend`.
// max_coords > 0: inputs larger than that are checked on that many sampled coordinates;
// zero_abs > 0: an input whose exact gradient is 0 (a bias a BatchNorm cancels) passes when
// max |vjp - fd| <= zero_abs (GradcheckOptions).
inline void expect_loss_grads(const NetSpec& net, const EmitOptions& o,
                              const std::string& backend = "ref", int64_t classes = 3,
                              int64_t max_coords = 0, double zero_abs = 0) {
  Emitted e = emit_module(net, ModuleKind::loss, o);
  autodiff::GradcheckOptions g;
  g.backend = backend;
  g.int_max = classes;
  g.max_coords = max_coords;
  g.zero_abs = zero_abs;
  autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
  EXPECT_FALSE(r.inputs.empty());
  EXPECT_TRUE(r.ok) << net.name << " on " << backend << "\n" << r.str();
}

// Gradients of the loss w.r.t. every parameter from the autodiff VJP (the checked gradient).
inline std::vector<Tensor> loss_grads(const NetSpec& net, const EmitOptions& o,
                                      const std::vector<Tensor>& params, const Tensor& x,
                                      const Tensor& labels) {
  Emitted e = emit_module(net, ModuleKind::loss, o);
  std::vector<size_t> wrt;
  for (size_t i = 0; i < params.size(); ++i) wrt.push_back(i);
  autodiff::VjpOptions vo;
  vo.name = "loss_vjp";
  autodiff::vjp(*e.module->find("main"), wrt, vo);
  std::vector<Tensor> in = params;
  in.push_back(x);
  in.push_back(labels);
  in.push_back(o.dtype == DType::kF64 ? Tensor::from<double>(DType::kF64, {}, {1.0})
                                      : Tensor::scalar_f32(1));  // the loss cotangent
  auto exe =
      exec::make_backend("ref")->load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
  std::vector<Tensor> out = exe->run("loss_vjp", in);
  return {out.begin() + 1, out.end()};
}

// Runs @main of m (manifest man) on `backend` with deterministic inputs (step 1, the others
// random: positive except parameters) and checks every output has the manifest's shape and
// finite values.
inline void expect_module_runs(const hlo::Module& m, const Manifest& man,
                               const std::string& backend = "cpu") {
  const hlo::Func* f = m.entry();
  ASSERT_EQ(f->num_args(), man.inputs.size());
  std::vector<Tensor> in;
  for (size_t i = 0; i < f->num_args(); ++i)
    in.push_back(man.inputs[i].name == "step"
                     ? Tensor::from<int>(DType::kI32, {}, {1})
                     : random_tensor(f->arg(i)->type, i, man.inputs[i].role != "param"));
  std::vector<Tensor> out = run_main(m, in, backend);
  ASSERT_EQ(out.size(), man.outputs.size());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].shape(), man.outputs[i].shape) << man.outputs[i].name;
    for (int64_t j = 0; j < out[i].numel(); ++j)
      ASSERT_TRUE(std::isfinite(out[i].as_double(j))) << man.outputs[i].name;
  }
}

// A 3-4-2 MLP (relu), its parameters, a batch of 4 inputs and class labels.
struct StepSetup {
  NetSpec net =
      NetBuilder("mlp2").input(3).add(Dense{3, 4, Activation::relu}).add(Dense{4, 2}).build();
  ParamTable t = build_param_table(net);
  std::vector<Tensor> params;
  Tensor x, labels;
  StepSetup() {
    for (size_t i = 0; i < t.params.size(); ++i)
      params.push_back(random_tensor(hlo::Type::tensor(DType::kF32, t.params[i].shape), 10 + i));
    x = random_tensor(hlo::Type::tensor(DType::kF32, {4, 3}), 3);
    labels = Tensor::from<int>(DType::kI32, {4}, {0, 1, 1, 0});
  }
};

// The loss of `steps` train steps on the cpu executor on one repeated batch (x, labels) from
// `params` (optimizer state zero), lr fixed: what the zoo tests use to see a net learn. Fails
// the test on a non-finite loss; prints the losses as "[ train ] name: loss a -> b -> ...".
inline std::vector<double> train_step_losses(const NetSpec& net, const EmitOptions& o,
                                             std::vector<Tensor> params, const Tensor& x,
                                             const Tensor& labels, double lr, int steps = 4) {
  Emitted e = emit_module(net, ModuleKind::train_step, o);
  const size_t n_state = e.manifest.inputs.size() - 4;  // P, optimizer state | x, labels, lr, step
  for (size_t i = params.size(); i < n_state; ++i)
    params.emplace_back(DType::kF32, e.manifest.inputs[i].shape);  // zero-filled
  EXPECT_EQ(e.manifest.outputs.at(n_state).role, "loss");
  auto exe =
      exec::make_backend("cpu")->load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
  std::vector<double> losses;
  std::string shown;
  for (int step = 1; step <= steps; ++step) {
    std::vector<Tensor> in = params;
    in.push_back(x);
    in.push_back(labels);
    in.push_back(Tensor::scalar_f32(static_cast<float>(lr)));
    in.push_back(Tensor::from<int>(DType::kI32, {}, {step}));
    std::vector<Tensor> out = exe->run("main", in);
    losses.push_back(out.at(n_state).as_double(0));
    shown += (step > 1 ? " -> " : "") + std::to_string(losses.back());
    EXPECT_TRUE(std::isfinite(losses.back())) << net.name << " step " << step;
    if (!std::isfinite(losses.back())) break;
    params.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n_state));
  }
  std::cout << "[ train ] " << net.name << ": loss " << shown << "\n";
  return losses;
}

// Parameters near nn.Linear's scale: LN γ = 1 + noise, the rest uniform ±`scale`.
inline std::vector<Tensor> small_params(const ParamTable& t, DType dt, double scale,
                                        uint64_t seed) {
  std::vector<Tensor> ps;
  for (size_t i = 0; i < t.params.size(); ++i) {
    Tensor r = random_tensor(hlo::Type::tensor(DType::kF64, t.params[i].shape), seed + i);
    Tensor p(dt, t.params[i].shape);
    bool ones = t.params[i].init == ParamInit::ones;
    for (int64_t j = 0; j < p.numel(); ++j) {
      double v = (ones ? 1.0 : 0.0) + scale * r.as_double(j);
      if (dt == DType::kF64)
        p.data<double>()[j] = v;
      else
        p.data<float>()[j] = static_cast<float>(v);
    }
    ps.push_back(std::move(p));
  }
  return ps;
}

// Three cpu train steps (Adam, lr) from small_params(scale) on one repeated batch lower the loss.
inline void expect_train_steps_lower_loss(const NetSpec& net, const TrainConfig& tc, int64_t batch,
                                          double lr = 3e-3, double scale = 0.05) {
  SCOPED_TRACE(net.name);
  ParamTable t = build_param_table(net);
  EmitOptions o = EmitOptions::from_train(tc, batch);
  o.optim.kind = OptimizerKind::adam;
  o.optim.weight_decay = 0;
  Emitted e = emit_module(net, ModuleKind::train_step, o);
  auto exe =
      exec::make_backend("cpu")->load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
  std::vector<Tensor> params = small_params(t, DType::kF32, scale, 11);
  std::vector<Tensor> state;
  for (size_t s = 0; s < 2; ++s)
    for (const auto& p : t.params) state.emplace_back(DType::kF32, p.shape);
  const auto& ins = e.manifest.inputs;
  const TensorInfo& xi = ins[ins.size() - 4];
  const TensorInfo& li = ins[ins.size() - 3];
  int64_t classes = t.output.back();
  Tensor x = xi.dtype == DType::kI32 ? Tensor(DType::kI32, xi.shape)
                                     : random_tensor(hlo::Type::tensor(xi.dtype, xi.shape), 5);
  Tensor labels(DType::kI32, li.shape);
  for (int64_t i = 0; i < labels.numel(); ++i) labels.data<int32_t>()[i] = (i * 7 + 3) % classes;
  if (xi.dtype == DType::kI32)  // the next-token task: ids are the labels shifted by one
    for (int64_t i = 0; i < x.numel(); ++i) x.data<int32_t>()[i] = (i * 7) % classes;
  std::vector<double> losses;
  for (int step = 1; step <= 3; ++step) {
    std::vector<Tensor> in = params;
    in.insert(in.end(), state.begin(), state.end());
    in.push_back(x);
    in.push_back(labels);
    in.push_back(Tensor::scalar_f32(static_cast<float>(lr)));
    in.push_back(Tensor::from<int>(DType::kI32, {}, {step}));
    std::vector<Tensor> out = exe->run("main", in);
    size_t n = params.size();
    params.assign(out.begin(), out.begin() + n);
    state.assign(out.begin() + n, out.begin() + 3 * n);
    losses.push_back(out[3 * n].as_double(0));
  }
  EXPECT_TRUE(std::isfinite(losses[0]));
  EXPECT_LT(losses[2], losses[0] - 0.05) << losses[0] << " -> " << losses[2];
  std::cout << "[ train ] " << net.name << ": loss " << losses[0] << " -> " << losses[2] << "\n";
}

// Every module of `net` emits (forward, eval, loss, train_step, vjp, optimizer) at `batch`.
inline void expect_emits_every_module(const NetSpec& net, const TrainConfig& tc, int64_t batch) {
  EmitOptions o = EmitOptions::from_train(tc, batch);
  for (ModuleKind k : {ModuleKind::forward, ModuleKind::eval, ModuleKind::loss,
                       ModuleKind::train_step, ModuleKind::vjp, ModuleKind::optimizer}) {
    SCOPED_TRACE(net.name + " " + std::string(enum_name(k)));
    EXPECT_FALSE(emit_module(net, k, o).manifest.inputs.empty());
  }
}

inline void expect_train_steps_lower_loss(const char* name, int64_t batch) {
  SpecFile sf = resolve_net(name);
  expect_train_steps_lower_loss(sf.net, sf.train.value_or(TrainConfig{}), batch);
}

}  // namespace netspec::emit::testing
