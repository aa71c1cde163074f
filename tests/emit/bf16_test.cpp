// bf16 mixed precision (EmitOptions::precision, emit/precision.cpp): where the converts go (the
// seed's bf16 / bf16Conv split), and the gradients of bf16 modules against a PyTorch reference
// of the same rule written here, on ref, on the cpu executor's oneDNN bf16 kernels and on its
// widened-f32 path (NETSPEC_BF16_EMULATE, what a CPU without bf16 runs). bf16 is not checked by
// finite differences (a rounding to 8 significant bits is piecewise constant); the f32 path
// stays gradchecked in f64 elsewhere.
#include "core/bf16.h"

#include <cstdlib>

#include "../engine_util.h"
#include "emit_test_util.h"
#include "exec/cpu/cpu_backend.h"
#include "torch_script.h"

namespace netspec::emit::testing {
namespace {

struct Counts {
  int dot_bf16 = 0, dot_f32 = 0, conv_bf16 = 0, conv_f32 = 0;
};

Counts count(const hlo::Module& m) {
  Counts c;
  for (const auto& f : m.funcs)
    hlo::walk(*f->body, [&](const hlo::Op& op) {
      const bool bf = !op.operands.empty() && op.operand_type(0).dtype() == DType::kBF16;
      if (op.kind == hlo::OpKind::kDotGeneral) (bf ? c.dot_bf16 : c.dot_f32)++;
      if (op.kind == hlo::OpKind::kConvolution) (bf ? c.conv_bf16 : c.conv_f32)++;
      if (bf && (op.kind == hlo::OpKind::kDotGeneral || op.kind == hlo::OpKind::kConvolution)) {
        EXPECT_EQ(op.result(0)->type.dtype(), DType::kF32);  // f32 accumulation and result
      }
    });
  return c;
}

// conv 3x3 (same), conv 3x3 stride 2, separable (depthwise 3x3 + pointwise 1x1), dense head.
NetSpec conv_net() {
  return NetBuilder("bfconv")
      .input(2, 8, 8)
      .add(Conv2d{2, 8, 3})
      .add(Conv2d{.ic = 8, .oc = 8, .k = 3, .stride = 2})
      .add(SeparableConv{8, 8})
      .add(GlobalAvgPool{})
      .add(Flatten{})
      .add(Dense{8, 3})
      .build();
}

NetSpec mlp_net() {
  return NetBuilder("bfmlp")
      .input(12)
      .add(Dense{12, 16, Activation::relu})
      .add(Dense{16, 5})
      .build();
}

EmitOptions opts(bool bf16, bool conv, int64_t batch) {
  EmitOptions o;
  o.batch = batch;
  o.precision = {bf16, conv};
  return o;
}

TEST(Bf16Emit, ConvertsWhereTheSeedSays) {
  const NetSpec net = conv_net();
  Counts f32 = count(*emit_module(net, ModuleKind::forward, opts(false, false, 2)).module);
  EXPECT_EQ(f32.dot_bf16 + f32.conv_bf16, 0);
  Counts dots = count(*emit_module(net, ModuleKind::forward, opts(true, false, 2)).module);
  EXPECT_EQ(dots.dot_bf16, 1);  // the dense head
  EXPECT_EQ(dots.dot_f32, 0);
  EXPECT_EQ(dots.conv_bf16, 0);  // convolutions stay f32 without bf16Conv
  EXPECT_EQ(dots.conv_f32, 4);
  Counts all = count(*emit_module(net, ModuleKind::forward, opts(true, true, 2)).module);
  EXPECT_EQ(all.conv_bf16, 3);  // two 3x3 convs and the pointwise one
  EXPECT_EQ(all.conv_f32, 1);   // the depthwise conv stays f32
  // ViT: every matmul, and the patch embedding (a matmul over patches), with bf16 alone.
  const NetSpec vit = resolve_net("vit-cifar-tiny").net;
  Counts v = count(*emit_module(vit, ModuleKind::forward, opts(true, false, 1)).module);
  EXPECT_GT(v.dot_bf16, 10);
  EXPECT_EQ(v.dot_f32, 0);
  EXPECT_EQ(v.conv_bf16, 1);
  EXPECT_EQ(v.conv_f32, 0);
  // The train step: the backward contractions read bf16 too (dy rounded), results f32.
  Counts step = count(*emit_module(net, ModuleKind::train_step, opts(true, true, 2)).module);
  EXPECT_EQ(step.conv_f32, 3);           // depthwise forward, its dx and dW
  EXPECT_GE(step.conv_bf16, 3 * 3 - 1);  // forward, dx (not of the first conv: no input grad), dW
  EXPECT_EQ(step.dot_f32, 0);
}

// Per element: |got - want| <= 2^-6 · max(|want|, 1e-3 · max|want|) (a bf16 rounding that falls
// the other way, 1 ulp <= 2^-7 relative, plus its echo downstream), and at least `exact` of the
// elements within 1e-5 relative (the same bf16 value). Returns the fraction within 1e-5.
double bf16_close(const std::string& what, const Tensor& got, const Tensor& want,
                  double exact = 0.9) {
  EXPECT_EQ(got.shape(), want.shape()) << what;
  double mx = 0;
  for (int64_t i = 0; i < want.numel(); ++i) mx = std::max(mx, std::abs(want.as_double(i)));
  int64_t same = 0;
  double worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.as_double(i), d = std::abs(got.as_double(i) - w);
    const double scale = std::max(std::abs(w), 1e-3 * mx);
    worst = std::max(worst, d / scale);
    same += d <= 1e-5 * scale;
  }
  const double frac = static_cast<double>(same) / static_cast<double>(want.numel());
  std::cout << "[ bf16 ] " << what << ": " << 100 * frac << " % equal, worst " << worst
            << " relative\n";
  if (exact > 0) {
    EXPECT_LE(worst, 1.0 / 64) << what;
    EXPECT_GE(frac, exact) << what;
  }
  return frac;
}

// Inputs of the vjp module: params, x, ybar (deterministic).
std::vector<Tensor> vjp_inputs(const Emitted& e) {
  std::vector<Tensor> in;
  const hlo::Func* f = e.module->entry();
  for (size_t i = 0; i < f->num_args(); ++i) in.push_back(random_tensor(f->arg(i)->type, 40 + i));
  return in;
}

// Runs with NETSPEC_BF16_EMULATE=`mode`: "1" widens every bf16 contraction to f32 (the planner
// rewrites the convolutions, hlo::widen_bf16_convolutions), "0" takes oneDNN's bf16 kernels where
// the CPU has them (else widening inside each call).
std::vector<Tensor> run_emulated(const Emitted& e, const std::vector<Tensor>& in,
                                 const char* mode = "1") {
  ::setenv("NETSPEC_BF16_EMULATE", mode, 1);
  std::vector<Tensor> out = run_main(*e.module, in, "cpu");
  ::unsetenv("NETSPEC_BF16_EMULATE");
  return out;
}

// How many bf16 convolutions the cpu planner runs in f32 under NETSPEC_BF16_EMULATE=`mode`.
int widened_convolutions(const Emitted& e, const char* mode) {
  ::setenv("NETSPEC_BF16_EMULATE", mode, 1);
  const int n = exec::cpu::plan_stats(*e.module->entry()).bf16_convolutions_widened;
  ::unsetenv("NETSPEC_BF16_EMULATE");
  return n;
}

// The bf16 contractions run on oneDNN (natively or widened), never on the ref fallback.
void expect_contractions_fast(const Emitted& e) {
  exec::cpu::PlanStats ps = exec::cpu::plan_stats(*e.module->entry());
  EXPECT_EQ(ps.fallback_ops.find("dot_general"), std::string::npos) << ps.fallback_ops;
  EXPECT_EQ(ps.fallback_ops.find("convolution"), std::string::npos) << ps.fallback_ops;
  EXPECT_EQ(ps.fallback_ops.find("convert"), std::string::npos) << ps.fallback_ops;
}

// y = bf16(x)·bf16(W)ᵀ accumulated exactly, dx = bf16(bf16(dy)·bf16(W)), dW = bf16(bf16(dy)ᵀ·
// bf16(x)), bias and relu in full precision: the rule precision.cpp states, independently.
const char* kMlpReference = R"(
def bf(t): return t.float().bfloat16().double()
class Mm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        xb, wb = bf(x), bf(w)
        ctx.save_for_backward(xb, wb)
        return xb @ wb.T
    @staticmethod
    def backward(ctx, g):
        xb, wb = ctx.saved_tensors
        gb = bf(g)
        return bf(gb @ wb), bf(gb.T @ xb)
W1, b1, W2, b2, x, ybar = [load(i).requires_grad_() for i in range(6)]
y = Mm.apply(torch.relu(Mm.apply(x, W1) + b1), W2) + b2
y.backward(ybar)
for i, t in enumerate([W1, b1, W2, b2, x]): save(i, t.grad)
)";

TEST(Bf16Grads, MlpMatchesTorchReferenceOnEveryExecutor) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  const NetSpec net = mlp_net();
  Emitted e = emit_module(net, ModuleKind::vjp, opts(true, false, 8));
  std::vector<Tensor> in = vjp_inputs(e);
  std::vector<Tensor> ref = reference::run_torch_script(kMlpReference, in, 5);
  const char* names[] = {"dW1", "db1", "dW2", "db2", "dx"};
  expect_contractions_fast(e);
  std::vector<std::vector<Tensor>> runs = {run_main(*e.module, in, "ref"),
                                           run_main(*e.module, in, "cpu"), run_emulated(e, in)};
  const char* backends[] = {"ref", "cpu", "cpu emulated"};
  for (size_t b = 0; b < runs.size(); ++b)
    for (size_t k = 0; k < 5; ++k)
      bf16_close(fmt::format("{} {}", backends[b], names[k]), runs[b].at(k), ref[k]);
  // The test can tell: the f32 module's weight gradients are mostly not the bf16 values.
  Emitted f = emit_module(net, ModuleKind::vjp, opts(false, false, 8));
  std::vector<Tensor> plain = run_main(*f.module, in, "cpu");
  for (size_t k : {size_t{0}, size_t{2}, size_t{4}})
    EXPECT_LT(bf16_close(fmt::format("f32 module {}", names[k]), plain[k], ref[k], 0), 0.5);
  // The bf16 weight gradients are bf16 values (rounded once, then widened exactly).
  for (size_t k : {size_t{0}, size_t{2}})
    for (int64_t i = 0; i < runs[1][k].numel(); ++i) {
      const float g = runs[1][k].data<float>()[i];
      ASSERT_EQ(round_to_bf16(g), g) << names[k] << " element " << i;
    }
}

TEST(Bf16Grads, ConvNetAgreesAcrossExecutors) {
  const NetSpec net = conv_net();
  Emitted e = emit_module(net, ModuleKind::vjp, opts(true, true, 4));
  expect_contractions_fast(e);
  std::vector<Tensor> in = vjp_inputs(e);
  std::vector<Tensor> ref = run_main(*e.module, in, "ref");
  std::vector<Tensor> cpu = run_main(*e.module, in, "cpu");
  std::vector<Tensor> emu = run_emulated(e, in);
  std::vector<Tensor> unwidened = run_emulated(e, in, "0");
  ASSERT_EQ(ref.size(), cpu.size());
  for (size_t k = 0; k < ref.size(); ++k) {
    const std::string& name = e.manifest.outputs[k].name;
    bf16_close("cpu " + name, cpu[k], ref[k]);
    bf16_close("cpu emulated " + name, emu[k], ref[k]);
    bf16_close("cpu unwidened " + name, unwidened[k], ref[k]);
  }
  // Emulated, every bf16 convolution runs as an f32 one on converted operands; unemulated none.
  const int bf16_convs = count(*e.module).conv_bf16;
  EXPECT_GT(bf16_convs, 0);
  EXPECT_EQ(widened_convolutions(e, "1"), bf16_convs);
  EXPECT_EQ(widened_convolutions(e, "0"), 0);
}

// XLA (PJRT CPU plugin) runs the same bf16 module: its converts, bf16 dots and convolutions with
// f32 results, and agrees with the cpu executor as ref does.
TEST(Bf16Grads, XlaAgreesWithCpu) {
  REQUIRE_ENGINE(xla, "xla");
  for (const NetSpec& net : {mlp_net(), conv_net()}) {
    Emitted e = emit_module(net, ModuleKind::vjp, opts(true, true, 4));
    std::vector<Tensor> in = vjp_inputs(e);
    std::vector<Tensor> cpu = run_main(*e.module, in, "cpu");
    std::vector<Tensor> got =
        xla->load(std::shared_ptr<const hlo::Module>(hlo::clone_module(*e.module)))
            ->run("main", in);
    ASSERT_EQ(got.size(), cpu.size());
    for (size_t k = 0; k < got.size(); ++k)
      bf16_close("xla " + net.name + " " + e.manifest.outputs[k].name, got[k], cpu[k]);
  }
}

TEST(Bf16Train, StepRunsAndLearnsOnCpu) {
  const NetSpec net = conv_net();
  EmitOptions o = opts(true, true, 4);
  o.optim.kind = OptimizerKind::adam;
  const ParamTable t = build_param_table(net);
  std::vector<Tensor> params;
  for (size_t i = 0; i < t.params.size(); ++i)
    params.push_back(random_tensor(hlo::Type::tensor(DType::kF32, t.params[i].shape), 10 + i));
  Tensor x = random_tensor(hlo::Type::tensor(DType::kF32, {4, 2, 8, 8}), 3);
  Tensor labels = Tensor::from<int>(DType::kI32, {4}, {0, 1, 2, 0});
  std::vector<double> l = train_step_losses(net, o, params, x, labels, 0.01, 6);
  EXPECT_LT(l.back(), l.front());
}

}  // namespace
}  // namespace netspec::emit::testing
