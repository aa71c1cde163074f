// Gradient accumulation for every lowered loss: 2 micro-batches of B (forward, the emitted
// loss-gradient module weighted n_k/N, vjp, one optimizer call) give the same loss and the same
// parameters as the fused train step on the batch of 2B, for classCE (label smoothing), focal,
// softLabelCE, bce, floatTargetMse and tokenCE, and for a short last update (B + B/2).
#include <gtest/gtest.h>

#include <iostream>

#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "train/stepper.h"
#include "train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

using test_util::uniform_noise;

Tensor rows(const Tensor& t, int64_t from, int64_t n) {
  Shape s = t.shape();
  const int64_t row = t.numel() / s[0];
  s[0] = n;
  Tensor r(t.dtype(), s);
  std::memcpy(r.raw(), static_cast<const uint8_t*>(t.raw()) + from * row * dtype_size(t.dtype()),
              static_cast<size_t>(n * row) * dtype_size(t.dtype()));
  return r;
}

struct LossCase {
  LossKind kind;
  const char* net;
  Tensor x, y;  // 2B samples
};

const char* kMlp = R"({"name": "acc", "inputChannels": 6, "inputHeight": 0, "inputWidth": 0,
  "layers": [{"kind": "dense", "in": 6, "out": 8, "act": "relu"}, {"kind": "dense", "in": 8, "out": 5}]})";
const char* kTok = R"({"name": "tok", "inputChannels": 8, "inputHeight": 0, "inputWidth": 0,
  "layers": [{"kind": "tokenPositionEmbed", "vocab": 7, "seqLen": 8, "dModel": 8},
  {"kind": "lmHead", "dModel": 8, "vocab": 7, "seqLen": 8}]})";

LossCase make_case(LossKind k, int64_t n) {
  LossCase c{k, k == LossKind::tokenCE ? kTok : kMlp, {}, {}};
  if (k == LossKind::tokenCE) {
    std::vector<int32_t> ids(static_cast<size_t>(n * 8)), lab(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = (i * 5 + 3) % 7, lab[i] = (i * 3 + 1) % 7;
    c.x = Tensor::from<int32_t>(DType::kI32, {n, 8}, ids);
    c.y = Tensor::from<int32_t>(DType::kI32, {n, 8}, lab);
    return c;
  }
  c.x = uniform_noise({n, 6}, 11);
  if (k == LossKind::classCE || k == LossKind::focal) {
    std::vector<int32_t> lab(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) lab[i] = static_cast<int32_t>((i * 7 + 2) % 5);
    c.y = Tensor::from<int32_t>(DType::kI32, {n}, lab);
  } else if (k == LossKind::floatTargetMse) {
    c.y = uniform_noise({n, 5}, 12);
  } else {  // softLabelCE: rows summing to 1; bce: targets in [0, 1]
    Tensor u = uniform_noise({n, 5}, 13);
    for (int64_t i = 0; i < n; ++i) {
      float* r = u.data<float>() + i * 5;
      float s = 0;
      for (int j = 0; j < 5; ++j) s += (r[j] = 0.5f * (r[j] + 1));
      if (k == LossKind::softLabelCE)
        for (int j = 0; j < 5; ++j) r[j] /= s;
    }
    c.y = u;
  }
  return c;
}

TEST(GradAccum, EveryLossEqualsOneBigBatch) {
  const int64_t b = 8;
  for (LossKind k : {LossKind::classCE, LossKind::focal, LossKind::softLabelCE, LossKind::bce,
                     LossKind::floatTargetMse, LossKind::tokenCE}) {
    SCOPED_TRACE(std::string(enum_name(k)));
    LossCase lc = make_case(k, 2 * b);
    SpecFile s = parse_spec(lc.net, "acc");
    TrainConfig big;
    big.lossKind = k;
    big.optimizer = OptimizerKind::sgd;
    big.momentum = 0.9;
    big.batchSize = 2 * b;
    big.labelSmoothing = k == LossKind::classCE ? 0.1 : 0.0;
    TrainConfig acc = big;
    acc.batchSize = b;
    acc.gradAccumSteps = 2;
    auto be = exec::make_backend("cpu");
    ParamTable t = build_param_table(s.net);
    Stepper sb(s.net, big, *be, &t), sa(s.net, acc, *be, &t);
    Evaluator ev(s.net, b, *be, &t);
    auto init = init_params(t, InitKind::he, 3);
    TrainState A = make_state(init, sb.state_manifest(), ev.manifest());
    TrainState B = make_state(init, sa.state_manifest(), ev.manifest());
    // Update 1: two full micro-batches; update 2: B + B/2 against the fused step on 3B/2.
    double la = sb.step(A, {lc.x}, {lc.y}, 0.1, 1);
    double lb = sa.step(B, {rows(lc.x, 0, b), rows(lc.x, b, b)},
                        {rows(lc.y, 0, b), rows(lc.y, b, b)}, 0.1, 1);
    EXPECT_NEAR(la, lb, 1e-5 * std::max(1.0, std::abs(la)));
    const int64_t h = b + b / 2;
    la = sb.step(A, {rows(lc.x, 0, h)}, {rows(lc.y, 0, h)}, 0.1, 2);
    lb = sa.step(B, {rows(lc.x, 0, b), rows(lc.x, b, b / 2)},
                 {rows(lc.y, 0, b), rows(lc.y, b, b / 2)}, 0.1, 2);
    EXPECT_NEAR(la, lb, 1e-5 * std::max(1.0, std::abs(la)));
    sb.sync(A);
    double worst = 0, moved = 0;
    for (size_t i = 0; i < A.params.size(); ++i)
      for (int64_t e = 0; e < A.params[i].numel(); ++e) {
        const double pa = A.params[i].data<float>()[e];
        worst = std::max(worst, std::abs(pa - B.params[i].data<float>()[e]));
        moved = std::max(moved, std::abs(pa - init[i].data<float>()[e]));
      }
    std::cout << "[ accum ] " << enum_name(k) << ": max |param diff| " << worst << ", moved "
              << moved << "\n";
    EXPECT_LT(worst, 2e-6) << "moved " << moved;
    EXPECT_GT(moved, 1e-3);  // the updates are far above the tolerance
  }
}

}  // namespace
}  // namespace netspec::train
