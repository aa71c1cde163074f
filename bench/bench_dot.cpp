// Benchmark (not a test): the cpu executor's dot_general at 1024x1024x1024 f32, in GFLOP/s,
// beside the best sgemm of this machine measured in the same run. Target: >= 70 % of it.
// Run: build/<dir>/bench/bench_dot
#include <memory>

#include "bench/bench_util.h"
#include "exec/backend.h"
#include "hlo/builder.h"

using namespace netspec;

int main(int, char** argv) {
  netspec::ensure_library_environment(argv, /*openblas=*/true);
  const int64_t n = 1024;
  auto m = std::make_shared<hlo::Module>();
  hlo::Type t = hlo::Type::tensor(DType::kF32, {n, n});
  hlo::Func* f = m->add_func("main", {t, t});
  hlo::Builder b(f->body.get());
  hlo::DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  b.func_return({b.dot_general(f->arg(0), f->arg(1), d)});
  auto exe = exec::make_backend("cpu")->load(m);
  Tensor x(DType::kF32, {n, n}), y(DType::kF32, {n, n});
  for (int64_t i = 0; i < n * n; ++i) x.data<float>()[i] = static_cast<float>(i % 7) * 0.1f, y.data<float>()[i] = static_cast<float>(i % 5) * 0.2f;
  std::vector<Tensor> in{x, y};
  double flops = 2.0 * n * n * n;
  bench::SgemmBest s = bench::measure_sgemm(static_cast<int>(n));
  double exec_gf = flops / bench::time_median([&] { exe->run("main", in); }) / 1e9;
  bench::print_sgemm(s);
  std::printf("cpu executor dot_general 1024^3   : %7.1f GFLOP/s   = %.0f %% of the best sgemm (target >= 70 %%)\n",
              exec_gf, 100.0 * exec_gf / s.best());
  return 0;
}
