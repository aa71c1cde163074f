// Emitted train steps on the cpu executor's channel-blocked layouts (src/exec/cpu/plan/layout.cpp):
// a conv-BN-ReLU-pool-conv net with channel counts that are and are not multiples of the block
// (12, 16, 24, 32) equals the ref executor at nChw16c and at the AVX2 machines' nChw8c, and the
// zoo's mnist-cnn and resnet18-cifar train steps pass check mode (every step against its ref);
// every zoo net's train step plans on fast kernels.
#include <cstdlib>
#include <string>

#include "emit_test_util.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/kernels.h"
#include "spec/spec_json.h"

namespace netspec::emit::testing {
namespace {

struct LayoutEnv {
  explicit LayoutEnv(const char* v) { ::setenv("NETSPEC_CPU_LAYOUT", v, 1); }
  ~LayoutEnv() { ::unsetenv("NETSPEC_CPU_LAYOUT"); }
};

// Whether values are planned blocked at `layout` on this CPU: 16-channel blocks need oneDNN's
// AVX-512 kernels (on AVX2 a forced 16 plans row-major, still equal to ref). Call it before a
// LayoutEnv: layout_block_size() reports the override inside one.
bool blocks_here(const char* layout) {
  const std::string l(layout);
  return l != "plain" && (l != "16" || exec::cpu::layout_block_size() == 16);
}

const char* kChainNet = R"({
  "name": "layout-chain", "inputChannels": 3, "inputHeight": 12, "inputWidth": 12,
  "layers": [
    {"kind": "convBn", "ic": 3, "oc": 12, "k": 3},
    {"kind": "convBn", "ic": 12, "oc": 16, "k": 3},
    {"kind": "maxPool", "size": 2, "stride": 2},
    {"kind": "convBn", "ic": 16, "oc": 24, "k": 3},
    {"kind": "convBn", "ic": 24, "oc": 32, "k": 3},
    {"kind": "maxPool", "size": 2, "stride": 2},
    {"kind": "flatten"},
    {"kind": "dense", "in": 288, "out": 5}
  ]})";

double scaled_diff(const Tensor& a, const Tensor& b) {
  double m = 0;
  for (int64_t i = 0; i < b.numel(); ++i) m = std::max(m, std::abs(b.as_double(i)));
  return max_abs_diff(a, b) / (1 + m);
}

Emitted train_step(const NetSpec& net, int64_t batch) {
  EmitOptions o;
  o.batch = batch;
  o.optim.kind = OptimizerKind::adam;
  return emit_module(net, ModuleKind::train_step, o);
}

TEST(CpuLayoutNet, ChainTrainStepEqualsRefAtBothBlockSizes) {
  NetSpec net = parse_spec(kChainNet).net;
  Emitted e = train_step(net, 4);
  std::vector<Tensor> in = step_inputs(e, 5);
  std::vector<Tensor> want = run_main(*e.module, in, "ref");
  for (const char* layout : {"16", "8", "plain"}) {
    const bool blocked = blocks_here(layout);  // (before the override)
    LayoutEnv env(layout);
    auto st = exec::cpu::plan_stats(*e.module->entry());
    EXPECT_EQ(st.ref_steps, 0) << layout << ": " << st.fallback_ops;
    if (blocked) {
      EXPECT_GT(st.blocked_values, 10) << layout;
    }
    std::vector<Tensor> got = run_main(*e.module, in, "cpu");
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_LE(scaled_diff(got[i], want[i]), 2e-4)
          << layout << " output " << e.manifest.outputs[i].name;
    ::setenv("NETSPEC_CPU_CHECK", "1", 1);
    EXPECT_NO_THROW(run_main(*e.module, in, "cpu")) << layout;
    ::unsetenv("NETSPEC_CPU_CHECK");
  }
}

// The eval forward: every conv's BN (+ ReLU) runs as the conv's oneDNN post-ops (4 folds), at
// both block sizes and row-major; equal to ref, also in check mode.
TEST(CpuLayoutNet, EvalBnReluFoldIntoConvPostOps) {
  NetSpec net = parse_spec(kChainNet).net;
  EmitOptions o;
  o.batch = 3;
  Emitted e = emit_module(net, ModuleKind::eval, o);
  std::vector<Tensor> in = step_inputs(e, 5);
  std::vector<Tensor> want = run_main(*e.module, in, "ref");
  for (const char* layout : {"16", "8", "plain"}) {
    LayoutEnv env(layout);
    auto st = exec::cpu::plan_stats(*e.module->entry());
    EXPECT_EQ(st.conv_postops, 4) << layout;
    EXPECT_EQ(st.ref_steps, 0) << layout << ": " << st.fallback_ops;
    std::vector<Tensor> got = run_main(*e.module, in, "cpu");
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_LE(scaled_diff(got[i], want[i]), 1e-5) << layout << " output " << i;
    ::setenv("NETSPEC_CPU_CHECK", "1", 1);
    EXPECT_NO_THROW(run_main(*e.module, in, "cpu")) << layout;
    ::unsetenv("NETSPEC_CPU_CHECK");
  }
  // A train step's forward reads each conv result for the batch statistics: nothing folds.
  EXPECT_EQ(exec::cpu::plan_stats(*train_step(net, 2).module->entry()).conv_postops, 0);
}

// Check mode: every fast step (convs, fused BN/ReLU groups, reductions and pools on blocked
// values, the reorders) against its ref kernel on the same operands.
TEST(CpuLayoutNet, ZooTrainStepsPassCheckMode) {
  struct Case {
    const char* net;
    int64_t batch, classes;
    std::vector<const char*> layouts;
  };
  for (const Case& c : {Case{"mnist-cnn", 2, 10, {"16", "8"}},
                        Case{"resnet18-cifar", 2, 10, {blocks_here("16") ? "16" : "8"}}}) {
    NetSpec net = resolve_net(c.net).net;
    Emitted e = train_step(net, c.batch);
    std::vector<Tensor> in = step_inputs(e, c.classes);
    for (const char* layout : c.layouts) {
      const bool blocked = blocks_here(layout);
      LayoutEnv env(layout);
      auto st = exec::cpu::plan_stats(*e.module->entry());
      EXPECT_EQ(st.ref_steps, 0) << c.net << ": " << st.fallback_ops;
      if (blocked) {
        EXPECT_GT(st.blocked_values, 20) << c.net << " " << layout;
      }
      ::setenv("NETSPEC_CPU_CHECK", "1", 1);
      EXPECT_NO_THROW(run_main(*e.module, in, "cpu")) << c.net << " " << layout;
      ::unsetenv("NETSPEC_CPU_CHECK");
    }
  }
}

// Every zoo net's train step, at its own input size and loss (as `netspec bench NET --batch 2`),
// and its eval module plan on the cpu executor without a ref step and without an error: planning
// once aborted on fpn-det (a Winograd conv whose kernel oneDNN could not reorder), which no smaller
// test hit.
TEST(CpuLayoutNet, EveryZooTrainStepPlansOnFastKernels) {
  for (const std::string& name : zoo_names()) {
    SpecFile spec = resolve_net(name);
    TrainConfig c = spec.train.value_or(TrainConfig{});
    c.batchSize = 2;
    const ParamTable table = build_param_table(spec.net);
    for (ModuleKind kind : {ModuleKind::train_step, ModuleKind::eval}) {
      Emitted e = emit_module(spec.net, table, kind,
                              EmitOptions::from_train(c, 2 * losses::rows_per_sample(c)));
      exec::cpu::PlanStats st;
      EXPECT_NO_THROW(st = exec::cpu::plan_stats(*e.module->entry("main"))) << name;
      EXPECT_EQ(st.ref_steps, 0) << name << ": " << st.fallback_ops;
    }
  }
}

}  // namespace
}  // namespace netspec::emit::testing
