// Memory of dense vs flash attention on the cpu executor at n = 256, 1024, 4096 (B = 1, H = 1,
// dh = 64, causal), forward and forward+backward (the probe modules of emit/probes.h).
// Two numbers per case:
//   arena: the cpu planner's arena bytes (exec/cpu plan_stats), summed over the module's
//          functions (@main and the flash forward callee). While-loop bodies run on the ref
//          interpreter, outside the arena, so their per-block tiles are not in this number.
//   peak:  measured growth of the process's peak RSS (getrusage ru_maxrss) during one run, in a
//          forked child per case, so it includes the loop bodies, the inputs' copies and results.
// Dense holds [n, n] scores (n² growth); flash holds [n, block] tiles (n·block, block = 128).
// Usage: bench_attention [n ...]   (default 256 1024 4096)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "emit/probes.h"
#include "exec/backend.h"
#include "exec/cpu/cpu_backend.h"

using namespace netspec;

namespace {

struct Result {
  double arena_mib = 0, peak_mib = 0, seconds = 0;
};

double max_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

// Runs in a forked child; writes the Result to `fd`.
void measure(const std::string& probe, int64_t n, int fd) {
  emit::AttentionProbe p;
  p.probe = probe;
  p.seq = n;
  p.heads = 1;
  p.head_dim = 64;
  p.causal = true;
  emit::Emitted e = emit::emit_attention_probe(p);
  Result r;
  for (const auto& f : e.module->funcs)
    r.arena_mib += double(exec::cpu::plan_stats(*f).arena_bytes) / (1 << 20);
  std::vector<Tensor> in;
  for (const auto& t : e.manifest.inputs) {
    Tensor x(t.dtype, t.shape);
    float* d = x.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) d[i] = float((i * 7919) % 1000) / 1000.0f - 0.5f;
    in.push_back(std::move(x));
  }
  auto exe =
      exec::make_backend("cpu")->load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
  double before = max_rss_mib();
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Tensor> out = exe->run("main", in);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.peak_mib = max_rss_mib() - before;
  if (write(fd, &r, sizeof r) != sizeof r) _exit(3);
}

bool run_case(const std::string& probe, int64_t n, Result& r) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    try {
      measure(probe, n, fds[1]);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "%s n=%lld: %s\n", probe.c_str(), (long long)n, ex.what());
      _exit(2);
    }
    _exit(0);
  }
  close(fds[1]);
  bool ok = read(fds[0], &r, sizeof r) == sizeof r;
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  return ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> ns;
  for (int i = 1; i < argc; ++i) ns.push_back(std::stoll(argv[i]));
  if (ns.empty()) ns = {256, 1024, 4096};
  std::printf("attention memory on the cpu executor (B=1, H=1, dh=64, causal, f32, block=128)\n");
  std::printf("%-11s %6s %12s %12s %9s\n", "probe", "n", "arena MiB", "peak MiB", "seconds");
  for (const char* probe : {"dense", "flash", "dense-grad", "flash-grad"})
    for (int64_t n : ns) {
      Result r;
      if (!run_case(probe, n, r)) {
        std::printf("%-11s %6lld  failed\n", probe, (long long)n);
        continue;
      }
      std::printf("%-11s %6lld %12.1f %12.1f %9.3f\n", probe, (long long)n, r.arena_mib, r.peak_mib,
                  r.seconds);
      std::fflush(stdout);
    }
  return 0;
}
