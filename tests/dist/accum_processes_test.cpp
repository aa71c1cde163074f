// Gradient accumulation across processes: 2 ranks (threads of this test, each joined to a real
// Gloo group over 127.0.0.1) x K = 2 micro-batches x b rows train the parameters and loss of one
// fused step on 2·2·b rows (BN-free net, 1e-6), and every rank ends with identical parameters.
#include <gtest/gtest.h>

#include <future>

#include "dist/process_group.h"
#include "dist/tcp_store.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "train/data_parallel.h"
#include "train/stepper.h"
#include "train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

const char* kMlp = R"({"name": "acc", "inputChannels": 6, "inputHeight": 0, "inputWidth": 0,
  "layers": [{"kind": "dense", "in": 6, "out": 8, "act": "relu"}, {"kind": "dense", "in": 8, "out": 5}]})";

TEST(AccumProcesses, TwoRanksTimesTwoMicroBatchesEqualOneBigBatch) {
  const int64_t b = 4, K = 2, R = 2, N = K * R * b;
  SpecFile s = parse_spec(kMlp, "acc");
  ParamTable t = build_param_table(s.net);
  TrainConfig big;
  big.optimizer = OptimizerKind::lamb;
  big.batchSize = static_cast<int>(N);
  TrainConfig acc = big;
  acc.batchSize = static_cast<int>(R * b);
  acc.gradAccumSteps = K;
  auto init = init_params(t, InitKind::he, 3);
  Tensor x = test_util::uniform_noise({N, 6}, 17);
  std::vector<int32_t> lab(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i) lab[i] = static_cast<int32_t>((i * 3 + 1) % 5);
  Tensor y = Tensor::from<int32_t>(DType::kI32, {N}, lab);
  std::vector<Tensor> xs, ys;  // every rank builds the same micro-batches and takes its shard
  for (int k = 0; k < K; ++k) {
    xs.push_back(shard_rows(x, K, k));
    ys.push_back(shard_rows(y, K, k));
  }
  auto be = exec::make_backend("cpu");
  Stepper sb(s.net, big, *be, &t);
  Evaluator ev(s.net, b, *be, &t);
  TrainState A = make_state(init, sb.state_manifest(), ev.manifest());
  const double la = sb.step(A, {x}, {y}, 0.05, 1);
  sb.sync(A);

  const int port = dist::free_loopback_port();
  auto rank = [&](int r) {
    dist::DistEnv e;
    e.rank = r;
    e.world = 2;
    e.master_port = port;
    e.token = "accum-test";
    auto group = dist::ProcessGroup::join(e, "{}");
    auto rbe = exec::make_backend("cpu");
    DataParallel dp{static_cast<int>(R), &group->comm(), r, 1};
    Stepper st(s.net, acc, *rbe, &t, dp);
    TrainState B = make_state(init, st.state_manifest(), ev.manifest());
    const double l = st.step(B, xs, ys, 0.05, 1);
    return std::pair{l, B.params};
  };
  auto r1 = std::async(std::launch::async, rank, 1);
  auto [l0, p0] = rank(0);
  auto [l1, p1] = r1.get();
  EXPECT_NEAR(la, l0, 1e-6 * (1 + std::abs(la)));
  EXPECT_EQ(l0, l1);
  for (size_t i = 0; i < A.params.size(); ++i)
    for (int64_t e = 0; e < A.params[i].numel(); ++e) {
      const double a = A.params[i].as_double(e);
      EXPECT_NEAR(a, p0[i].as_double(e), 1e-6 * (1 + std::abs(a))) << i << " " << e;
      EXPECT_EQ(p0[i].as_double(e), p1[i].as_double(e)) << i << " " << e;  // ranks agree
    }
}

}  // namespace
}  // namespace netspec::train
