// Process environment that libraries read only when they load. Debian 12's OpenBLAS 0.3.21
// misdetects this CPU generation (generic kernels, ~4x slower) unless OPENBLAS_CORETYPE is set;
// libgomp's default spin-waiting makes oneDNN's OpenMP threads fight our own thread pool for the
// cores (OMP_WAIT_POLICY=passive measured 2-6x faster convolutions under load, see
// docs/performance.md). Both must be in the environment before the libraries load, so main()
// re-executes the program once with them set (user-set values are kept).
#pragma once

namespace netspec {

// Sets OPENBLAS_CORETYPE=SkylakeX and OMP_WAIT_POLICY=passive when absent and re-executes
// /proc/self/exe with argv; returns normally when both are already set, when
// NETSPEC_NO_REEXEC is set, or when exec fails.
void ensure_library_environment(char** argv);

}  // namespace netspec
