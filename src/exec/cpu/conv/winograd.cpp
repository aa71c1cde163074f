// Plans and threads winograd.h's kernels. Two schedules:
// - per chunk (small weights): each worker takes chunks of tiles and runs input transform,
//   the 36 products and the output transform on its own chunk, whose V and M stay in its L2;
//   U (36 C O floats) is read once per chunk, so this is taken while U is small (<= 4 MiB).
// - in passes (large weights, few tiles: resnet's 256 and 512-channel stages): every phase over
//   all tiles of a pass, split over the workers (tiles for the transforms, (plane, 16 outputs)
//   for the products), so U is read once per pass; a pass holds as many tiles as 32 MiB of V
//   and M allow (all of them on resnet's shapes).
#include "exec/cpu/conv/winograd.h"

#include <algorithm>
#include <atomic>

#include "core/thread_pool.h"
#include "exec/cpu/dnnl_util.h"

namespace netspec::exec::cpu {
namespace {

size_t al(size_t n) { return (n + 63) / 64 * 64; }
size_t floats(int64_t n) { return al(static_cast<size_t>(n) * sizeof(float)); }

// A chunk's V and M together, about half of a 1-2 MiB L2.
constexpr int64_t kChunkBytes = 640 << 10;
constexpr int64_t kMaxChunkU = 4 << 20;
constexpr int64_t kGrainSum = 1 << 15;
// A weight-gradient block (WinogradGradPlan::blocks): its output rows (a multiple of both
// kernels' row groups, 6 and 12), its input channels, and the most bytes its X and D slices take.
constexpr int64_t kBlockRows = 48, kBlockCols = 64, kBlockSlicesBytes = 768 << 10;

// The kernels a plan runs, chosen in this one place: the kernel's transform and the products
// 16 lanes wide with `avx512_products` (same bits either way), the data transforms for the
// activations' channel block (WinogradShape::block: nChw16c or nChw8c).
struct Kernels {
  decltype(&wino_avx2::weights) weights = wino_avx2::weights;
  decltype(&wino_avx2::multiply) multiply = wino_avx2::multiply;
  decltype(&wino_avx2::grad_multiply) grad_multiply = wino_avx2::grad_multiply;
  decltype(&wino_avx2::grad_multiply_block) grad_multiply_block = wino_avx2::grad_multiply_block;
  decltype(&wino_avx2::input) input = wino_avx2::input;
  decltype(&wino_avx2::output) output = wino_avx2::output;
  decltype(&wino_avx2::grad_input) grad_input = wino_avx2::grad_input;
};
Kernels kernels_for(const WinogradShape& s, bool avx512_products) {
  Kernels k;
  if (avx512_products) {
    k.weights = wino_avx512::weights;
    k.multiply = wino_avx512::multiply;
    k.grad_multiply = wino_avx512::grad_multiply;
    k.grad_multiply_block = wino_avx512::grad_multiply_block;
  }
  if (s.block == 16) {
    k.input = wino_avx512::input16;
    k.output = wino_avx512::output16;
    k.grad_input = wino_avx512::grad_input16;
  }
  return k;
}

}  // namespace

bool winograd_avx2_runs() {
  static const bool runs = [] {
    __builtin_cpu_init();
    return wino_avx2::built() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return runs;
}

bool winograd_avx512_products() {
  static const bool runs = own_avx512_kernels("NETSPEC_WINO_AVX512", wino_avx512::built());
  return runs;
}

WinogradPlan plan_winograd(const WinogradShape& s, const WinogradWeights& w, int threads,
                           int64_t pass_bytes) {
  WinogradPlan p;
  p.s = s;
  p.w = w;
  p.threads = std::max(1, threads);
  p.avx512_products = winograd_avx512_products();
  const int64_t T = s.tiles(), per_tile = 36 * (s.C + s.O) * 4;
  int64_t chunk = std::max<int64_t>(6, kChunkBytes / per_tile / 6 * 6);
  const int64_t u_bytes = 36 * s.C * s.O * 4;
  p.per_chunk = u_bytes <= kMaxChunkU && T >= 2 * p.threads * chunk;
  if (!p.per_chunk) chunk = std::min(T, std::max<int64_t>(6, pass_bytes / per_tile));
  p.chunk = chunk;
  const int64_t areas = p.per_chunk ? p.threads : 1;
  p.scratch_bytes =
      floats(36 * s.C * s.O) +
      static_cast<size_t>(areas) * (floats(36 * chunk * s.C) + floats(36 * chunk * s.O));
  return p;
}

void WinogradPlan::transform_weights(const float* w, float* u) const {
  const auto weights = kernels_for(s, avx512_products).weights;
  parallel_for(s.C, std::max<int64_t>(1, s.C / (4 * threads)),
               [&](int64_t b, int64_t e) { weights(w, this->w, s.C, s.O, b, e, u); });
}

void WinogradPlan::run(const float* x, const float* w, float* y, uint8_t* scratch,
                       const float* u) const {
  const int64_t C = s.C, O = s.O, OB = O / 16, T = s.tiles();
  const Kernels k = kernels_for(s, avx512_products);
  uint8_t* work = scratch + floats(36 * C * O);
  if (!u) {
    transform_weights(w, reinterpret_cast<float*>(scratch));
    u = reinterpret_cast<const float*>(scratch);
  }
  const float* U = u;
  const size_t v_bytes = floats(36 * chunk * C), m_bytes = floats(36 * chunk * O);
  if (per_chunk) {
    const int64_t n_chunks = (T + chunk - 1) / chunk;
    std::atomic<int64_t> next{0};
    parallel_for(threads, 1, [&](int64_t b, int64_t e) {
      for (int64_t id = b; id < e; ++id) {
        auto* V = reinterpret_cast<float*>(work + static_cast<size_t>(id) * (v_bytes + m_bytes));
        auto* M = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(V) + v_bytes);
        for (int64_t c; (c = next.fetch_add(1)) < n_chunks;) {
          const int64_t t0 = c * chunk, nt = std::min(chunk, T - t0);
          k.input(s, x, t0, nt, V, chunk * C);
          k.multiply(V, chunk * C, U, M, chunk * O, nt, C, O, 0, 36, 0, OB);
          k.output(s, M, chunk * O, t0, nt, y);
        }
      }
    });
    return;
  }
  auto* V = reinterpret_cast<float*>(work);
  auto* M = reinterpret_cast<float*>(work + v_bytes);
  for (int64_t t0 = 0; t0 < T; t0 += chunk) {
    const int64_t nt = std::min(chunk, T - t0), grain = std::max<int64_t>(1, nt / (4 * threads));
    parallel_for(nt, grain, [&](int64_t b, int64_t e) {
      k.input(s, x, t0 + b, e - b, V + b * C, chunk * C);
    });
    parallel_for(36 * OB, 1, [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j)
        k.multiply(V, chunk * C, U, M, chunk * O, nt, C, O, j / OB, j / OB + 1, j % OB,
                   j % OB + 1);
    });
    parallel_for(nt, grain, [&](int64_t b, int64_t e) {
      k.output(s, M + b * O, chunk * O, t0 + b, e - b, y);
    });
  }
}

WinogradGradPlan plan_winograd_grad(const WinogradShape& s, const WinogradWeights& dw, int threads,
                                    int64_t pass_bytes) {
  WinogradGradPlan p;
  p.s = s;
  p.dw = dw;
  p.threads = std::max(1, threads);
  p.avx512_products = winograd_avx512_products();
  const int64_t T = s.tiles(), per_tile = 36 * (s.C + s.O) * 4, p_bytes = 36 * s.O * s.C * 4;
  const int64_t small = std::max<int64_t>(6, kChunkBytes / per_tile / 6 * 6);
  p.per_thread = p_bytes <= kMaxChunkU && T >= 2 * p.threads * small;
  p.chunk = p.per_thread ? small : std::min(T, std::max<int64_t>(6, pass_bytes / per_tile));
  const size_t xd = floats(36 * p.chunk * s.C) + floats(36 * p.chunk * s.O);
  // Blocks re-read their X and D slices per block instead of writing and reading P: they pay
  // where P is large and a block's slices fit in L2 with room to spare (AMD Zen 5, session 32:
  // 512 channels at 4x4 b32, 32 tiles, 4.9 -> 4.0 ms; 256 at 14x14 b16, 256 tiles, 6.9 -> 9.5).
  p.blocks =
      !p.per_thread && p.chunk >= T && 36 * T * (kBlockRows + kBlockCols) * 4 <= kBlockSlicesBytes;
  p.scratch_bytes =
      p.blocks ? xd + static_cast<size_t>(p.threads) * floats(36 * kBlockRows * kBlockCols)
               : (floats(36 * s.O * s.C) + xd) * static_cast<size_t>(p.per_thread ? p.threads : 1);
  return p;
}

// Per thread (small P, many tiles): worker k takes chunks k, k + threads, ... (a fixed order, so
// the sums do not depend on timing) and accumulates them into its own P while its X and D stay in
// L2; the workers' P are then added. In passes: X and D of a pass's tiles (split over tiles), then
// the products accumulated into P (split over (plane, 16 input channels)). At the end dW from P
// (split over output channels).
void WinogradGradPlan::run(const float* x, const float* dy, float* dw_out, uint8_t* scratch) const {
  const int64_t C = s.C, O = s.O, CB = C / 16, T = s.tiles();
  const Kernels k = kernels_for(s, avx512_products);
  if (blocks) {  // X and D of every tile, then each block's products and dW (no P of 36 O C)
    auto* X = reinterpret_cast<float*>(scratch);
    auto* D = reinterpret_cast<float*>(scratch + floats(36 * chunk * C));
    uint8_t* pb = scratch + floats(36 * chunk * C) + floats(36 * chunk * O);
    const int64_t grain = std::max<int64_t>(1, T / (4 * threads));
    parallel_for(T, grain, [&](int64_t b, int64_t e) {
      k.input(s, x, b, e - b, X + b * C, chunk * C);
      k.grad_input(s, dy, b, e - b, D + b * O, chunk * O);
    });
    const int64_t col_blocks = (C + kBlockCols - 1) / kBlockCols;
    const int64_t n_blocks = (O + kBlockRows - 1) / kBlockRows * col_blocks;
    const int64_t ldp = kBlockRows * kBlockCols;
    std::atomic<int64_t> next{0};
    parallel_for(threads, 1, [&](int64_t b, int64_t e) {
      for (int64_t id = b; id < e; ++id) {
        auto* Pb = reinterpret_cast<float*>(pb + static_cast<size_t>(id) * floats(36 * ldp));
        for (int64_t q; (q = next.fetch_add(1)) < n_blocks;) {  // each block's sums are its own
          const int64_t o0 = q / col_blocks * kBlockRows, o1 = std::min(O, o0 + kBlockRows);
          const int64_t c0 = q % col_blocks * kBlockCols, c1 = std::min(C, c0 + kBlockCols);
          k.grad_multiply_block(D, chunk * O, X, chunk * C, T, C, O, o0, o1, c0, c1, Pb, ldp,
                                kBlockCols);
          wino_avx2::grad_output_block(Pb, ldp, kBlockCols, o0, o1, c0, c1, dw, dw_out);
        }
      }
    });
    return;
  }
  const size_t p_bytes = floats(36 * O * C), x_bytes = floats(36 * chunk * C);
  const size_t area = p_bytes + x_bytes + floats(36 * chunk * O);
  auto P_of = [&](int64_t id) { return reinterpret_cast<float*>(scratch + id * area); };
  auto X_of = [&](int64_t id) { return reinterpret_cast<float*>(scratch + id * area + p_bytes); };
  auto D_of = [&](int64_t id) {
    return reinterpret_cast<float*>(scratch + id * area + p_bytes + x_bytes);
  };
  float* P = P_of(0);
  if (per_thread) {
    const int64_t n_chunks = (T + chunk - 1) / chunk;
    parallel_for(threads, 1, [&](int64_t b, int64_t e) {
      for (int64_t id = b; id < e; ++id)
        for (int64_t c = id; c < n_chunks; c += threads) {
          const int64_t t0 = c * chunk, nt = std::min(chunk, T - t0);
          k.input(s, x, t0, nt, X_of(id), chunk * C);
          k.grad_input(s, dy, t0, nt, D_of(id), chunk * O);
          k.grad_multiply(D_of(id), chunk * O, X_of(id), chunk * C, P_of(id), nt, C, O, 0, 36, 0,
                          CB, c >= threads);
        }
    });
    const int64_t used = std::min<int64_t>(threads, n_chunks), n = 36 * O * C;
    parallel_for(n, kGrainSum, [&](int64_t b, int64_t e) {
      for (int64_t id = 1; id < used; ++id) {
        const float* q = P_of(id);
        for (int64_t i = b; i < e; ++i) P[i] += q[i];
      }
    });
  } else {
    float *X = X_of(0), *D = D_of(0);
    for (int64_t t0 = 0; t0 < T; t0 += chunk) {
      const int64_t nt = std::min(chunk, T - t0), grain = std::max<int64_t>(1, nt / (4 * threads));
      parallel_for(nt, grain, [&](int64_t b, int64_t e) {
        k.input(s, x, t0 + b, e - b, X + b * C, chunk * C);
        k.grad_input(s, dy, t0 + b, e - b, D + b * O, chunk * O);
      });
      parallel_for(36 * CB, 1, [&](int64_t b, int64_t e) {
        for (int64_t j = b; j < e; ++j)
          k.grad_multiply(D, chunk * O, X, chunk * C, P, nt, C, O, j / CB, j / CB + 1, j % CB,
                          j % CB + 1, t0 > 0);
      });
    }
  }
  parallel_for(O, std::max<int64_t>(1, O / (4 * threads)),
               [&](int64_t b, int64_t e) { wino_avx2::grad_output(P, C, O, b, e, dw, dw_out); });
}

}  // namespace netspec::exec::cpu
