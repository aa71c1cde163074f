#include "core/process_env.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace netspec {

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
  setenv("OMP_WAIT_POLICY", "passive", 0);
  if (set_blas) export_openblas_coretype();
  execv("/proc/self/exe", argv);
  std::perror("netspec: re-exec with library environment failed; continuing");
}

}  // namespace netspec
