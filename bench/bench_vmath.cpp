// Vector vs scalar f32 exp, log, tanh, logistic, erf, log1p (exec/cpu/kernels/vmath.h vs exec/scalar_ops.h) on
// one thread: ns per element over 64 Ki values (L2-resident), best of 20 passes, for every variant
// this CPU runs. Usage: bench_vmath
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "exec/cpu/kernels/vmath.h"
#include "exec/scalar_ops.h"

using namespace netspec;
using namespace netspec::exec::cpu;
using hlo::OpKind;

namespace {

template <typename F>
double best_ns(F f, int64_t n) {
  double best = 1e30;
  for (int rep = 0; rep < 20; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
        static_cast<double>(n);
    best = std::min(best, ns);
  }
  return best;
}

template <OpKind K>
void row(const char* name, const std::vector<float>& x, std::vector<float>& y,
         std::initializer_list<std::pair<const char*, VecUnaryFn>> vecs) {
  const int64_t n = static_cast<int64_t>(x.size());
  double s = best_ns(
      [&] {
        for (int64_t i = 0; i < n; ++i) y[size_t(i)] = exec::Scalar<K>::apply(x[size_t(i)]);
      },
      n);
  std::printf("%-9s scalar %6.2f ns", name, s);
  for (auto [isa, f] : vecs)
    if (f) {
      double v = best_ns([&] { f(y.data(), x.data(), n); }, n);
      std::printf("   %s %6.3f ns (%4.1fx)", isa, v, s / v);
    }
  std::printf("\n");
}

}  // namespace

int main() {
  const int64_t n = 1 << 16;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = -20.f + 40.f * float(i) / float(n);
  std::vector<float> xp(n);  // log: positive values
  for (int64_t i = 0; i < n; ++i) xp[size_t(i)] = 1e-3f + 100.f * float(i) / float(n);
  __builtin_cpu_init();
  const bool has512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  const bool has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  VecMath a5 = has512 ? vec_math_avx512() : VecMath{}, a2 = has2 ? vec_math_avx2() : VecMath{};
  std::printf("f32 transcendental kernels, 1 thread, %lld values (run-time choice: %s)\n",
              (long long)n, vec_math_isa());
  row<OpKind::kExponential>("exp", x, y, {{"avx512", a5.exp}, {"avx2", a2.exp}});
  row<OpKind::kLog>("log", xp, y, {{"avx512", a5.log}, {"avx2", a2.log}});
  row<OpKind::kTanh>("tanh", x, y, {{"avx512", a5.tanh}, {"avx2", a2.tanh}});
  row<OpKind::kLogistic>("logistic", x, y, {{"avx512", a5.logistic}, {"avx2", a2.logistic}});
  row<OpKind::kErf>("erf", x, y, {{"avx512", a5.erf}, {"avx2", a2.erf}});
  std::vector<float> x1(n);  // log1p: softplus's arguments e^-|x| in (0, 1]
  for (int64_t i = 0; i < n; ++i) x1[size_t(i)] = 1e-4f + float(i) / float(n);
  row<OpKind::kLogPlusOne>("log1p", x1, y, {{"avx512", a5.log1p}, {"avx2", a2.log1p}});
  return 0;
}
