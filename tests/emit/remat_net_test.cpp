// Rematerialization in the cpu executor (hlo::rematerialize, applied when a plan is built;
// NETSPEC_NO_REMAT=1 off): on the zoo's conv nets' train steps it recomputes BN/ReLU values near
// their backward readers, the arena shrinks (mnist-cnn b8 by more than a quarter; b32 resnet18-cifar 236 -> 162 MiB), and every output is bit for bit
// what the plan without it computes (the same ops on the same operands).
#include <cstdlib>
#include <cstring>

#include "emit_test_util.h"
#include "exec/cpu/cpu_backend.h"

namespace netspec::emit::testing {
namespace {

struct NoRemat {
  NoRemat() { ::setenv("NETSPEC_NO_REMAT", "1", 1); }
  ~NoRemat() { ::unsetenv("NETSPEC_NO_REMAT"); }
};

// The direct convolution kernels on every CPU: the arena ratios below are about activations,
// and a Winograd kernel's scratch (36 C O floats of transformed weights; oneDNN's on AVX-512,
// netspec's own on AVX2) would move them by CPU kind.
struct DirectConvs {
  DirectConvs() { ::setenv("NETSPEC_CPU_WINOGRAD", "0", 1); }
  ~DirectConvs() { ::unsetenv("NETSPEC_CPU_WINOGRAD"); }
};

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(RematNet, ConvNetTrainStepsKeepLessAndComputeTheSame) {
  DirectConvs direct;
  struct Case {
    const char* net;
    int64_t batch;
    double max_arena_ratio;  // arena with remat / without, at most
  };
  for (const Case& c : {Case{"mnist-cnn", 8, 0.75}, Case{"resnet18-cifar", 4, 0.85}}) {
    EmitOptions o;
    o.batch = c.batch;
    o.optim.kind = OptimizerKind::sgd;
    Emitted e = emit_module(resolve_net(c.net).net, ModuleKind::train_step, o);
    std::vector<Tensor> in = step_inputs(e, 10);
    exec::cpu::PlanStats off, on = exec::cpu::plan_stats(*e.module->entry());
    std::vector<Tensor> want, got = run_main(*e.module, in, "cpu");
    {
      NoRemat env;
      off = exec::cpu::plan_stats(*e.module->entry());
      want = run_main(*e.module, in, "cpu");
    }
    EXPECT_EQ(off.remat_clones, 0) << c.net;
    EXPECT_GT(on.remat_clones, 10) << c.net;
    EXPECT_LE(static_cast<double>(on.arena_bytes), c.max_arena_ratio * off.arena_bytes)
        << c.net << ": arena " << on.arena_bytes << " vs " << off.arena_bytes << " without";
    EXPECT_EQ(on.ref_steps, 0) << c.net << ": " << on.fallback_ops;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(same_bits(got[i], want[i])) << c.net << " output " << e.manifest.outputs[i].name;
  }
}

// The recomputed chains under check mode: each fast step against its ref kernel.
TEST(RematNet, RecomputedStepsPassCheckMode) {
  EmitOptions o;
  o.batch = 2;
  o.optim.kind = OptimizerKind::adam;
  Emitted e = emit_module(resolve_net("mnist-cnn").net, ModuleKind::train_step, o);
  ASSERT_GT(exec::cpu::plan_stats(*e.module->entry()).remat_clones, 0);
  ::setenv("NETSPEC_CPU_CHECK", "1", 1);
  EXPECT_NO_THROW(run_main(*e.module, step_inputs(e, 10), "cpu"));
  ::unsetenv("NETSPEC_CPU_CHECK");
}

}  // namespace
}  // namespace netspec::emit::testing
