// Data-parallel train steps (docs/distributed.md): R replicas x B/R samples with sync-BN make
// the same update as one replica on B samples; without sync-BN each replica normalises its own
// shard and the update averages the per-shard gradients; the sync-BN loss passes gradcheck (f64)
// when run replicated, so the all_reduce VJP carries the cross-replica BN backward.
#include <gtest/gtest.h>

#include "emit_test_util.h"
#include "hlo/text/printer.h"
#include "layers/param_table.h"

namespace netspec::emit::testing {
namespace {

NetSpec dp_net() {
  return NetBuilder("dpnet")
      .input(2, 4, 4)
      .add(ConvBn{2, 3, 3, 2})
      .add(ResidualBlock{3, 4, 1, 1})
      .add(GlobalAvgPool{})
      .add(Flatten{})
      .add(Dense{4, 3})
      .build();
}

struct DpSetup {
  NetSpec net = dp_net();
  ParamTable t = build_param_table(net);
  std::vector<Tensor> params;
  Tensor x, labels;
  explicit DpSetup(int64_t batch) {
    for (size_t i = 0; i < t.params.size(); ++i)
      params.push_back(random_tensor(hlo::Type::tensor(DType::kF32, t.params[i].shape), i + 1));
    x = random_tensor(hlo::Type::tensor(DType::kF32, {batch, 2, 4, 4}), 77);
    std::vector<int> ys;
    for (int64_t i = 0; i < batch; ++i) ys.push_back(static_cast<int>((i * 7 + 1) % 3));
    labels = Tensor::from<int>(DType::kI32, {batch}, ys);
  }
};

// Rows [r·n/R, (r+1)·n/R) of t.
Tensor shard(const Tensor& t, int parts, int r) {
  Shape s = t.shape();
  const int64_t rows = s[0] / parts;
  s[0] = rows;
  Tensor out(t.dtype(), s);
  std::memcpy(out.raw(), static_cast<const uint8_t*>(t.raw()) + out.nbytes() * r, out.nbytes());
  return out;
}

// Train-step inputs in manifest order: P, zero optimizer state, x, labels, lr, step.
std::vector<Tensor> step_inputs(const Emitted& e, const std::vector<Tensor>& params,
                                const Tensor& x, const Tensor& y, float lr) {
  std::vector<Tensor> in = params;
  for (const auto& ti : e.manifest.inputs)
    if (ti.role == "optimizer_state") in.emplace_back(ti.dtype, ti.shape);
  in.push_back(x);
  in.push_back(y);
  in.push_back(Tensor::scalar_f32(lr));
  in.push_back(Tensor::from<int>(DType::kI32, {}, {1}));
  return in;
}

std::vector<std::vector<Tensor>> run_replicas(const Emitted& e,
                                              const std::vector<std::vector<Tensor>>& in,
                                              const std::string& backend) {
  auto exe = exec::make_backend(backend)->load(
      std::shared_ptr<const hlo::Module>(hlo::clone_module(*e.module)));
  return exe->run_replicated("main", in);
}

// Train-step / loss options for `reps` sync-BN replicas of `shard` samples each.
EmitOptions sync_replicas(int64_t shard, int reps) {
  EmitOptions dp;
  dp.batch = shard;
  dp.replicas = reps;
  dp.sync_bn = true;
  return dp;
}

double scaled_diff(const Tensor& a, const Tensor& b) {
  double m = 0;
  for (int64_t i = 0; i < b.numel(); ++i) m = std::max(m, std::abs(b.as_double(i)));
  return max_abs_diff(a, b) / (1 + m);
}

TEST(DataParallel, SyncBnReplicasMatchOneGlobalBatch) {
  const int64_t global = 8;
  DpSetup s(global);
  for (const char* backend : {"cpu", "ref"})
    for (int reps : {2, 4}) {
      EmitOptions one;
      one.batch = global;
      one.optim.kind = OptimizerKind::adam;
      one.optim.momentum = 0.9;
      Emitted e1 = emit_module(s.net, ModuleKind::train_step, one);
      std::vector<Tensor> want =
          run_main(*e1.module, step_inputs(e1, s.params, s.x, s.labels, 0.05f), backend);
      EmitOptions dp = one;
      dp.batch = global / reps;
      dp.replicas = reps;
      dp.sync_bn = true;
      Emitted er = emit_module(s.net, ModuleKind::train_step, dp);
      std::vector<std::vector<Tensor>> in;
      for (int r = 0; r < reps; ++r)
        in.push_back(
            step_inputs(er, s.params, shard(s.x, reps, r), shard(s.labels, reps, r), 0.05f));
      auto got = run_replicas(er, in, backend);
      ASSERT_EQ(got.size(), static_cast<size_t>(reps));
      for (int r = 0; r < reps; ++r) {
        ASSERT_EQ(got[r].size(), want.size());
        for (size_t k = 0; k < want.size(); ++k) {
          // params, Adam m/v, loss, BN batch stats (global with sync-BN): f32 tolerance.
          EXPECT_LT(scaled_diff(got[r][k], want[k]), 2e-6)
              << backend << " R=" << reps << " replica " << r << " output "
              << er.manifest.outputs[k].name;
          // every replica holds the same bits as replica 0
          EXPECT_EQ(max_abs_diff(got[r][k], got[0][k]), 0) << er.manifest.outputs[k].name;
        }
      }
      // The update really moved the parameters (the comparison is not of two copies of P).
      EXPECT_GT(max_abs_diff(want[0], s.params[0]), 1e-3);
    }
}

TEST(DataParallel, WithoutSyncBnEachReplicaNormalisesItsShardAndGradientsAverage) {
  const int reps = 2;
  DpSetup s(4);
  EmitOptions dp;
  dp.batch = 2;
  dp.replicas = reps;
  dp.optim.kind = OptimizerKind::sgd;
  Emitted er = emit_module(s.net, ModuleKind::train_step, dp);
  const float lr = 0.1f;
  std::vector<std::vector<Tensor>> in;
  for (int r = 0; r < reps; ++r)
    in.push_back(step_inputs(er, s.params, shard(s.x, reps, r), shard(s.labels, reps, r), lr));
  auto got = run_replicas(er, in, "cpu");
  const size_t np = s.params.size();

  EmitOptions local;  // one replica's view: the modules at the shard's batch
  local.batch = 2;
  Emitted fwd = emit_module(s.net, ModuleKind::forward, local);
  Emitted loss = emit_module(s.net, ModuleKind::loss, local);
  std::vector<std::vector<Tensor>> grads;
  double mean_loss = 0;
  for (int r = 0; r < reps; ++r) {
    Tensor xr = shard(s.x, reps, r), yr = shard(s.labels, reps, r);
    std::vector<Tensor> fin = s.params;
    fin.push_back(xr);
    std::vector<Tensor> f = run_main(*fwd.module, fin);
    // replica r's BN batch statistics are those of its own shard
    for (size_t k = 1; k < f.size(); ++k)
      EXPECT_LT(max_abs_diff(got[r][np + k], f[k]), 1e-6) << "replica " << r << " stat " << k;
    grads.push_back(loss_grads(s.net, local, s.params, xr, yr));
    fin.push_back(yr);
    mean_loss += run_main(*loss.module, fin)[0].as_double(0) / reps;
  }
  // The shards' statistics differ (so the check above is not vacuous).
  EXPECT_GT(max_abs_diff(got[0][np + 1], got[1][np + 1]), 1e-3);
  for (int r = 0; r < reps; ++r) {
    // P' = P - lr·(g_0 + g_1)/2 on every replica; the loss is the mean of the shards' losses.
    for (size_t i = 0; i < np; ++i) {
      Tensor want(DType::kF32, s.params[i].shape());
      for (int64_t j = 0; j < want.numel(); ++j)
        want.data<float>()[j] =
            static_cast<float>(s.params[i].as_double(j) -
                               lr * (grads[0][i].as_double(j) + grads[1][i].as_double(j)) / 2);
      EXPECT_LT(scaled_diff(got[r][i], want), 2e-6) << "replica " << r << " param " << i;
    }
    EXPECT_NEAR(got[r][np].as_double(0), mean_loss, 1e-6);
  }
  // Manifest: replicas, shards, per-shard BN counts (2 samples x 2x2 positions).
  EXPECT_EQ(er.manifest.replicas, 2);
  EXPECT_FALSE(er.manifest.sync_bn);
  EXPECT_EQ(er.manifest.outputs[np + 1].count, 8);
  for (const auto& ti : er.manifest.inputs)
    EXPECT_EQ(ti.sharded, ti.role == "input" || ti.role == "label") << ti.name;
}

TEST(DataParallel, ManifestRecordsReplicasShardsAndGlobalBnCount) {
  DpSetup s(4);
  EmitOptions dp = sync_replicas(2, 2);
  Emitted er = emit_module(s.net, ModuleKind::train_step, dp);
  const size_t np = s.params.size();
  EXPECT_EQ(er.manifest.outputs[np + 1].count, 16);  // global: 2 replicas x 2 x 2x2
  const std::string j = er.manifest.to_json();
  EXPECT_NE(j.find("\"replicas\": 2"), std::string::npos) << j;
  EXPECT_NE(j.find("\"global_batch\": 4"), std::string::npos);
  EXPECT_NE(j.find("\"sync_bn\": true"), std::string::npos);
  EXPECT_NE(j.find("\"sharded\": true"), std::string::npos);
  // One replica: the module and manifest are the single-device ones (sync-BN has no effect).
  EmitOptions one;
  one.batch = 2;
  EmitOptions one_sync = one;
  one_sync.sync_bn = true;
  Emitted a = emit_module(s.net, ModuleKind::train_step, one);
  Emitted b = emit_module(s.net, ModuleKind::train_step, one_sync);
  EXPECT_EQ(hlo::print_module(*a.module), hlo::print_module(*b.module));
  EXPECT_EQ(a.manifest.to_json(), b.manifest.to_json());
  EXPECT_EQ(a.manifest.to_json().find("replicas"), std::string::npos);
  EXPECT_EQ(hlo::print_module(*a.module).find("all_reduce"), std::string::npos);
  EXPECT_NE(hlo::print_module(*er.module).find("all_reduce"), std::string::npos);
  EmitOptions bad = dp;
  bad.replicas = 0;
  EXPECT_THROW(emit_module(s.net, ModuleKind::train_step, bad), Error);
}

TEST(DataParallel, SyncBnLossPassesGradcheckRunReplicated) {
  DpSetup s(2);
  Emitted e = emit_module(s.net, ModuleKind::loss, sync_replicas(2, 2));
  for (const char* backend : {"ref", "cpu"}) {
    autodiff::GradcheckOptions g;
    g.backend = backend;
    g.int_max = 3;
    g.replicas = 2;
    g.zero_abs = 1e-9;  // conv biases / β before BN have exactly zero gradient
    autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
    EXPECT_TRUE(r.ok) << backend << "\n" << r.str();
    EXPECT_EQ(r.inputs.size(), s.params.size() + 1);  // P and x
  }
}

}  // namespace
}  // namespace netspec::emit::testing
