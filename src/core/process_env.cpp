#include "core/process_env.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace netspec {

namespace {
// libgomp's spin before a worker sleeps: ~3000 polls (a few microseconds) bridge the gap
// between one kernel and the next; libgomp's own default (300000 polls, or unbounded with
// OMP_WAIT_POLICY=active) held the cores long after the work on a shared machine.
constexpr const char* kSpinCount = "3000";
}  // namespace

const char* openblas_coretype() {
  if (const char* v = std::getenv("OPENBLAS_CORETYPE"); v && *v) return v;
  __builtin_cpu_init();
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return avx512 ? "SkylakeX" : nullptr;
}

void export_openblas_coretype() {
  if (const char* v = openblas_coretype()) setenv("OPENBLAS_CORETYPE", v, 0);
}

void ensure_library_environment(char** argv, bool openblas) {
  if (std::getenv("NETSPEC_NO_REEXEC")) return;
  bool set_omp = !std::getenv("OMP_WAIT_POLICY");
  bool set_blas = openblas && !std::getenv("OPENBLAS_CORETYPE") && openblas_coretype();
  if (!set_omp && !set_blas) return;
  if (set_omp) {
    setenv("OMP_WAIT_POLICY", "active", 0);
    setenv("GOMP_SPINCOUNT", kSpinCount, 0);
  }
  if (set_blas) export_openblas_coretype();
  execv("/proc/self/exe", argv);
  std::perror("netspec: re-exec with library environment failed; continuing");
}

}  // namespace netspec
