// Helpers shared by the benchmarks: wall-clock timing (median of repeats after warm-up), the
// OPENBLAS_CORETYPE re-exec (the variable only works when set before libopenblas loads, i.e.
// in the process environment), and the best single-precision GEMM of this machine measured in
// the same run (oneDNN's dnnl_sgemm and OpenBLAS's cblas_sgemm at 1024^3).
#pragma once
#include <dnnl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "core/process_env.h"

extern "C" {
// OpenBLAS (linked directly; Debian's cblas.h may belong to another BLAS alternative).
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc);
char* openblas_get_corename(void);
}

namespace bench {

// Median seconds of `reps` timed calls after `warm` untimed ones.
inline double time_median(const std::function<void()>& f, int warm = 3, int reps = 15) {
  for (int i = 0; i < warm; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct SgemmBest {
  double dnnl_gflops = 0, openblas_gflops = 0;
  double best() const { return std::max(dnnl_gflops, openblas_gflops); }
};

// C[n x n] = A B at n = 1024 with both libraries.
inline SgemmBest measure_sgemm(int n = 1024) {
  std::vector<float> a(static_cast<size_t>(n) * n), b(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.1f, b[i] = static_cast<float>(i % 5) * 0.2f;
  double flops = 2.0 * n * n * n;
  SgemmBest r;
  r.dnnl_gflops = flops / time_median([&] {
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  }) / 1e9;
  r.openblas_gflops = flops / time_median([&] {
    cblas_sgemm(101 /*RowMajor*/, 111 /*NoTrans*/, 111, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  }) / 1e9;
  return r;
}

inline void print_sgemm(const SgemmBest& s) {
  std::printf("sgemm 1024^3 dnnl_sgemm           : %7.1f GFLOP/s\n", s.dnnl_gflops);
  auto env = [](const char* n) { return std::getenv(n) ? std::getenv(n) : "unset"; };
  std::printf("sgemm 1024^3 OpenBLAS (%-10s): %7.1f GFLOP/s   [OPENBLAS_CORETYPE=%s OMP_WAIT_POLICY=%s]\n",
              openblas_get_corename(), s.openblas_gflops, env("OPENBLAS_CORETYPE"), env("OMP_WAIT_POLICY"));
}

}  // namespace bench
