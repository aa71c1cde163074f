// Emitted modules on the xla backend (XLA's CPU compiler through the PJRT plugin) and on iree
// against the cpu executor: the mlp and mnist-cnn train steps give the same outputs, and 20
// training steps through the Stepper (state kept in device buffers on xla) give the same losses
// within f32 tolerance. Skipped with a message when the engines are not installed
// (scripts/install-engines.sh).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "core/error.h"
#include "emit/emit.h"
#include "engine_util.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/zoo.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/stepper.h"
#include "train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

using test_util::uniform_noise;

// Labels 0..classes-1 in a fixed pattern.
Tensor labels(int64_t n, int64_t classes, int64_t shift) {
  Tensor y(DType::kI32, {n});
  for (int64_t i = 0; i < n; ++i)
    y.data<int32_t>()[i] = static_cast<int32_t>((i * 7 + shift) % classes);
  return y;
}

// The train step's inputs for (net, batch): He-initialized params, zero optimizer state,
// noise inputs, pattern labels, lr 1e-3, step 1.
std::vector<Tensor> step_inputs(const SpecFile& spec, const emit::Manifest& m) {
  const ParamTable t = build_param_table(spec.net);
  std::vector<Tensor> params = init_params(t, InitKind::he, 3);
  std::vector<Tensor> in;
  size_t pi = 0;
  for (const auto& ti : m.inputs) {
    if (ti.role == "param")
      in.push_back(params.at(pi++));
    else if (ti.role == "optimizer_state")
      in.emplace_back(ti.dtype, ti.shape);
    else if (ti.role == "input")
      in.push_back(uniform_noise(ti.shape, 11));
    else if (ti.role == "label")
      in.push_back(labels(ti.shape.at(0), t.output.at(0), 1));
    else if (ti.name == "lr")
      in.push_back(Tensor::scalar_f32(1e-3f));
    else if (ti.name == "step")
      in.push_back(Tensor::from<int32_t>(DType::kI32, {}, {1}));
    else
      ADD_FAILURE() << "unexpected input " << ti.name;
  }
  return in;
}

// Largest |a - b| / (atol + |b|) over every output element.
double worst_ratio(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double atol) {
  double worst = 0;
  for (size_t k = 0; k < a.size(); ++k)
    for (int64_t i = 0; i < a[k].numel(); ++i) {
      const double x = a[k].as_double(i), y = b.at(k).as_double(i);
      worst = std::max(worst, std::abs(x - y) / (atol + std::abs(y)));
    }
  return worst;
}

// Agreement of two runs' outputs: the largest |a - b| and the fraction of elements with
// |a - b| > 1e-5 + 1e-4·|b|.
struct Agreement {
  double max_abs = 0, frac_off = 0;
};
Agreement agreement(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  Agreement r;
  int64_t n = 0, off = 0;
  for (size_t k = 0; k < a.size(); ++k)
    for (int64_t i = 0; i < a[k].numel(); ++i, ++n) {
      const double x = a[k].as_double(i), y = b.at(k).as_double(i), d = std::abs(x - y);
      r.max_abs = std::max(r.max_abs, d);
      off += d > 1e-5 + 1e-4 * std::abs(y);
    }
  r.frac_off = n ? static_cast<double>(off) / static_cast<double>(n) : 0;
  return r;
}

// The emitted train step of zoo net `name` at batch 16, its inputs and the cpu executor's outputs.
struct StepCase {
  emit::Manifest m;
  std::shared_ptr<const hlo::Module> mod;
  std::vector<Tensor> in, want;
};
StepCase step_case(const std::string& name) {
  SpecFile spec = resolve_net(name);
  emit::Emitted e = emit::emit_module(spec.net, ModuleKind::train_step,
                                      emit::EmitOptions::from_train(*spec.train, 16));
  StepCase c;
  c.m = e.manifest;
  c.mod = std::shared_ptr<const hlo::Module>(std::move(e.module));
  c.in = step_inputs(spec, c.m);
  c.want = exec::make_backend("cpu")->load(c.mod)->run("main", c.in);
  return c;
}

TEST(EnginesTrain, XlaTrainStepEqualsCpu) {
  REQUIRE_ENGINE(xla, "xla");
  for (const char* name : {"mlp", "mnist-cnn"}) {
    const StepCase sc = step_case(name);
    const emit::Manifest& m = sc.m;
    const std::vector<Tensor>&in = sc.in, &want = sc.want;
    auto got = xla->load(sc.mod)->run("main", in);
    ASSERT_EQ(got.size(), want.size());
    // f32 sums in a different order (XLA's dot/conv vs oneDNN or netspec's own Winograd) differ
    // in the last bits. Adam's first step moves each weight by lr·g/(|g| + ε): where |g| is near
    // ε = 1e-8 those bits decide the update, up to its sign (+lr on one side, -lr on the other),
    // so a few elements may differ by up to 2·lr = 2e-3; the rest agree to 1e-5 + 1e-4·|value|.
    const Agreement r = agreement(got, want);
    EXPECT_LE(r.max_abs, 2e-3) << name;
    EXPECT_LT(r.frac_off, 1e-3) << name;
    std::cout << name << ": max |xla - cpu| " << r.max_abs << ", fraction off " << r.frac_off
              << "\n";
    size_t loss_k = 0;
    for (size_t k = 0; k < m.outputs.size(); ++k)
      if (m.outputs[k].role == "loss") loss_k = k;
    EXPECT_NEAR(got[loss_k].as_double(0), want[loss_k].as_double(0),
                1e-5 * std::abs(want[loss_k].as_double(0)))
        << name;
    // Not vacuous: the step changed the parameters.
    EXPECT_GT(worst_ratio({got[0]}, {in[0]}, 1e-5), 1e-3) << name;
  }
}

// 20 Adam steps of the mlp at batch 32 on noise: the losses agree step by step with cpu, and
// the parameters read back from the device agree at the end.
TEST(EnginesTrain, XlaTwentyStepsMatchCpu) {
  REQUIRE_ENGINE(xla, "xla");
  SpecFile spec = resolve_net("mlp");
  TrainConfig c = *spec.train;
  c.batchSize = 32;
  const ParamTable t = build_param_table(spec.net);
  auto cpu = exec::make_backend("cpu");
  Stepper sc(spec.net, c, *cpu), sx(spec.net, c, *xla);
  Evaluator ev(spec.net, 32, *cpu);
  auto init = init_params(t, InitKind::he, 1);
  TrainState a = make_state(init, sc.state_manifest(), ev.manifest());
  TrainState b = make_state(init, sx.state_manifest(), ev.manifest());
  double first = 0, last = 0;
  for (int64_t step = 1; step <= 20; ++step) {
    Tensor x = uniform_noise({32, 1, 28, 28}, 100 + static_cast<uint64_t>(step % 4));
    Tensor y = labels(32, 10, step % 4);
    const double la = sc.step(a, {x}, {y}, 1e-3, step);
    const double lb = sx.step(b, {x}, {y}, 1e-3, step);
    EXPECT_NEAR(lb, la, 1e-4 * std::abs(la)) << "step " << step;
    if (step == 1) first = la;
    last = la;
  }
  EXPECT_LT(last, 0.5 * first);  // it learned the 4 repeated batches
  sc.sync(a);
  sx.sync(b);
  const Agreement r = agreement(b.params, a.params);
  std::cout << "after 20 steps: max |xla - cpu| " << r.max_abs << ", fraction off " << r.frac_off
            << "\n";
  EXPECT_LT(r.max_abs, 5e-3);  // 20 Adam steps of at most lr = 1e-3 each, mostly identical
  EXPECT_LT(r.frac_off, 1e-2);
  EXPECT_GT(worst_ratio(a.params, init, 1e-3), 0.1);
}

TEST(EnginesTrain, IreeTrainStepEqualsCpu) {
  REQUIRE_ENGINE(iree, "iree");
  const StepCase sc = step_case("mlp");
  std::vector<Tensor> got;
  try {
    got = iree->load(sc.mod)->run("main", sc.in);
  } catch (const Error& x) {
    if (std::string(x.what()).find("is not installed") != std::string::npos)
      GTEST_SKIP() << x.what();
    throw;
  }
  const Agreement r = agreement(got, sc.want);
  std::cout << "iree: max |iree - cpu| " << r.max_abs << ", fraction off " << r.frac_off << "\n";
  EXPECT_LE(r.max_abs, 1e-3);  // as on xla (Adam's first step near |g| = ε)
  EXPECT_LT(r.frac_off, 1e-3);
}

}  // namespace
}  // namespace netspec::train
