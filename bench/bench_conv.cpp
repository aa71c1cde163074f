// Benchmark (not a test): the cpu executor's convolution 3x3 64->64 at 56x56, batch 8,
// NCHW/OIHW, stride 1, padding 1, in GFLOP/s, beside the best sgemm of this machine measured in
// the same run (target >= 50 % of it); also the transposed form (lhs_dilation 2, what the
// input-gradient of a stride-2 conv emits). Run: build/<dir>/bench/bench_conv
#include <memory>

#include "bench/bench_util.h"
#include "exec/backend.h"
#include "hlo/builder.h"

using namespace netspec;

namespace {

double conv_gflops(const Shape& xs, const Shape& ws, const hlo::ConvOptions& o, double flops) {
  auto m = std::make_shared<hlo::Module>();
  hlo::Func* f = m->add_func("main", {hlo::Type::tensor(DType::kF32, xs), hlo::Type::tensor(DType::kF32, ws)});
  hlo::Builder b(f->body.get());
  b.func_return({b.convolution(f->arg(0), f->arg(1), o)});
  auto exe = exec::make_backend("cpu")->load(m);
  Tensor x(DType::kF32, xs), w(DType::kF32, ws);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 13) * 0.01f;
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>(i % 11) * 0.01f;
  std::vector<Tensor> in{x, w};
  return flops / bench::time_median([&] { exe->run("main", in); }) / 1e9;
}

}  // namespace

int main(int, char** argv) {
  netspec::ensure_library_environment(argv, /*openblas=*/true);
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
