// Benchmark (not a test): the cpu executor's convolution 3x3 64->64 at 56x56, batch 8,
// NCHW/OIHW, stride 1, padding 1, in GFLOP/s, beside the best sgemm of this machine measured in
// the same run (target >= 50 % of it); also the transposed form (lhs_dilation 2, what the
// input-gradient of a stride-2 conv emits). Run: build/<dir>/bench/bench_conv
#include <cstdlib>
#include <memory>
#include <string_view>

#include "bench/bench_util.h"
#include "exec/backend.h"
#include "hlo/builder.h"

using namespace netspec;

namespace {

// flipped: convolve with reverse(w) over its spatial dims (the input-gradient form of a
// stride-1 conv, with the kernel's feature roles as `o` gives them).
double conv_gflops(const Shape& xs, const Shape& ws, const hlo::ConvOptions& o, double flops,
                   bool flipped = false) {
  auto m = std::make_shared<hlo::Module>();
  hlo::Func* f = m->add_func("main", {hlo::Type::tensor(DType::kF32, xs), hlo::Type::tensor(DType::kF32, ws)});
  hlo::Builder b(f->body.get());
  hlo::Value* k = flipped ? b.reverse(f->arg(1), {2, 3}) : f->arg(1);
  b.func_return({b.convolution(f->arg(0), k, o)});
  auto exe = exec::make_backend("cpu")->load(m);
  Tensor x(DType::kF32, xs), w(DType::kF32, ws);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 13) * 0.01f;
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>(i % 11) * 0.01f;
  std::vector<Tensor> in{x, w};
  return flops / bench::time_median([&] { exe->run("main", in); }) / 1e9;
}

}  // namespace

// The stride-1 3x3 convs of the peer nets (resnet18-cifar b32, resnet50 b16, mnist-cnn b128),
// forward, input-gradient and weight-gradient form, on oneDNN's direct kernels and on netspec's own
// Winograd (exec/cpu/conv/winograd.h) and the default choice, ms per call (NCHW operands, so both include the reorders to
// and from channel blocks). Run with ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 machine to see the AVX2
// pair.
void winograd_table() {
  struct Conv {
    const char* net;
    int64_t n, c, o, hw;
  };
  const Conv convs[] = {{"resnet18", 32, 64, 64, 32},   {"resnet18", 32, 128, 128, 16},
                        {"resnet18", 32, 256, 256, 8},  {"resnet18", 32, 512, 512, 4},
                        {"resnet50", 16, 64, 64, 56},   {"resnet50", 16, 128, 128, 28},
                        {"resnet50", 16, 256, 256, 14}, {"resnet50", 16, 512, 512, 7},
                        {"mnist", 128, 32, 32, 28},     {"mnist", 128, 32, 64, 14},
                        {"mnist", 128, 64, 64, 14}};
  std::printf(
      "3x3 stride-1 convs, ms per call: direct / default (by shape and CPU) / own Winograd "
      "(forward, input and weight gradients)\n");
  for (const Conv& k : convs) {
    hlo::ConvOptions o;
    o.dims = hlo::ConvOptions::nchw(2);
    o.padding = {{1, 1}, {1, 1}};
    hlo::ConvOptions dx = o;  // dy (o channels) with reverse(w) back to c channels
    dx.dims.kernel_input_feature = 0, dx.dims.kernel_output_feature = 1;
    hlo::ConvOptions dw;  // x as [C, N, H, W] with dy as the kernel [N, O, H, W]: dW [O, C, 3, 3]
    dw.dims.input_batch = 1, dw.dims.input_feature = 0, dw.dims.input_spatial = {2, 3};
    dw.dims.kernel_input_feature = 0, dw.dims.kernel_output_feature = 1;
    dw.dims.kernel_spatial = {2, 3};
    dw.dims.output_batch = 1, dw.dims.output_feature = 0, dw.dims.output_spatial = {2, 3};
    dw.padding = {{1, 1}, {1, 1}};
    const double flops = 2.0 * k.n * k.c * k.hw * k.hw * k.o * 9;
    double ms[3][3];
    const char* modes[3] = {"0", "", "own"};  // "": the default choice by shape and CPU
    for (int m = 0; m < 3; ++m) {
      ::setenv("NETSPEC_CPU_WINOGRAD", modes[m], 1);
      ms[m][0] =
          1e3 * flops / 1e9 / conv_gflops({k.n, k.c, k.hw, k.hw}, {k.o, k.c, 3, 3}, o, flops);
      ms[m][1] = 1e3 * flops / 1e9 /
                 conv_gflops({k.n, k.o, k.hw, k.hw}, {k.o, k.c, 3, 3}, dx, flops, true);
      ms[m][2] = 1e3 * flops / 1e9 /
                 conv_gflops({k.n, k.c, k.hw, k.hw}, {k.n, k.o, k.hw, k.hw}, dw, flops);
    }
    ::unsetenv("NETSPEC_CPU_WINOGRAD");
    std::printf("  %-8s b%-3ld %3ld->%-3ld @%-2ld ", k.net, static_cast<long>(k.n),
                static_cast<long>(k.c), static_cast<long>(k.o), static_cast<long>(k.hw));
    const char* form[3] = {"fwd", "dx", "dW"};
    for (int f = 0; f < 3; ++f)
      std::printf("  %s %6.2f / %6.2f / %6.2f", form[f], ms[0][f], ms[1][f], ms[2][f]);
    std::printf("\n");
  }
}

int main(int argc, char** argv) {
  netspec::ensure_library_environment(argv, /*openblas=*/true);
  if (argc > 1 && std::string_view(argv[1]) == "winograd") {
    winograd_table();
    return 0;
  }
  bench::SgemmBest s = bench::measure_sgemm();
  hlo::ConvOptions o;
  o.dims = hlo::ConvOptions::nchw(2);
  o.padding = {{1, 1}, {1, 1}};
  const double flops = 2.0 * 8 * 64 * 56 * 56 * 64 * 9;
  double fwd = conv_gflops({8, 64, 56, 56}, {64, 64, 3, 3}, o, flops);
  // Transposed: dy 8x64x28x28 dilated by 2, pad (1, 2) -> 56x56 (the dx of a stride-2 conv).
  hlo::ConvOptions t;
  t.dims = hlo::ConvOptions::nchw(2);
  t.lhs_dilation = {2, 2};
  t.padding = {{1, 2}, {1, 2}};
  double bwd = conv_gflops({8, 64, 28, 28}, {64, 64, 3, 3}, t, 2.0 * 8 * 64 * 28 * 28 * 64 * 9);
  bench::print_sgemm(s);
  std::printf("cpu executor conv 3x3 64->64 56x56 b8 NCHW : %7.1f GFLOP/s   = %.0f %% of the best sgemm (target >= 50 %%)\n",
              fwd, 100.0 * fwd / s.best());
  std::printf("cpu executor transposed conv (lhs_dil 2)   : %7.1f GFLOP/s   = %.0f %% of the best sgemm\n", bwd,
              100.0 * bwd / s.best());
  return 0;
}
