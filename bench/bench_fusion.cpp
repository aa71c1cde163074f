// Fused elementwise chains on the cpu executor: GELU (erf form, layers/activation.cpp) forward
// and forward+backward (autodiff::vjp) over vit-cifar-tiny's MLP activation [32, 64, 256], and an
// Adam-like update over [256, 1024], and conv -> BN apply + ReLU -> conv over [32, 64, 32, 32]
// (the BN+ReLU group runs on the channel-blocked layout the convs propagate; its own time is the
// "fusion" row of NETSPEC_PROFILE=1), and one mamba selective-scan step: wall ms per call (median), CPU ms per call (mean, all
// threads: the number to compare on a loaded machine), CPU ns per element, the plan's step count.
// Usage: bench_fusion [NAME-SUBSTRING]   (only the cases whose name contains it; threads:
// NETSPEC_THREADS as for netspec)
#include <time.h>

#include <cmath>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "autodiff/vjp.h"
#include "bench/bench_util.h"
#include "exec/backend.h"
#include "exec/cpu/cpu_backend.h"
#include "layers/lower.h"

using namespace netspec;
using hlo::Builder;
using hlo::Type;
using hlo::Value;

namespace {

std::shared_ptr<hlo::Module> gelu_module(const Shape& s, bool backward) {
  auto m = std::make_shared<hlo::Module>();
  hlo::Func* f = m->add_func("gelu", {Type::tensor(DType::kF32, s)});
  Builder b(f->body.get());
  b.func_return({layers::activation(b, f->arg(0), Activation::gelu)});
  if (!backward) {
    f->name = "main";
    return m;
  }
  autodiff::VjpOptions o;
  o.name = "main";
  autodiff::vjp(*f, {0}, o);
  return m;
}

std::shared_ptr<hlo::Module> adam_module(const Shape& s) {
  auto m = std::make_shared<hlo::Module>();
  Type t = Type::tensor(DType::kF32, s);
  hlo::Func* f = m->add_func("main", {t, t, t, t});
  Builder b(f->body.get());
  auto c = [&](double v) { return b.constant_splat(v, t); };
  Value *w = f->arg(0), *g = f->arg(1), *mo = f->arg(2), *v = f->arg(3);
  Value* m1 = b.add(b.multiply(c(0.9), mo), b.multiply(c(0.1), g));
  Value* v1 = b.add(b.multiply(c(0.999), v), b.multiply(c(0.001), b.multiply(g, g)));
  Value* upd = b.divide(m1, b.add(b.sqrt(v1), c(1e-8)));
  Value* w1 = b.subtract(w, b.multiply(c(1e-3), b.add(upd, b.multiply(c(0.01), w))));
  b.func_return({w1, m1, v1});
  return m;
}

// y = conv(x, w); (conv(relu(y * s[c] + t[c]), w), Σ y per channel): x [32, 64, 32, 32], 3x3
// convs, 64 channels; y's second reader (a training BN's mean) keeps the group off the conv's
// post-ops.
std::shared_ptr<hlo::Module> conv_bn_relu_module() {
  auto m = std::make_shared<hlo::Module>();
  Type xt = Type::tensor(DType::kF32, {32, 64, 32, 32}),
       wt = Type::tensor(DType::kF32, {64, 64, 3, 3});
  Type ct = Type::tensor(DType::kF32, {64});
  hlo::Func* f = m->add_func("main", {xt, wt, ct, ct});
  Builder b(f->body.get());
  hlo::ConvOptions o;
  o.dims = hlo::ConvOptions::nchw(2);
  o.padding = {{1, 1}, {1, 1}};
  Value* y = b.convolution(f->arg(0), f->arg(1), o);
  auto per_channel = [&](Value* v) { return b.broadcast_in_dim(v, xt.shape(), {1}); };
  Value* z = b.add(b.multiply(y, per_channel(f->arg(2))), per_channel(f->arg(3)));
  Value* r = b.maximum(z, b.constant_splat(0.0, xt));
  Value* mean = b.reduce(y, b.scalar(0.0, DType::kF32), {0, 2, 3}, hlo::OpKind::kAdd);
  b.func_return({b.convolution(r, f->arg(1), o), mean});
  return m;
}

// relu(x * s[c] + t[c] + r) over resnet50's [16, 256, 56, 56] (51 MiB per tensor, far beyond
// the caches): a bandwidth-bound group, 3 x 51 MiB of traffic per call.
std::shared_ptr<hlo::Module> bn_add_relu_module() {
  auto m = std::make_shared<hlo::Module>();
  Type xt = Type::tensor(DType::kF32, {16, 256, 56, 56}), ct = Type::tensor(DType::kF32, {256});
  hlo::Func* f = m->add_func("main", {xt, xt, ct, ct});
  Builder b(f->body.get());
  auto per_channel = [&](Value* v) { return b.broadcast_in_dim(v, xt.shape(), {1}); };
  Value* z = b.add(b.add(b.multiply(f->arg(0), per_channel(f->arg(2))), per_channel(f->arg(3))),
                   f->arg(1));
  b.func_return({b.maximum(z, b.constant_splat(0.0, xt))});
  return m;
}

// One selective-scan time step of mamba-lm (layers/mamba): h = exp(Δ ⊗ A) · h + (Δ·x) ⊗ B over
// [32, 256, 16] (batch, channels, state): Δ and Δ·x spread over the state dim (runs of 16), A
// repeated over the batch (a period of 4096), B over the channels (a period of 16 per batch).
std::shared_ptr<hlo::Module> scan_step_module() {
  auto m = std::make_shared<hlo::Module>();
  const Shape hs{32, 256, 16};
  Type ht = Type::tensor(DType::kF32, hs), dt = Type::tensor(DType::kF32, {32, 256});
  hlo::Func* f = m->add_func("main", {ht, dt, Type::tensor(DType::kF32, {256, 16}), dt,
                                      Type::tensor(DType::kF32, {32, 16})});
  Builder b(f->body.get());
  Value* da = b.exponential(b.multiply(b.broadcast_in_dim(f->arg(1), hs, {0, 1}),
                                       b.broadcast_in_dim(f->arg(2), hs, {1, 2})));
  Value* dbx = b.multiply(b.broadcast_in_dim(f->arg(3), hs, {0, 1}),
                          b.broadcast_in_dim(f->arg(4), hs, {0, 2}));
  b.func_return({b.add(b.multiply(da, f->arg(0)), dbx)});
  return m;
}

// vit-cifar-tiny's attention softmax before its p·v dot (layers/attention.cpp) over its scores
// [32, 4, 64, 64]: s·c with its row maxima folded, then p = exp(s·c - m) with its row sums folded.
std::shared_ptr<hlo::Module> softmax_module() {
  auto m = std::make_shared<hlo::Module>();
  Type st = Type::tensor(DType::kF32, {32, 4, 64, 64});
  hlo::Func* f = m->add_func("main", {st});
  Builder b(f->body.get());
  Value* s = b.multiply(f->arg(0), b.constant_splat(0.125, st));
  Value* mx = b.reduce(s, b.scalar(-INFINITY, DType::kF32), {3}, hlo::OpKind::kMaximum);
  Value* p = b.exponential(b.subtract(s, b.broadcast_in_dim(mx, st.shape(), {0, 1, 2})));
  b.func_return({p, b.reduce(p, b.scalar(0.0, DType::kF32), {3}, hlo::OpKind::kAdd)});
  return m;
}

// User + system CPU seconds of the process (all threads): the machine is shared, wall time is not.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

const char* g_only = nullptr;  // argv[1]

void time_module(const char* name, std::shared_ptr<hlo::Module> m, int64_t elems) {
  if (g_only && !std::strstr(name, g_only)) return;
  auto st = exec::cpu::plan_stats(*m->entry("main"));
  std::vector<Tensor> in;
  hlo::Func* f = m->entry("main");
  for (size_t k = 0; k < f->num_args(); ++k) {
    Tensor x(f->arg(k)->type.dtype(), f->arg(k)->type.shape());
    float* d = x.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) d[i] = float((i * 7919) % 2000) / 250.0f - 4.0f;
    in.push_back(std::move(x));
  }
  auto be = exec::make_backend("cpu");
  auto exe = be->load(std::move(m));
  const int reps = g_only ? 201 : 21;
  const double c0 = cpu_seconds();
  double s = bench::time_median([&] { exe->run("main", in); }, 3, reps);
  const double cpu = (cpu_seconds() - c0) / (reps + 3);
  std::printf("%-22s %8.3f ms wall  %8.3f ms cpu  %6.2f cpu ns/element  %lld steps\n", name,
              s * 1e3, cpu * 1e3, cpu * 1e9 / double(elems), (long long)st.steps);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_only = argv[1];
  const Shape act{32, 64, 256};
  const int64_t n = 32 * 64 * 256;
  time_module("gelu forward", gelu_module(act, false), n);
  time_module("gelu forward+backward", gelu_module(act, true), n);
  time_module("adam-like update", adam_module({256, 1024}), 256 * 1024);
  time_module("conv, BN+ReLU, conv", conv_bn_relu_module(), 32 * 64 * 32 * 32);
  time_module("BN+add+ReLU 51 MiB", bn_add_relu_module(), 16 * 256 * 56 * 56);
  time_module("scan step", scan_step_module(), 32 * 256 * 16);
  time_module("softmax rows", softmax_module(), 32 * 4 * 64 * 64);
  return 0;
}
