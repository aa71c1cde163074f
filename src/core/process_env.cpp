#include "core/process_env.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace netspec {

namespace {
// libgomp's spin before a worker sleeps: 30000 polls (well under a millisecond) bridge the gap
// between one kernel and the next, also the many small ones of a scan's loop body (quiet Intel
// host, session 21: mamba-lm 635 -> 580-616 ms, vit-cifar-tiny 50.3-50.8 -> 48.5-49.8 ms against
// 3000 polls; mnist-cnn unchanged); libgomp's own default (300000 polls, or unbounded with
// OMP_WAIT_POLICY=active) held the cores long after the work on a shared machine, and a machine
// others keep busy gets no spin at all (passive, below).
constexpr const char* kSpinCount = "30000";
// Passive (no spin) when other processes kept at least half the CPUs busy over the sample.
constexpr double kBusyForPassive = 0.5;
constexpr int kBusySampleMs = 30;
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

namespace {
// Busy and total jiffies of all CPUs (/proc/stat's first line); false when unreadable.
bool cpu_jiffies(unsigned long long& busy, unsigned long long& total) {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return false;
  unsigned long long v[8] = {};
  const int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                            &v[3], &v[4], &v[5], &v[6], &v[7]);
  std::fclose(f);
  if (n < 4) return false;
  total = 0;
  for (unsigned long long x : v) total += x;
  busy = total - v[3] - v[4];  // all but idle and iowait
  return true;
}
}  // namespace

double machine_busy_fraction(int ms) {
  unsigned long long b0, t0, b1, t1;
  if (!cpu_jiffies(b0, t0)) return -1;
  usleep(static_cast<useconds_t>(ms) * 1000);
  if (!cpu_jiffies(b1, t1) || t1 <= t0) return -1;
  return static_cast<double>(b1 - b0) / static_cast<double>(t1 - t0);
}

const char* wait_policy_for(double busy_fraction) {
  return busy_fraction >= kBusyForPassive ? "passive" : "active";
}

void ensure_library_environment(char** argv, bool openblas) {
  if (std::getenv("NETSPEC_NO_REEXEC")) return;
  bool set_omp = !std::getenv("OMP_WAIT_POLICY");
  bool set_blas = openblas && !std::getenv("OPENBLAS_CORETYPE") && openblas_coretype();
  if (!set_omp && !set_blas) return;
  if (set_omp) {
    // Spin only on a machine that other work is not already keeping busy (sampled now, before
    // this process does anything): spinning workers there slow both sides.
    const char* policy = wait_policy_for(machine_busy_fraction(kBusySampleMs));
    setenv("OMP_WAIT_POLICY", policy, 0);
    if (std::string_view(policy) == "active") setenv("GOMP_SPINCOUNT", kSpinCount, 0);
  }
  if (set_blas) export_openblas_coretype();
  execv("/proc/self/exe", argv);
  std::perror("netspec: re-exec with library environment failed; continuing");
}

}  // namespace netspec
