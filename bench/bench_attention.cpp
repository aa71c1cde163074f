// Time and memory of dense vs flash attention on the cpu executor at n = 256, 1024, 4096 (B = 1,
// H = 2, dh = 64, causal), forward and forward+backward (the probe modules of emit/probes.h).
// Per case:
//   arena: the cpu planner's arena bytes (exec/cpu plan_stats) for @main, including the arenas
//          of its sub-plans (the called flash forward function and the while bodies).
//   peak:  measured growth of the process's peak RSS (getrusage ru_maxrss) during the first run,
//          in a forked child per case, so it includes the inputs' copies and results.
//   first: seconds of the first run (planning, oneDNN primitive creation); median: seconds per
//          run over the later runs. flash/dense: the flash probe's median over the dense one's.
// Dense holds [n, n] scores (n² growth); causal flash holds [block, block] tiles plus O(n) state
// (n·block memory overall; block = the largest divisor of n up to 256).
// Usage: bench_attention [--heads H] [--runs R] [--block B] [n ...]
//   (default H 2, R 5, B 0 = the largest divisor of n up to 256, n 256 1024 4096)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/process_env.h"
#include "emit/probes.h"
#include "exec/backend.h"
#include "exec/cpu/cpu_backend.h"

using namespace netspec;

namespace {

struct Result {
  double arena_mib = 0, peak_mib = 0, first_s = 0, median_s = 0;
};
int64_t g_heads = 2, g_runs = 5, g_block = 0;

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
  p.heads = g_heads;
  p.head_dim = 64;
  p.causal = true;
  p.block = g_block;
  emit::Emitted e = emit::emit_attention_probe(p);
  Result r;
  // @main's plan holds the called flash function's and the while bodies' sub-plans.
  r.arena_mib = double(exec::cpu::plan_stats(*e.module->entry("main")).arena_bytes) / (1 << 20);
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
  std::vector<double> times;
  for (int64_t k = 0; k < std::max<int64_t>(g_runs, 2); ++k) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<Tensor> out = exe->run("main", in);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (k == 0) r.peak_mib = max_rss_mib() - before;
  }
  r.first_s = times[0];
  times.erase(times.begin());
  std::sort(times.begin(), times.end());
  r.median_s = times[times.size() / 2];
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
  netspec::ensure_library_environment(argv);  // OMP_WAIT_POLICY=passive, as netspec runs
  std::vector<int64_t> ns;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const bool opt = a == "--heads" || a == "--runs" || a == "--block";
    const char* v = opt && i + 1 < argc ? argv[++i] : a.c_str();
    char* end = nullptr;
    const long long x = std::strtoll(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < 0) {
      std::fprintf(stderr, "usage: bench_attention [--heads H] [--runs R] [--block B] [n ...]\n");
      return 2;
    }
    if (!opt)
      ns.push_back(x);
    else
      (a == "--heads" ? g_heads : a == "--runs" ? g_runs : g_block) = x;
  }
  if (ns.empty()) ns = {256, 1024, 4096};
  std::printf(
      "attention on the cpu executor (B=1, H=%lld, dh=64, causal, f32, block=%s; median of %lld "
      "runs after the first)\n",
      (long long)g_heads, g_block ? std::to_string(g_block).c_str() : "<= 256",
      (long long)std::max<int64_t>(g_runs - 1, 1));
  std::printf("%-11s %6s %10s %10s %9s %9s %11s\n", "probe", "n", "arena MiB", "peak MiB",
              "first s", "median s", "flash/dense");
  std::map<std::pair<std::string, int64_t>, double> median;
  for (const char* probe : {"dense", "flash", "dense-grad", "flash-grad"})
    for (int64_t n : ns) {
      Result r;
      if (!run_case(probe, n, r)) {
        std::printf("%-11s %6lld  failed\n", probe, (long long)n);
        continue;
      }
      std::string name = probe;
      median[{name, n}] = r.median_s;
      std::string ratio;
      if (name.rfind("flash", 0) == 0) {
        auto d = median.find({"dense" + name.substr(5), n});
        if (d != median.end() && d->second > 0) ratio = std::to_string(r.median_s / d->second);
      }
      std::printf("%-11s %6lld %10.1f %10.1f %9.3f %9.4f %11.5s\n", probe, (long long)n,
                  r.arena_mib, r.peak_mib, r.first_s, r.median_s, ratio.c_str());
      std::fflush(stdout);
    }
  return 0;
}
