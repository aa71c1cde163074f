// Dropout and dropPath under gradient accumulation with replicas. The per-shard forward / vjp
// modules take the keep masks; micro-batch k's masks are drawn at its rows from (seed, step, k)
// and each replica takes its rows. Checked: K micro-batches x R replicas x b rows give the
// parameters and loss of one fused step on K·R·b rows fed the same masks (their concatenation
// over k) within 1e-6, on BN-free nets (an MLP with classifier dropout; a tiny ViT with dropPath
// and dropout); the masks differ between micro-batches, and reusing micro-batch 0's masks for
// every micro-batch gives a different update (so the accumulation used each one's own).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "emit/emit.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "train/data_parallel.h"
#include "train/stepper.h"
#include "train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

using test_util::uniform_noise;

const char* kMlp = R"({"name": "accd", "inputChannels": 6, "inputHeight": 0, "inputWidth": 0,
  "layers": [{"kind": "dense", "in": 6, "out": 16, "act": "relu"}, {"kind": "dense", "in": 16, "out": 5}]})";
const char* kVit = R"({"name": "vitd", "inputChannels": 1, "inputHeight": 8, "inputWidth": 8,
  "layers": [{"kind": "patchEmbed", "ic": 1, "dim": 8, "patch": 4, "nPatches": 4, "classToken": false},
  {"kind": "transformerEncoder", "dim": 8, "heads": 2, "mlpDim": 16, "nBlocks": 2, "meanToken": true},
  {"kind": "dense", "in": 8, "out": 5}]})";

Tensor labels(int64_t n) {
  std::vector<int32_t> lab(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) lab[i] = static_cast<int32_t>((i * 7 + 2) % 5);
  return Tensor::from<int32_t>(DType::kI32, {n}, lab);
}

// Rows of the tensors stacked along dim 0 (all f32 with equal trailing dims).
Tensor concat_rows(const std::vector<Tensor>& ts) {
  Shape s = ts.at(0).shape();
  s[0] = 0;
  for (const Tensor& t : ts) s[0] += t.shape().at(0);
  Tensor out(DType::kF32, s);
  float* o = out.data<float>();
  for (const Tensor& t : ts) {
    std::memcpy(o, t.data<float>(), static_cast<size_t>(t.numel()) * sizeof(float));
    o += t.numel();
  }
  return out;
}

// One fused train step at N rows with the given keep masks (manifest order): updates s.
double fused_step(exec::Executable& exe, const emit::Manifest& m, TrainState& s, const Tensor& x,
                  const Tensor& y, const std::vector<Tensor>& masks, double lr, int64_t step) {
  std::vector<Tensor> in;
  size_t pi = 0, si = 0, mi = 0;
  for (const auto& ti : m.inputs) {
    if (ti.role == "param")
      in.push_back(s.params[pi++]);
    else if (ti.role == "optimizer_state")
      in.push_back(s.opt[si++]);
    else if (ti.role == "input")
      in.push_back(x);
    else if (ti.role == "label")
      in.push_back(y);
    else if (ti.name == "lr")
      in.push_back(Tensor::scalar_f32(static_cast<float>(lr)));
    else if (ti.name == "step")
      in.push_back(Tensor::from<int64_t>(DType::kI32, {}, {step}));
    else if (ti.role == "mask")
      in.push_back(masks.at(mi++));
  }
  EXPECT_EQ(mi, masks.size());
  std::vector<Tensor> out = exe.run("main", in);
  pi = si = 0;
  double loss = 0;
  for (size_t k = 0; k < m.outputs.size(); ++k) {
    if (m.outputs[k].role == "param") s.params[pi++] = out[k];
    if (m.outputs[k].role == "optimizer_state") s.opt[si++] = out[k];
    if (m.outputs[k].role == "loss") loss = out[k].as_double(0);
  }
  return loss;
}

struct Case {
  const char* spec;
  Shape x;  // per-sample input shape
  double drop_path, dropout;
  size_t n_masks;  // keep-mask inputs the modules take
};

void check_equivalence(const Case& c, int K, int R) {
  const int64_t b = 4;  // rows per replica shard
  const int64_t N = K * R * b;
  SpecFile s = parse_spec(c.spec, "accd");
  TrainConfig acc;
  acc.optimizer = OptimizerKind::sgd;
  acc.momentum = 0.9;
  acc.batchSize = static_cast<int>(R * b);
  acc.gradAccumSteps = K;
  acc.dropPath = c.drop_path;
  acc.dropout = c.dropout;
  acc.seed = 11;
  TrainConfig big = acc;
  big.batchSize = static_cast<int>(N);
  big.gradAccumSteps = 1;
  auto be = exec::make_backend("cpu");
  ParamTable t = build_param_table(s.net);
  DataParallel dp;
  dp.replicas = R;
  Stepper sa(s.net, acc, *be, &t, dp), sb(s.net, big, *be, &t);
  emit::Emitted fe =
      emit::emit_module(s.net, t, ModuleKind::train_step, emit::EmitOptions::from_train(big, N));
  auto fused = be->load(std::shared_ptr<const hlo::Module>(std::move(fe.module)));
  // The micro-batch masks at R·b rows (what the stepper draws, before it cuts them per replica).
  const std::vector<emit::TensorInfo> infos =
      emit::train_masks(s.net, t, emit::EmitOptions::from_train(acc, R * b));
  ASSERT_EQ(infos.size(), c.n_masks);
  Evaluator ev(s.net, b, *be, &t);
  auto init = init_params(t, InitKind::he, 3);
  TrainState A = make_state(init, sb.state_manifest(), ev.manifest());
  TrainState B = make_state(init, sa.state_manifest(), ev.manifest());
  TrainState C = make_state(init, sb.state_manifest(), ev.manifest());  // micro 0's masks only
  Shape xs_shape{N};
  xs_shape.insert(xs_shape.end(), c.x.begin(), c.x.end());
  for (int step = 1; step <= 2; ++step) {
    Tensor x = uniform_noise(xs_shape, 10 + static_cast<uint64_t>(step)), y = labels(N);
    std::vector<Tensor> xs, ys;
    for (int k = 0; k < K; ++k) {
      xs.push_back(shard_rows(x, K, k));
      ys.push_back(shard_rows(y, K, k));
    }
    std::vector<Tensor> same, reused;  // per mask: micro-batches 0..K-1 stacked; micro 0 K times
    for (size_t i = 0; i < infos.size(); ++i) {
      std::vector<Tensor> per_k, first(static_cast<size_t>(K));
      for (int k = 0; k < K; ++k) per_k.push_back(draw_keep_mask(infos[i], 11, step, i, k));
      for (int k = 0; k < K; ++k) first[static_cast<size_t>(k)] = per_k[0];
      // Masks drop something and differ from one micro-batch to the next (the ramp's first
      // block has rate 0: all ones).
      if (infos[i].rate > 0) {
        double zeros = 0, differ = 0;
        for (int64_t e = 0; e < per_k[0].numel(); ++e) {
          zeros += per_k[0].as_double(e) == 0;
          differ += per_k[0].as_double(e) != per_k[1].as_double(e);
        }
        EXPECT_GT(zeros, 0) << infos[i].name;
        EXPECT_GT(differ, 0) << infos[i].name;
      }
      same.push_back(concat_rows(per_k));
      reused.push_back(concat_rows(first));
    }
    const double la = fused_step(*fused, sb.state_manifest(), A, x, y, same, 0.05, step);
    fused_step(*fused, sb.state_manifest(), C, x, y, reused, 0.05, step);
    const double lb = sa.step(B, xs, ys, 0.05, step);
    EXPECT_NEAR(la, lb, 1e-6 * (1 + std::abs(la)));
  }
  EXPECT_LT(test_util::scaled_diff(A.params, B.params), 1e-6);
  EXPECT_LT(test_util::scaled_diff(A.opt, B.opt), 1e-6);
  EXPECT_GT(test_util::scaled_diff(A.params, init),
            1e-3);  // the updates are far above the tolerance
  EXPECT_GT(test_util::scaled_diff(C.params, B.params),
            1e-4);  // each micro-batch used its own masks
}

TEST(AccumDropout, MlpDropoutKMicroBatchesTimesRReplicasEqualOneBigBatch) {
  for (auto [K, R] : {std::pair{2, 2}, std::pair{3, 2}, std::pair{2, 1}}) {
    SCOPED_TRACE(fmt::format("K={} R={}", K, R));
    check_equivalence({kMlp, {6}, 0, 0.3, 1}, K, R);
  }
}

TEST(AccumDropout, VitDropPathAndDropoutEqualOneBigBatch) {
  // 2 blocks x (attention, mlp) drop-path masks + the classifier's dropout mask.
  check_equivalence({kVit, {1, 8, 8}, 0.3, 0.2, 5}, 2, 2);
}

// The per-shard modules take the masks after x only when asked (EmitOptions::masked_forward);
// by default forward / vjp have none (the golden train steps stay as they were).
TEST(AccumDropout, ForwardAndVjpTakeMasksOnlyWhenMasked) {
  SpecFile s = parse_spec(kMlp, "accd");
  ParamTable t = build_param_table(s.net);
  emit::EmitOptions o;
  o.batch = 4;
  o.dropout = 0.5;
  for (ModuleKind kind : {ModuleKind::forward, ModuleKind::vjp}) {
    SCOPED_TRACE(enum_name(kind));
    auto count = [&](const emit::Manifest& m) {
      size_t n = 0;
      for (const auto& ti : m.inputs) n += ti.role == "mask";
      return n;
    };
    EXPECT_EQ(count(emit::emit_module(s.net, t, kind, o).manifest), 0u);
    o.masked_forward = true;
    emit::Manifest m = emit::emit_module(s.net, t, kind, o).manifest;
    o.masked_forward = false;
    ASSERT_EQ(count(m), 1u);
    const size_t np = t.params.size();
    EXPECT_EQ(m.inputs.at(np).name, "x");
    EXPECT_EQ(m.inputs.at(np + 1).name, "dropout");
    EXPECT_EQ(m.inputs.at(np + 1).shape, (Shape{4, 16}));
    EXPECT_EQ(m.inputs.at(np + 1).rate, 0.5);
  }
}

}  // namespace
}  // namespace netspec::train
