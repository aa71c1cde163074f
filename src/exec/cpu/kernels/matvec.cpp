// Batched matrix-vector products of dot_general (one free side of size 1: N = 1 or M = 1), f32.
// oneDNN's matmul pays a fixed cost per call (~tens of µs) that dominates the tiny products of a
// selective scan's loop body (mamba's sums over di: [32, 256, 16] · [32, 256] per time step;
// its sums over N fold into the state's fused group instead); these loops are
// memory-bound and run in one pass. Two storage forms of the matrix operand A:
//   rows:    A [B, L, K] (k contiguous):  y[b, l] = Σ_k A[b, l, k] · x[b, k]
//   columns: A [B, K, L] (l contiguous):  y[b, l] = Σ_k A[b, k, l] · x[b, k]
// Sums run in k order per output lane group (rows: 16 partial sums, then a halving tree; without
// AVX-512, 8 partial sums and a horizontal-add tree over 8 rows at once), so results differ from
// oneDNN's by f32 rounding only. NETSPEC_DOT_MATVEC=0 leaves every product to oneDNN.
#pragma GCC target("prefer-vector-width=512")
// GCC 12 flags the _mm256_undefined_ps() inside _mm512_reduce_add_ps as maybe-uninitialized,
// and the _mm512_undefined_ps() inside the masked-less shuffle intrinsics as uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "core/thread_pool.h"
#include "exec/cpu/dnnl_util.h"
#include "exec/cpu/kernels.h"

namespace netspec::exec::cpu {

bool matvec_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("NETSPEC_DOT_MATVEC");
    return !(e && std::string_view(e) == "0");
  }();
  return on;
}

namespace {

constexpr int64_t kLanes = 16;

// The AVX-512 forms only where oneDNN's effective ISA has it (ONEDNN_MAX_CPU_ISA=AVX2 caps them,
// as every run-time ISA choice of the executor).
[[maybe_unused]] bool wide() {  // unused where the compiler targets no AVX-512
  static const bool on = onednn_has_isa(dnnl::cpu_isa::avx512_core);
  return on;
}

// One output of the rows form: 16 partial sums over k, then their sum.
inline float row_dot(const float* a, const float* x, int64_t K) {
#ifdef __AVX512F__
  if (K % kLanes == 0 && wide()) {  // one register of partial sums, reduced by the shuffle tree
    __m512 acc = _mm512_setzero_ps();
    for (int64_t k = 0; k < K; k += kLanes)
      acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(x + k), acc);
    return _mm512_reduce_add_ps(acc);
  }
#endif
  float acc[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= K; k += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) acc[j] += a[k + j] * x[k + j];
  for (int64_t j = 0; k + j < K; ++j) acc[j] += a[k + j] * x[k + j];
  // A halving tree (vector adds of the upper half onto the lower), not a serial chain.
  for (int64_t w = kLanes / 2; w > 0; w /= 2)
    for (int64_t j = 0; j < w; ++j) acc[j] += acc[j + w];
  return acc[0];
}

#ifdef __AVX512F__
// Sixteen consecutive rows sharing x (K % 16 == 0): each row's 16 partial sums as row_dot
// forms them, then all sixteen reduced at once by row_dot's halving tree (lanes j + 8, j + 4,
// j + 2, j + 1 onto j, as _mm512_reduce_add_ps): each level halves every row's width and packs
// twice the rows into a vector, so 15 adds and 30 shuffles serve 16 outputs (one row alone takes
// 4 adds and ~6 shuffles). The same bits as row_dot for finite values.
inline void rows16(const float* a, const float* x, float* y, int64_t K) {
  __m512 p[16];
  for (int r = 0; r < 16; ++r) p[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; k += kLanes) {
    const __m512 xv = _mm512_loadu_ps(x + k);
    for (int r = 0; r < 16; ++r)
      p[r] = _mm512_fmadd_ps(_mm512_loadu_ps(a + r * K + k), xv, p[r]);
  }
  // j + 8: s[r] = [row r: lanes 0-7 | row r + 8: lanes 0-7].
  __m512 s[8];
  for (int r = 0; r < 8; ++r)
    s[r] = _mm512_add_ps(_mm512_shuffle_f32x4(p[r], p[r + 8], _MM_SHUFFLE(3, 2, 3, 2)),
                         _mm512_shuffle_f32x4(p[r], p[r + 8], _MM_SHUFFLE(1, 0, 1, 0)));
  // j + 4: t[r] = 128-bit chunks of rows r, r + 8, r + 4, r + 12 (lanes 0-3 each).
  __m512 t[4];
  for (int r = 0; r < 4; ++r)
    t[r] = _mm512_add_ps(_mm512_shuffle_f32x4(s[r], s[r + 4], _MM_SHUFFLE(3, 1, 3, 1)),
                         _mm512_shuffle_f32x4(s[r], s[r + 4], _MM_SHUFFLE(2, 0, 2, 0)));
  // j + 2: u[r] per chunk = [row of t[r]: 0, 1 | row of t[r + 2]: 0, 1].
  __m512 u[2];
  for (int r = 0; r < 2; ++r)
    u[r] = _mm512_add_ps(_mm512_shuffle_ps(t[r], t[r + 2], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(t[r], t[r + 2], _MM_SHUFFLE(3, 2, 3, 2)));
  // j + 1: the sixteen sums, lanes holding rows 0 2 1 3 8 10 9 11 4 6 5 7 12 14 13 15.
  const __m512 v = _mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512i lane_of_row =
      _mm512_setr_epi32(0, 2, 1, 3, 8, 10, 9, 11, 4, 6, 5, 7, 12, 14, 13, 15);
  _mm512_storeu_ps(y, _mm512_permutexvar_ps(lane_of_row, v));
}
#endif

#ifdef __AVX2__
// Eight consecutive rows sharing x (K % 8 == 0): one 8-lane partial sum per row, then the eight
// reduced together by a horizontal-add tree (3 levels) into one vector of the eight outputs. The
// generic row_dot reduces each row alone (~10 ops per output, no 16-lane AVX2 register).
inline void rows8(const float* a, const float* x, float* y, int64_t K) {
  __m256 acc[8];
  for (int j = 0; j < 8; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; k += 8) {
    const __m256 xv = _mm256_loadu_ps(x + k);
    for (int j = 0; j < 8; ++j) acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(a + j * K + k), xv, acc[j]);
  }
  // hadd(p, q) = [p0+p1, p2+p3, q0+q1, q2+q3 | the same for the upper halves].
  const __m256 h01 = _mm256_hadd_ps(acc[0], acc[1]), h23 = _mm256_hadd_ps(acc[2], acc[3]);
  const __m256 h45 = _mm256_hadd_ps(acc[4], acc[5]), h67 = _mm256_hadd_ps(acc[6], acc[7]);
  const __m256 q0 = _mm256_hadd_ps(h01, h23), q1 = _mm256_hadd_ps(h45, h67);  // rows 0-3, 4-7
  // Lower halves hold the rows' sums over lanes 0-3, upper halves over lanes 4-7.
  const __m256 lo = _mm256_permute2f128_ps(q0, q1, 0x20), hi = _mm256_permute2f128_ps(q0, q1, 0x31);
  _mm256_storeu_ps(y, _mm256_add_ps(lo, hi));
}
#endif

}  // namespace

void matvec_rows(const float* A, const float* x, float* y, int64_t B, int64_t L, int64_t K) {
#ifdef __AVX512F__
  if (K % kLanes == 0 && L % 16 == 0 && wide()) {  // groups of 16 rows of one batch
    auto run = [&](int64_t lo, int64_t hi) {
      for (int64_t g = lo; g < hi; ++g) {
        const int64_t r = g * 16;
        rows16(A + r * K, x + (r / L) * K, y + r, K);
      }
    };
    parallel_for(B * L / 16, std::max<int64_t>(1, 4096 / K), run);
    return;
  }
#endif
#ifdef __AVX2__
  if (K % 8 == 0 && L % 8 == 0 && !(K % kLanes == 0 && wide())) {  // groups of 8 rows of one batch
    // Tasks of ~32 KiB of A: finer ones cost more in hand-offs than they gain (mamba's 512 KiB).
    parallel_for(B * L / 8, std::max<int64_t>(1, 8192 / K), [&](int64_t lo, int64_t hi) {
      for (int64_t g = lo; g < hi; ++g) {
        const int64_t r = g * 8;
        rows8(A + r * K, x + (r / L) * K, y + r, K);
      }
    });
    return;
  }
#endif
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(K, 1));
  parallel_for(B * L, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) y[r] = row_dot(A + r * K, x + (r / L) * K, K);
  });
}

namespace {

#ifdef __AVX512F__
// 16 columns [l0, l0 + 16) of batch b: four accumulators over k (k, k+1, k+2, k+3) so the FMAs
// do not wait on each other, added at the end.
inline void columns16(const float* A, const float* xb, float* yb, int64_t L, int64_t K) {
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                   _mm512_setzero_ps()};
  int64_t k = 0;
  for (; k + 4 <= K; k += 4)
    for (int u = 0; u < 4; ++u)
      acc[u] = _mm512_fmadd_ps(_mm512_set1_ps(xb[k + u]), _mm512_loadu_ps(A + (k + u) * L),
                               acc[u]);
  for (; k < K; ++k)
    acc[0] = _mm512_fmadd_ps(_mm512_set1_ps(xb[k]), _mm512_loadu_ps(A + k * L), acc[0]);
  _mm512_storeu_ps(yb, _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}
#endif

#ifdef __AVX2__
// Eight columns [l0, l0 + 8) of batch b, as columns16 with 8-lane registers.
inline void columns8(const float* A, const float* xb, float* yb, int64_t L, int64_t K) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  int64_t k = 0;
  for (; k + 4 <= K; k += 4)
    for (int u = 0; u < 4; ++u)
      acc[u] = _mm256_fmadd_ps(_mm256_set1_ps(xb[k + u]), _mm256_loadu_ps(A + (k + u) * L),
                               acc[u]);
  for (; k < K; ++k)
    acc[0] = _mm256_fmadd_ps(_mm256_set1_ps(xb[k]), _mm256_loadu_ps(A + k * L), acc[0]);
  _mm256_storeu_ps(yb, _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
}
#endif

}  // namespace

void matvec_columns(const float* A, const float* x, float* y, int64_t B, int64_t L, int64_t K) {
#ifdef __AVX512F__
  if (L % kLanes == 0 && L <= 256 && wide()) {  // tasks: (batch, 16 columns), accumulated in registers
    const int64_t groups = L / kLanes;
    parallel_for(B * groups, std::max<int64_t>(1, 4096 / std::max<int64_t>(K, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t t = lo; t < hi; ++t) {
                     const int64_t b = t / groups, l0 = (t % groups) * kLanes;
                     columns16(A + b * K * L + l0, x + b * K, y + b * L + l0, L, K);
                   }
                 });
    return;
  }
#endif
#ifdef __AVX2__
  if (L % 8 == 0 && L <= 128) {  // tasks: (batch, 8 columns), accumulated in registers
    const int64_t groups = L / 8;
    parallel_for(B * groups, std::max<int64_t>(1, 4096 / std::max<int64_t>(K, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t t = lo; t < hi; ++t) {
                     const int64_t b = t / groups, l0 = (t % groups) * 8;
                     columns8(A + b * K * L + l0, x + b * K, y + b * L + l0, L, K);
                   }
                 });
    return;
  }
#endif
  // Tasks: (batch, a block of up to 512 columns); each sweeps k over its block.
  constexpr int64_t kBlock = 512;
  const int64_t blocks = (L + kBlock - 1) / kBlock;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(K * std::min(L, kBlock), 1));
  parallel_for(B * blocks, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t b = t / blocks, l0 = (t % blocks) * kBlock, l1 = std::min(L, l0 + kBlock);
      float* yb = y + b * L;
      std::fill(yb + l0, yb + l1, 0.f);
      const float* xb = x + b * K;
      for (int64_t k = 0; k < K; ++k) {
        const float xv = xb[k];
        const float* ak = A + (b * K + k) * L;
#pragma GCC ivdep
        for (int64_t l = l0; l < l1; ++l) yb[l] += xv * ak[l];
      }
    }
  });
}

}  // namespace netspec::exec::cpu
