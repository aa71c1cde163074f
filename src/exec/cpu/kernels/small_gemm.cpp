// One small f32 GEMM per call, C = A·B, with any strides on A and B: the per-batch products of
// attention (q·kᵀ, p·v and their VJPs: 64x64 by 32 per batch and head) whose operands are read
// in place from [B, T, H, D] tensors. oneDNN 2.6 has no strided matmul without AVX-512, and its
// sgemm pays ~8 µs of packing per call at these sizes (30-50 GFLOP/s of the AVX2 EPYC's 78); a
// 4-row tile of this kernel reached ~70 there. Register tile: 6 rows x 16 columns (12 AVX2
// accumulators, BLIS's Haswell shape), a broadcast of A per row and two loads of B per k; 4 rows
// (8 accumulators) left the Zen 5's two FMA pipes half idle on its AVX2 path (65 -> 121-127
// GFLOP/s a thread, `bench_dot small`). B is read in place when its columns are
// contiguous, else (and for a column tail) packed into [K, 16·⌈N/16⌉] with zeros. Each C element
// sums its k terms in order from zero, so results differ from oneDNN's by f32 rounding only.
// With AVX-512 the tiles of small_gemm_avx512.cpp run instead (8 rows x 32 columns, the same
// bits): one thread's 128 products of 64x64 by 32 at ~225-270 GFLOP/s on the Zen 5 (AVX2 tiles
// ~120, `bench_dot small`), ahead of oneDNN's strided brgemm matmul there.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "exec/cpu/dnnl_util.h"
#include "exec/cpu/kernels.h"

namespace netspec::exec::cpu {
namespace {

#if defined(__AVX2__) && defined(__FMA__)
// Rows [0, R) x columns [0, 16) of C; b has 16 readable columns per k row (stride ldb).
template <int R>
inline void tile(int64_t K, const float* a, int64_t am, int64_t ak, const float* b, int64_t ldb,
                 float* c, int64_t ldc) {
  __m256 acc[R][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; ++k, b += ldb) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r * am + k * ak);
      acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(c + r * ldc, acc[r][0]);
    _mm256_storeu_ps(c + r * ldc + 8, acc[r][1]);
  }
}

constexpr int64_t kRows = 6;  // 12 accumulators, 2 loads of B and a broadcast: 15 of 16 ymm

// d[c, r] = s[r, c] for an 8x8 block (row strides ls, ld).
inline void transpose8x8(const float* s, int64_t ls, float* d, int64_t ld) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * ls);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(d + i * ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(d + (i + 4) * ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

// A tile of `rows` <= kRows rows and `ncols` <= 16 columns (a narrower one through a buffer).
void rows_tile(int64_t rows, int64_t K, const float* a, int64_t am, int64_t ak, const float* b,
               int64_t ldb, float* c, int64_t ldc, int64_t ncols) {
  alignas(32) float t[kRows * 16];
  float* d = ncols == 16 ? c : t;
  const int64_t ld = ncols == 16 ? ldc : 16;
  switch (rows) {
    case 6: tile<6>(K, a, am, ak, b, ldb, d, ld); break;
    case 5: tile<5>(K, a, am, ak, b, ldb, d, ld); break;
    case 4: tile<4>(K, a, am, ak, b, ldb, d, ld); break;
    case 3: tile<3>(K, a, am, ak, b, ldb, d, ld); break;
    case 2: tile<2>(K, a, am, ak, b, ldb, d, ld); break;
    default: tile<1>(K, a, am, ak, b, ldb, d, ld); break;
  }
  if (ncols != 16)
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(c + r * ldc, t + r * 16, static_cast<size_t>(ncols) * sizeof(float));
}
#endif

}  // namespace

bool small_gemm_avx512_runs() {
  static const bool runs =
      own_avx512_kernels("NETSPEC_SMALL_GEMM_AVX512", small_gemm_avx512::built());
  return runs;
}

void small_gemm(int64_t M, int64_t N, int64_t K, const float* A, int64_t am, int64_t ak,
                const float* B, int64_t bk, int64_t bn, float* C, int64_t ldc, bool avx512) {
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.f);
    return;
  }
#if defined(__AVX2__) && defined(__FMA__)
  // B in place (columns contiguous) up to its last full block of 16 (all of it on AVX-512's
  // masked tails); the rest packed.
  const bool wide = avx512 && small_gemm_avx512_runs();
  const int64_t direct = bn == 1 ? (wide ? N : N / 16 * 16) : 0;
  const int64_t np = (N - direct + 15) / 16 * 16;
  thread_local std::vector<float> pack;
  if (np > 0) {
    if (pack.size() < static_cast<size_t>(K * np)) pack.resize(static_cast<size_t>(K * np));
    float* p = pack.data();
    if (bn == 1) {
      for (int64_t k = 0; k < K; ++k) {
        std::memcpy(p + k * np, B + k * bk + direct, static_cast<size_t>(N - direct) * sizeof(float));
        std::fill(p + k * np + (N - direct), p + (k + 1) * np, 0.f);
      }
    } else {
      int64_t n0 = 0, k0 = 0;
      if (bk == 1) {  // k contiguous (q·kᵀ's k): 8x8 blocks transposed in registers
        for (; n0 + 8 <= N; n0 += 8)
          for (k0 = 0; k0 + 8 <= K; k0 += 8) transpose8x8(B + n0 * bn + k0, bn, p + k0 * np + n0, np);
        k0 = K / 8 * 8;
      }
      for (int64_t n = 0; n < N; ++n)  // the rest: columns n >= n0, and rows k >= k0 below n0
        for (int64_t k = n < n0 ? k0 : 0; k < K; ++k) p[k * np + n] = B[k * bk + n * bn];
      for (int64_t k = 0; k < K; ++k) std::fill(p + k * np + N, p + (k + 1) * np, 0.f);
    }
  }
  if (wide)
    return direct == N ? small_gemm_avx512::tiles(M, N, K, A, am, ak, B, bk, C, ldc)
                       : small_gemm_avx512::tiles(M, N, K, A, am, ak, pack.data(), np, C, ldc);
  for (int64_t i = 0; i < M; i += kRows) {
    const int64_t rows = std::min<int64_t>(kRows, M - i);
    const float* a = A + i * am;
    float* c = C + i * ldc;
    for (int64_t j = 0; j < direct; j += 16)
      rows_tile(rows, K, a, am, ak, B + j, bk, c + j, ldc, 16);
    for (int64_t j = direct; j < N; j += 16)
      rows_tile(rows, K, a, am, ak, pack.data() + (j - direct), np, c + j, ldc,
                std::min<int64_t>(16, N - j));
  }
#else
  (void)avx512;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.f;
      for (int64_t k = 0; k < K; ++k) s += A[i * am + k * ak] * B[k * bk + j * bn];
      C[i * ldc + j] = s;
    }
#endif
}

}  // namespace netspec::exec::cpu
