// RMSprop (TF flavour) and LAMB train steps against their formulas applied to the checked
// gradient (the autodiff VJP of the loss), like the sgd/adam tests in modules_test.cpp.
#include "emit_test_util.h"

namespace netspec::emit::testing {
namespace {

// Runs the train step of s.net with state slots `state` (slot-major) at lr, step.
std::vector<Tensor> run_step(const StepSetup& s, const EmitOptions& o,
                             const std::vector<Tensor>& state, float lr, int step) {
  Emitted e = emit_module(s.net, ModuleKind::train_step, o);
  std::vector<Tensor> in = s.params;
  in.insert(in.end(), state.begin(), state.end());
  in.push_back(s.x);
  in.push_back(s.labels);
  in.push_back(Tensor::scalar_f32(lr));
  in.push_back(Tensor::from<int>(DType::kI32, {}, {step}));
  return run_main(*e.module, in);
}

TEST(EmitTrainStep, RmspropTfFlavourMatchesFormula) {
  // TF RMSprop: g += d·p; ms = ρ·ms + (1-ρ)·g²; mom = μ·mom + lr·g/√(ms + eps);
  // p -= mom.
  // eps = 0.1 is large so eps inside the sqrt differs visibly from √ms + eps.
  StepSetup s;
  EmitOptions o;
  o.batch = 4;
  o.optim.kind = OptimizerKind::rmsprop;
  o.optim.momentum = 0.5;
  o.optim.rms_decay = 0.8;
  o.optim.rms_eps = 0.1;
  o.optim.weight_decay = 0.05;
  std::vector<Tensor> g = loss_grads(s.net, o, s.params, s.x, s.labels);
  const size_t n = s.params.size();
  std::vector<Tensor> state;
  for (size_t i = 0; i < n; ++i)
    state.push_back(random_tensor(hlo::Type::tensor(DType::kF32, s.params[i].shape()), 30 + i,
                                  true));
  for (size_t i = 0; i < n; ++i)
    state.push_back(random_tensor(hlo::Type::tensor(DType::kF32, s.params[i].shape()), 40 + i));
  std::vector<Tensor> out = run_step(s, o, state, 0.01f, 1);
  ASSERT_EQ(out.size(), 3 * n + 2);  // P', ms, mom, loss, correct
  double max_eps_outside_gap = 0;
  for (size_t i = 0; i < n; ++i) {
    double d = s.t.params[i].decay ? 0.05 : 0.0;
    for (int64_t j = 0; j < s.params[i].numel(); ++j) {
      double p = s.params[i].as_double(j);
      double gj = g[i].as_double(j) + d * p;
      double ms = 0.8 * state[i].as_double(j) + 0.2 * gj * gj;
      double mom = 0.5 * state[n + i].as_double(j) + 0.01 * gj / std::sqrt(ms + 0.1);
      double mom_outside = 0.5 * state[n + i].as_double(j) + 0.01 * gj / (std::sqrt(ms) + 0.1);
      max_eps_outside_gap = std::max(max_eps_outside_gap, std::abs(mom - mom_outside));
      EXPECT_NEAR(out[i].as_double(j), p - mom, 1e-6) << s.t.params[i].name << " " << j;
      EXPECT_NEAR(out[n + i].as_double(j), ms, 1e-6) << s.t.params[i].name << " " << j;
      EXPECT_NEAR(out[2 * n + i].as_double(j), mom, 1e-6) << s.t.params[i].name << " " << j;
    }
  }
  EXPECT_GT(max_eps_outside_gap, 1e-4);  // the test tells the two eps placements apart
}

TEST(EmitTrainStep, LambMatchesFormulaWithUnitRatioForZeroNorm) {
  // m, v, m̂, v̂ as Adam; r = m̂/(√v̂ + eps) + d·p; p -= lr·(‖p‖/‖r‖)·r,
  // ratio 1 if a norm is 0.
  // The first layer's bias starts at zero, so its ‖p‖ = 0 and its ratio is 1.
  StepSetup s;
  const size_t n = s.params.size();
  ASSERT_EQ(s.t.params[1].name, "layers.0.bias");
  s.params[1] = Tensor(DType::kF32, s.params[1].shape());
  EmitOptions o;
  o.batch = 4;
  o.optim.kind = OptimizerKind::lamb;
  o.optim.momentum = 0.9;
  o.optim.beta2 = 0.99;
  o.optim.eps = 1e-6;
  o.optim.weight_decay = 0.1;
  std::vector<Tensor> g = loss_grads(s.net, o, s.params, s.x, s.labels);
  std::vector<Tensor> m, v;
  for (size_t i = 0; i < n; ++i) {
    m.push_back(random_tensor(hlo::Type::tensor(DType::kF32, s.params[i].shape()), 70 + i));
    v.push_back(random_tensor(hlo::Type::tensor(DType::kF32, s.params[i].shape()), 90 + i, true));
  }
  std::vector<Tensor> state = m;
  state.insert(state.end(), v.begin(), v.end());
  const int t = 2;
  const double lr = 0.05;
  std::vector<Tensor> out = run_step(s, o, state, static_cast<float>(lr), t);
  ASSERT_EQ(out.size(), 3 * n + 2);  // P', m, v, loss, correct
  for (size_t i = 0; i < n; ++i) {
    SCOPED_TRACE(s.t.params[i].name);
    double d = s.t.params[i].decay ? 0.1 : 0.0;
    const int64_t k = s.params[i].numel();
    std::vector<double> r(k), mj(k), vj(k);
    double pn = 0, rn = 0;
    for (int64_t j = 0; j < k; ++j) {
      double p = s.params[i].as_double(j), gj = g[i].as_double(j);
      mj[j] = 0.9 * m[i].as_double(j) + 0.1 * gj;
      vj[j] = 0.99 * v[i].as_double(j) + 0.01 * gj * gj;
      double mhat = mj[j] / (1 - std::pow(0.9, t)), vhat = vj[j] / (1 - std::pow(0.99, t));
      r[j] = mhat / (std::sqrt(vhat) + 1e-6) + d * p;
      pn += p * p;
      rn += r[j] * r[j];
    }
    pn = std::sqrt(pn);
    rn = std::sqrt(rn);
    double ratio = pn > 0 && rn > 0 ? pn / rn : 1.0;
    if (i == 1) EXPECT_EQ(pn, 0.0);
    else EXPECT_GT(std::abs(ratio - 1), 1e-3);  // a real trust ratio is applied
    for (int64_t j = 0; j < k; ++j) {
      double p = s.params[i].as_double(j);
      EXPECT_NEAR(out[i].as_double(j), p - lr * ratio * r[j], 1e-5) << j;
      EXPECT_NEAR(out[n + i].as_double(j), mj[j], 1e-6) << j;
      EXPECT_NEAR(out[2 * n + i].as_double(j), vj[j], 1e-6) << j;
    }
  }
}

}  // namespace
}  // namespace netspec::emit::testing
