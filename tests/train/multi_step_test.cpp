// K train steps per call (emit/multi_step.h, train/multi_stepper.h): the K-step module on the cpu
// and ref executors gives K single steps' state, losses and BN statistics (also for n < K steps);
// `train` with K steps per call on cpu gives the one-step run's per-step losses and parameters
// (tail batch, BN, dropout masks, lr schedule included), also when stopped and resumed after every
// call; through IREE (skipped without its tools) the same run matches cpu within float tolerance;
// what K > 1 cannot do is refused.
#include "emit/multi_step.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "data/idx_fixture.h"
#include "emit/emit.h"
#include "exec/backend.h"
#include "exec/iree/iree_tools.h"
#include "layers/param_table.h"
#include "tests/engine_util.h"
#include "tests/train/train_test_util.h"
#include "train/signals.h"
#include "train/stepper.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

using test_util::scaled_diff;

// kBnNet with Adam, classifier dropout 0.25 and a cosine schedule: state, step counter, BN
// statistics, a mask input and a changing lr all cross the K-step boundary.
SpecFile net_spec(int epochs, int batch) {
  SpecFile s = test_util::bn_spec(epochs, batch, false);
  s.train->optimizer = OptimizerKind::adam;
  s.train->learningRate = 3e-3;
  s.train->dropout = 0.25;
  s.train->schedule = Schedule::cosine;
  return s;
}

struct Inputs {
  std::vector<Tensor> x, y;
};
Inputs batches(int n, int64_t b) {
  Inputs in;
  for (int j = 0; j < n; ++j) {
    in.x.push_back(test_util::uniform_noise({b, 1, 28, 28}, 100 + j));
    Tensor y(DType::kI32, {b});
    for (int64_t i = 0; i < b; ++i) y.data<int32_t>()[i] = static_cast<int32_t>((i * 7 + j) % 10);
    in.y.push_back(std::move(y));
  }
  return in;
}

// One step's inputs in manifest order.
std::vector<Tensor> step_inputs(const emit::Manifest& m, const std::vector<Tensor>& state,
                                const Tensor& x, const Tensor& y, float lr, int64_t step) {
  std::vector<Tensor> in;
  size_t si = 0, mi = 0;
  for (const auto& ti : m.inputs) {
    if (ti.role == "param" || ti.role == "optimizer_state")
      in.push_back(state.at(si++));
    else if (ti.role == "input")
      in.push_back(x);
    else if (ti.role == "label")
      in.push_back(y);
    else if (ti.name == "lr")
      in.push_back(Tensor::scalar_f32(lr));
    else if (ti.name == "step")
      in.push_back(Tensor::from<int64_t>(DType::kI32, {}, {step}));
    else if (ti.role == "mask")
      in.push_back(draw_keep_mask(ti, 9, step, mi++));
  }
  return in;
}

// The K-step module run once with n steps == n runs of the one-step module, on `backend`.
void check_module(const std::string& backend, int64_t k, int n) {
  const SpecFile s = net_spec(1, 8);
  const NetSpec& net = s.net;
  const ParamTable t = build_param_table(net);
  emit::Emitted one =
      emit::emit_module(net, t, ModuleKind::train_step, emit::EmitOptions::from_train(*s.train, 8));
  emit::Emitted many = emit::emit_multi_step(one, k);
  auto be = exec::make_backend(backend);
  auto exe1 = be->load(std::shared_ptr<const hlo::Module>(std::move(one.module)));
  auto exek = be->load(std::shared_ptr<const hlo::Module>(std::move(many.module)));
  const emit::Manifest &m1 = one.manifest, &mk = many.manifest;

  std::vector<Tensor> state = init_params(t, InitKind::he, 4);
  const size_t np = state.size();
  for (const auto& ti : m1.inputs)
    if (ti.role == "optimizer_state") state.emplace_back(ti.dtype, ti.shape);
  const Inputs data = batches(n, 8);
  const std::vector<float> lrs{3e-3f, 2e-3f, 1e-3f, 5e-4f};

  // n single steps; the losses and BN statistics of each.
  std::vector<Tensor> st = state;
  std::vector<double> losses;
  std::vector<std::vector<Tensor>> stats(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    std::vector<Tensor> out =
        exe1->run("main", step_inputs(m1, st, data.x[j], data.y[j], lrs[j], 1 + j));
    size_t si = 0;
    for (size_t o = 0; o < out.size(); ++o) {
      const auto& role = m1.outputs[o].role;
      if (role == "param" || role == "optimizer_state")
        st.at(si++) = out[o];
      else if (role == "loss")
        losses.push_back(out[o].as_double(0));
      else if (role == "bn_batch_stat")
        stats[j].push_back(out[o]);
    }
  }

  // One call of the K-step module.
  std::vector<Tensor> in;
  size_t si = 0, mi = 0;
  for (size_t a = 0; a < mk.inputs.size(); ++a) {
    const auto& ti = mk.inputs[a];
    if (ti.role == "param" || ti.role == "optimizer_state") {
      in.push_back(state.at(si++));
      continue;
    }
    if (ti.name == "n_steps") {
      in.push_back(Tensor::from<int64_t>(DType::kI32, {}, {n}));
      continue;
    }
    Tensor stk(ti.dtype, ti.shape);  // rows >= n stay 0
    const size_t row = stk.nbytes() / static_cast<size_t>(k);
    for (int j = 0; j < n; ++j) {
      Tensor r = ti.role == "input"   ? data.x[j]
                 : ti.role == "label" ? data.y[j]
                 : ti.name == "lr"    ? Tensor::scalar_f32(lrs[j])
                 : ti.name == "step"  ? Tensor::from<int64_t>(DType::kI32, {}, {1 + j})
                                      : draw_keep_mask(m1.inputs[a], 9, 1 + j, mi);
      ASSERT_EQ(r.nbytes(), row) << ti.name;
      std::memcpy(static_cast<uint8_t*>(stk.raw()) + j * row, r.raw(), row);
    }
    if (ti.role == "mask") ++mi;
    in.push_back(std::move(stk));
  }
  ASSERT_GT(mi, 0u);  // the dropout mask went through the stack
  std::vector<Tensor> out = exek->run("main", in);
  std::vector<Tensor> got_state;
  size_t q = 0;
  for (size_t o = 0; o < out.size(); ++o) {
    const auto& ti = mk.outputs[o];
    if (ti.role == "param" || ti.role == "optimizer_state") {
      got_state.push_back(out[o]);
    } else if (ti.role == "loss") {
      ASSERT_EQ(out[o].shape(), (Shape{k}));
      for (int j = 0; j < n; ++j)
        EXPECT_NEAR(out[o].as_double(j), losses[j], 1e-6 * (1 + std::abs(losses[j]))) << j;
      for (int64_t j = n; j < k; ++j) EXPECT_EQ(out[o].as_double(j), 0.0) << j;  // not run
    } else if (ti.role == "bn_batch_stat") {
      for (int j = 0; j < n; ++j)
        for (int64_t e = 0; e < stats[j][q].numel(); ++e)
          EXPECT_NEAR(out[o].as_double(j * stats[j][q].numel() + e), stats[j][q].as_double(e), 1e-6)
              << ti.name << " step " << j;
      ++q;
    }
  }
  ASSERT_EQ(got_state.size(), st.size());
  EXPECT_GT(scaled_diff(st, state), 1e-4);      // the steps moved the params
  EXPECT_LE(scaled_diff(got_state, st), 1e-6);  // ... and the K-step call moved them the same
  EXPECT_GT(np, 0u);
}

TEST(MultiStep, ModuleEqualsSingleStepsCpu) { check_module("cpu", 3, 3); }
TEST(MultiStep, ModuleEqualsSingleStepsRef) { check_module("ref", 3, 3); }
TEST(MultiStep, ModuleRunsFewerStepsThanK) { check_module("cpu", 4, 2); }

TEST(MultiStep, RefusesBadWrap) {
  const SpecFile s = net_spec(1, 8);
  emit::Emitted fwd = emit::emit_module(s.net, ModuleKind::forward, emit::EmitOptions{});
  EXPECT_THROW(emit::emit_multi_step(fwd, 3), Error);
  emit::Emitted one =
      emit::emit_module(s.net, ModuleKind::train_step, emit::EmitOptions::from_train(*s.train, 8));
  EXPECT_THROW(emit::emit_multi_step(one, 0), Error);
}

// 320 samples at batch 96: three full batches and a tail of 32 per epoch.
const Splits& synthetic() {
  static Splits s = [] {
    const std::string d = test_util::tmpdir("multistep", "data");
    test::write_synthetic_split(d, "train", 320, 31);
    test::write_synthetic_split(d, "t10k", 64, 32);
    return load_dataset(DatasetKind::fashionMnist, d, 0);
  }();
  return s;
}

std::vector<double> step_losses(const std::string& run) {
  std::vector<double> v;
  std::ifstream f(run + "/steps.jsonl");
  for (std::string line; std::getline(f, line);)
    v.push_back(nlohmann::json::parse(line).at("train_loss").get<double>());
  return v;
}

struct RunOut {
  TrainResult r;
  std::string dir, log;
};

RunOut train(const std::string& name, const std::string& backend, int k,
             SpecFile spec = net_spec(2, 96)) {
  RunOut x;
  x.dir = test_util::tmpdir("multistep", name);
  TrainOptions o;
  o.run_dir = x.dir;
  o.backend = backend;
  o.steps_per_call = k;
  o.backend_options.compile_cache = x.dir + "/compile-cache";  // iree: never the user's cache
  std::ostringstream log;
  o.log = &log;
  x.r = run_training(spec, synthetic(), o);
  x.log = log.str();
  return x;
}

// Per-step losses within rel, every epoch's accuracy equal, final params within tol.
void expect_same_run(const RunOut& got, const RunOut& want, double rel, double tol) {
  ASSERT_EQ(want.r.steps, 8);  // 2 epochs x (3 full batches + the tail of 32)
  ASSERT_EQ(got.r.steps, 8);
  const auto a = step_losses(got.dir), b = step_losses(want.dir);
  ASSERT_EQ(a.size(), 8u);
  ASSERT_EQ(b.size(), 8u);
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], rel * std::abs(b[i])) << "step " << i + 1;
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  }
  std::cout << "per-step loss: max relative difference " << worst << "; params: scaled difference "
            << scaled_diff(got.r.params, want.r.params) << "\n";
  ASSERT_EQ(got.r.epochs.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_NEAR(got.r.epochs[e].train_loss, want.r.epochs[e].train_loss, rel) << e;
    EXPECT_EQ(got.r.epochs[e].val.top1, want.r.epochs[e].val.top1) << e;
  }
  EXPECT_GT(scaled_diff(want.r.params,
                        init_params(build_param_table(net_spec(1, 96).net), InitKind::he, 3)),
            1e-3);  // it trained
  EXPECT_LE(scaled_diff(got.r.params, want.r.params), tol);
}

TEST(MultiStep, TrainKStepsPerCallEqualsOneStepOnCpu) {
  const RunOut one = train("one", "cpu", 1), many = train("many", "cpu", 3);
  EXPECT_NE(many.log.find("cpu: 3 train steps per call"), std::string::npos) << many.log;
  expect_same_run(many, one, 1e-5, 1e-5);
}

// SIGINT-style stop after every call of a 2-steps-per-call run (calls of 2 and 1 full batches and
// the tail per epoch), resumed each time: the uninterrupted one-step run's parameters and losses.
TEST(MultiStep, StopAfterEveryCallAndResumeMatchesUninterrupted) {
  const RunOut full = train("full", "cpu", 1);
  const std::string dir = test_util::tmpdir("multistep", "stops");
  std::vector<int64_t> steps;
  TrainResult r;
  std::vector<EpochMetrics> epochs;
  do {
    request_stop(true);  // the loop finishes the call, saves `last` and returns
    TrainOptions o;
    o.run_dir = dir;
    o.steps_per_call = 2;
    r = run_training(net_spec(2, 96), synthetic(), o);
    request_stop(false);
    for (const auto& m : r.epochs) epochs.push_back(m);
    steps.push_back(r.steps);
  } while (r.interrupted && steps.size() < 20);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(steps, (std::vector<int64_t>{2, 3, 4, 6, 7, 8}));
  EXPECT_TRUE(test_util::same_bits(r.params, full.r.params));
  ASSERT_EQ(epochs.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_EQ(epochs[e].train_loss, full.r.epochs[e].train_loss) << e;
    EXPECT_EQ(epochs[e].val.loss, full.r.epochs[e].val.loss) << e;
  }
  EXPECT_EQ(step_losses(dir), step_losses(full.dir));
}

TEST(MultiStep, RefusesWhatNeedsParamsBetweenSteps) {
  SpecFile accum = net_spec(1, 96);
  accum.train->gradAccumSteps = 2;
  accum.train->dropout = 0;
  EXPECT_THROW(train("accum", "cpu", 2, accum), Error);
  SpecFile ema = net_spec(1, 96);
  ema.train->useEMA = true;
  try {
    train("ema", "cpu", 2, ema);
    ADD_FAILURE() << "emaDecay with 2 steps per call was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("useEMA"), std::string::npos) << e.what();
  }
}

// Through IREE's tools (2 steps per call: calls of 2 and 1 full batches, then the tail module):
// the cpu backend's run within float tolerance (reduction order differs).
TEST(MultiStep, IreeTrainsLikeCpu) {
  REQUIRE_ENGINE(iree, "iree");
  for (const char* tool : {"iree-compile", "iree-run-module"}) try {
      exec::iree::find_tool(tool);
    } catch (const Error& e) {
      GTEST_SKIP() << "IREE's tools are not installed (scripts/install-engines.sh): " << e.what();
    }
  const RunOut cpu = train("cpu1", "cpu", 1), ir = train("iree", "iree", 2);
  EXPECT_NE(ir.log.find("iree: 2 train steps per call (K-step module); evaluation on the cpu "
                        "backend"),
            std::string::npos)
      << ir.log;
  expect_same_run(ir, cpu, 1e-5, 2e-5);  // measured: 2e-7 and 4e-6
}

}  // namespace
}  // namespace netspec::train
