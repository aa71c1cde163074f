// The machine's f32 peak for issue 42's "share of peak" column: an FMA-bound loop (no memory
// traffic: 16 independent accumulator registers, each fed `acc = acc * a + b`, so the loop is
// bound by FMA throughput, not latency) on 1 thread and on every CPU at once; best of 5 passes.
// 2 FLOPs per lane per FMA. The widest ISA the CPU runs is used (AVX-512, else AVX2+FMA).
// Usage: bench_peak [threads]   (default: all CPUs)
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr long kIters = 20'000'000;  // FMAs per accumulator per pass

// Returns FLOPs done; the accumulators are summed into `sink` so the loop is not dead code.
__attribute__((target("avx512f"))) double fma_avx512(float* sink) {
  __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (long k = 0; k < kIters; ++k)
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  *sink = lanes[0] + lanes[15];
  return 2.0 * 16 * 16 * static_cast<double>(kIters);
}

__attribute__((target("avx2,fma"))) double fma_avx2(float* sink) {
  __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  __m256 acc[12];  // AVX2 has 16 ymm registers: 12 accumulators + a, b
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  for (long k = 0; k < kIters; ++k)
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  *sink = lanes[0] + lanes[7];
  return 2.0 * 8 * 12 * static_cast<double>(kIters);
}

// GFLOP/s of `threads` threads each running one pass at once; best of 5 passes.
double measure(int threads, bool avx512) {
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    std::vector<float> sink(static_cast<size_t>(threads));
    std::vector<double> flops(static_cast<size_t>(threads));
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < threads) {
        }
        flops[size_t(t)] = avx512 ? fma_avx512(&sink[size_t(t)]) : fma_avx2(&sink[size_t(t)]);
      });
    for (auto& th : pool) th.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double total = 0;
    for (double f : flops) total += f;
    best = std::max(best, total / s / 1e9);
    if (sink[0] == 12345.f) std::puts("");  // keeps the sums alive
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    std::fprintf(stderr, "bench_peak: this CPU has neither AVX-512 nor AVX2+FMA\n");
    return 2;
  }
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  if (argc > 1) threads = std::max(1, std::atoi(argv[1]));
  const double one = measure(1, avx512);
  const double all = threads > 1 ? measure(threads, avx512) : one;
  std::printf("peak f32 FMA (%s): 1 thread %.1f GFLOP/s, %d threads %.1f GFLOP/s\n",
              avx512 ? "avx512" : "avx2", one, threads, all);
  return 0;
}
