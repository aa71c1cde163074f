// Process environment that libraries read only when they load. netspec's kernels and oneDNN's
// primitives share libgomp's threads (core/thread_pool.cpp); a short active spin between them
// (OMP_WAIT_POLICY=active, a GOMP_SPINCOUNT of 3000, now 30000) made the mlp step ~25 % faster on an idle
// machine, while libgomp's default long spin had cost 2-6x on a loaded one when a second pool
// fought it (docs/performance.md). netspec's main() re-executes itself once with them set;
// On a machine that other processes already keep busy it picks passive instead (no spin); an
// OMP_WAIT_POLICY the user gives is kept as it is.
// Debian 12's OpenBLAS 0.3.21 picks generic kernels (~4x slower) on Intel AVX-512 generations it
// does not know (Sapphire/Emerald Rapids); netspec does not load OpenBLAS, but the benchmarks do
// and the tests' Python reference children (Debian's torch) do: openblas_coretype() decides for
// them from the CPU found at run time.
#pragma once

namespace netspec {

// The OPENBLAS_CORETYPE for a process that loads OpenBLAS: the user's value when set; else
// "SkylakeX" when this CPU has AVX-512 F/BW/DQ/VL (the ISA those kernels use); else nullptr
// (an AVX2-only CPU, where OpenBLAS's own detection is right and SkylakeX would be SIGILL).
const char* openblas_coretype();

// Puts openblas_coretype() into this process's environment when it is not there, so that the
// children started after it (python with torch) inherit it.
void export_openblas_coretype();

// Share of all CPUs' time spent busy (not idle or iowait) over the next `ms` milliseconds,
// machine-wide (/proc/stat); -1 when /proc/stat cannot be read.
double machine_busy_fraction(int ms);
// "passive" when other work keeps at least half the CPUs busy (busy_fraction >= 0.5), else
// "active" (also for -1: unknown).
const char* wait_policy_for(double busy_fraction);

// Sets OMP_WAIT_POLICY (wait_policy_for the machine's load, sampled for 30 ms; with "active" also
// GOMP_SPINCOUNT=30000) and, with `openblas`, exports openblas_coretype(), when absent, and
// re-executes /proc/self/exe with argv; returns normally when nothing had to be set, when
// NETSPEC_NO_REEXEC is set, or when exec fails. User-set values are kept.
void ensure_library_environment(char** argv, bool openblas = false);

}  // namespace netspec
