// The loop's guards (issue 25): a non-finite validation loss is divergence and stops before
// `last` or any metrics row is written; evaluation stops after its current step when asked;
// checkpoint metadata is validated field by field.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/safetensors.h"
#include "data/idx_fixture.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "tests/train/train_test_util.h"
#include "train/checkpoint.h"
#include "train/divergence.h"
#include "train/evaluate.h"
#include "train/signals.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;

const Splits& synthetic() {
  static Splits s =
      test_util::synthetic_fashion(test_util::tmpdir("hard_loop", "data"), 128, 96, 31);
  return s;
}

SpecFile small(int epochs) { return test_util::small_mlp_spec(epochs); }

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

std::vector<std::string> lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);) v.push_back(l);
  return v;
}

TEST(HardeningLoop, ANonFiniteValidationLossStopsBeforeSavingLast) {
  const std::string run = test_util::tmpdir("hard_loop", "nan_val");
  run_training(small(1), synthetic(), {run, "cpu"});
  const std::string last = run + "/last.safetensors";
  const std::string before = slurp(last);
  ASSERT_EQ(lines(run + "/metrics.jsonl").size(), 1u);
  Splits bad = synthetic();
  // The idx split is bytes normalised by its value table: pixel 5's byte value reads as NaN, so
  // those samples' logits and the mean are NaN.
  ASSERT_EQ(bad.test.x.dtype(), DType::kUI8);
  ASSERT_EQ(bad.test.pixel_values.size(), 256u);
  bad.test.pixel_values[bad.test.x.data<uint8_t>()[5]] = std::numeric_limits<float>::quiet_NaN();
  try {
    run_training(small(2), bad, {run, "cpu"});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[train] diverged: the validation loss after epoch 2 "
                                         "is nan; stopped before saving"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(slurp(last), before) << "`last` was overwritten with the diverged model";
  EXPECT_EQ(lines(run + "/metrics.jsonl").size(), 1u);
  EXPECT_FALSE(fs::exists(run + "/best.safetensors") &&
               read_safetensors(run + "/best.safetensors").metadata.at("epoch") == "2");
}

TEST(HardeningLoop, DivergenceGuardStatesItsFactor) {
  DivergenceGuard g;
  g.check_step(2.3, 1, 1, 1);
  g.check_step(2.3 * kDivergenceFactor, 2, 1, 2);  // at the limit: still fine
  EXPECT_THROW(g.check_step(2.3 * kDivergenceFactor * 1.01, 3, 1, 3), Error);
  EXPECT_THROW(g.check_step(std::nan(""), 3, 1, 3), Error);
  DivergenceGuard tiny;  // a first loss below 1 is floored at 1
  tiny.check_step(1e-6, 1, 1, 1);
  tiny.check_step(50, 2, 1, 2);
  EXPECT_THROW(tiny.check_step(101, 3, 1, 3), Error);
  EXPECT_THROW(tiny.check_eval(std::numeric_limits<double>::infinity(), 1), Error);
}

TEST(HardeningLoop, EvaluationStopsAfterTheCurrentStepWhenAsked) {
  SpecFile s = small(1);
  auto be = exec::make_backend("cpu");
  ParamTable t = build_param_table(s.net);
  Evaluator ev(s.net, 32, *be);
  TrainState st = make_state(init_params(t, InitKind::he, 1), {}, ev.manifest());
  int asked = 0;
  EvalMetrics m = ev.run(st.params, st.running, synthetic().test, [&] { return ++asked == 2; });
  EXPECT_TRUE(m.interrupted);
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(m.count, 64);  // two batches of 32 of the 96
  EvalMetrics full = ev.run(st.params, st.running, synthetic().test, [] { return false; });
  EXPECT_FALSE(full.interrupted);
  EXPECT_EQ(full.count, 96);
}

// A stop requested at an epoch's last step lands in the evaluation: it ends after its current
// step, the epoch's training is saved in `last`, its row has no validation fields.
TEST(HardeningLoop, AStopDuringEvaluationEndsItAfterTheCurrentStep) {
  const std::string run = test_util::tmpdir("hard_loop", "stop_eval");
  SpecFile s = small(3);
  s.train->batchSize = 64;
  s.train->gradAccumSteps = 2;  // 128 samples: one update per epoch; eval batches of 64 of 96
  std::ostringstream log;
  request_stop(true);
  TrainResult r = run_training(s, synthetic(), {run, "cpu", &log});
  request_stop(false);
  EXPECT_TRUE(r.interrupted);
  ASSERT_EQ(r.epochs.size(), 1u);
  EXPECT_FALSE(r.epochs[0].evaluated);
  EXPECT_TRUE(r.epochs[0].val.interrupted);
  EXPECT_EQ(r.epochs[0].val.count, 64);  // the first eval step only
  EXPECT_NE(log.str().find("interrupted during the evaluation of epoch 1"), std::string::npos)
      << log.str();
  EXPECT_EQ(read_safetensors(run + "/last.safetensors").metadata.at("epoch"), "1");
  auto rows = lines(run + "/metrics.jsonl");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].find("\"val_loss\": null"), std::string::npos) << rows[0];
  EXPECT_FALSE(fs::exists(run + "/best.safetensors"));
}

// A checkpoint holding a NaN or inf (a corrupt file) is refused at load naming the file and the
// tensor, not resumed into a "diverged ... lower the learning rate" later.
TEST(HardeningLoop, ANonFiniteTensorInACheckpointIsNamedAtLoad) {
  const std::string dir = test_util::tmpdir("hl", "nonfinite");
  SpecFile spec = parse_spec(test_util::kSmallMlp, "small");
  const ParamTable t = build_param_table(spec.net);
  TrainState s = make_state(init_params(t, InitKind::he, 1), {}, {});
  const std::string path = dir + "/last.safetensors";
  save_checkpoint(path, t, s, "small");
  TrainState ok = make_state(init_params(t, InitKind::he, 2), {}, {});
  load_checkpoint(path, t, ok);  // finite: loads
  EXPECT_EQ(ok.params[1].data<float>()[3], s.params[1].data<float>()[3]);
  s.params[1].data<float>()[3] = std::numeric_limits<float>::infinity();
  save_checkpoint(path, t, s, "small");
  try {
    load_checkpoint(path, t, ok);
    ADD_FAILURE() << "an inf weight was loaded";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("tensor '" + t.params[1].name + "' holds inf at element 3"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace netspec::train
