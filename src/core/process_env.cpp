#include "core/process_env.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace netspec {

void ensure_library_environment(char** argv) {
  if (std::getenv("NETSPEC_NO_REEXEC")) return;
  if (std::getenv("OPENBLAS_CORETYPE") && std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  setenv("OMP_WAIT_POLICY", "passive", 0);
  execv("/proc/self/exe", argv);
  std::perror("netspec: re-exec with library environment failed; continuing");
}

}  // namespace netspec
