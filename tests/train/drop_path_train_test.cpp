// Training with stochastic depth and classifier dropout: the host-drawn keep masks are Bernoulli
// (1 - p) / (1 - p) and a function of (seed, step) only, so a short run is reproducible bit for
// bit, a different seed trains differently, and the loss stays finite.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <tuple>

#include "core/error.h"
#include "emit/emit.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "tests/train/train_test_util.h"
#include "train/checkpoint.h"
#include "train/stepper.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

NetSpec tiny_convnext() {
  return NetBuilder("convnext")
      .input(2, 4, 4)
      .ln_eps(1e-6)
      .add(ConvNextStem{2, 4, 2})
      .add(ConvNextStage{4, 3})
      .add(ConvNextDownsample{4, 6})
      .add(Flatten{})
      .add(Dense{6, 3})
      .build();
}

Tensor data(const Shape& s, uint64_t seed) { return test_util::uniform_noise(s, seed); }

struct TrainRun {
  std::vector<double> losses;
  std::vector<Tensor> params;
};

TrainRun train(int seed, double drop_path, double dropout, int steps = 4) {
  NetSpec net = tiny_convnext();
  TrainConfig c;
  c.batchSize = 8;
  c.seed = seed;
  c.optimizer = OptimizerKind::adam;
  c.learningRate = 1e-2;
  c.dropPath = drop_path;
  c.dropout = dropout;
  auto be = exec::make_backend("cpu");
  Stepper st(net, c, *be);
  emit::Emitted ev = emit::emit_module(net, ModuleKind::eval, emit::EmitOptions::from_train(c, 8));
  TrainState s = make_state(init_params(build_param_table(net), InitKind::he, 5),
                            st.state_manifest(), ev.manifest);
  TrainRun r;
  for (int k = 1; k <= steps; ++k) {
    Tensor x = data({8, 2, 4, 4}, 100 + k);
    Tensor y = Tensor::from<int32_t>(DType::kI32, {8}, {0, 1, 2, 0, 1, 2, 0, 1});
    r.losses.push_back(st.step(s, {x}, {y}, 1e-2, k));
  }
  st.sync(s);
  r.params = s.params;
  return r;
}

bool same(const TrainRun& a, const TrainRun& b) {
  if (a.losses != b.losses) return false;
  for (size_t i = 0; i < a.params.size(); ++i)
    for (int64_t e = 0; e < a.params[i].numel(); ++e)
      if (a.params[i].data<float>()[e] != b.params[i].data<float>()[e]) return false;
  return true;
}

TEST(DropPathTrain, ShortRunIsReproducibleBitForBitAndFinite) {
  TrainRun a = train(1, 0.5, 0.3), b = train(1, 0.5, 0.3);
  EXPECT_TRUE(same(a, b));
  for (double l : a.losses) EXPECT_TRUE(std::isfinite(l)) << l;
  // The masks matter: another seed, or no drop at all, gives another trajectory.
  EXPECT_FALSE(same(a, train(2, 0.5, 0.3)));
  EXPECT_FALSE(same(a, train(1, 0, 0)));
}

TEST(DropPathTrain, KeepMaskIsBernoulliScaledAndDeterministic) {
  emit::TensorInfo ti{"m", {20000}, DType::kF32, "mask", 0, 0.25};
  Tensor m = draw_keep_mask(ti, 7, 3, 1);
  int64_t zeros = 0;
  for (int64_t e = 0; e < m.numel(); ++e) {
    const float v = m.data<float>()[e];
    if (v == 0)
      ++zeros;
    else
      EXPECT_EQ(v, static_cast<float>(1 / 0.75)) << e;
  }
  // Bernoulli(0.25) over 20000 draws: sd ≈ 0.003, so 0.25 ± 0.015 is a 5-sigma band.
  EXPECT_NEAR(static_cast<double>(zeros) / 20000, 0.25, 0.015);
  Tensor same_m = draw_keep_mask(ti, 7, 3, 1);
  EXPECT_EQ(std::memcmp(m.data<float>(), same_m.data<float>(), 20000 * sizeof(float)), 0);
  for (auto [seed, step, index] : {std::tuple{8, 3, 1}, {7, 4, 1}, {7, 3, 2}}) {
    Tensor o = draw_keep_mask(ti, seed, step, index);
    EXPECT_NE(std::memcmp(m.data<float>(), o.data<float>(), 20000 * sizeof(float)), 0);
  }
  ti.rate = 0;  // the first block of the ramp: always kept, scale 1
  Tensor ones = draw_keep_mask(ti, 7, 3, 0);
  for (int64_t e = 0; e < ones.numel(); ++e) ASSERT_EQ(ones.data<float>()[e], 1.0f);
}

// Under gradient accumulation the forward / vjp modules take the drop-path masks (they were
// refused before): two micro-batches of 4 with dropPath train differently from dropPath 0, and
// the same seed reproduces the run (tests/train/accum_dropout_test.cpp checks the values).
TEST(DropPathTrain, GradientAccumulationAppliesDropPath) {
  auto run = [](double drop_path) {
    NetSpec net = tiny_convnext();
    TrainConfig c;
    c.batchSize = 4;
    c.gradAccumSteps = 2;
    c.dropPath = drop_path;
    c.optimizer = OptimizerKind::sgd;
    auto be = exec::make_backend("cpu");
    Stepper st(net, c, *be);
    emit::Emitted ev =
        emit::emit_module(net, ModuleKind::eval, emit::EmitOptions::from_train(c, 4));
    TrainState s = make_state(init_params(build_param_table(net), InitKind::he, 5),
                              st.state_manifest(), ev.manifest);
    Tensor y = Tensor::from<int32_t>(DType::kI32, {4}, {0, 1, 2, 0});
    return st.step(s, {data({4, 2, 4, 4}, 1), data({4, 2, 4, 4}, 2)}, {y, y}, 1e-2, 1);
  };
  const double plain = run(0), dropped = run(0.5);
  EXPECT_NE(plain, dropped);
  EXPECT_EQ(dropped, run(0.5));
}

}  // namespace
}  // namespace netspec::train
