// small_gemm's register tiles in AVX-512 (this file's flags: CMakeLists.txt), for CPUs that have
// it: up to 8 rows x 32 columns of C in 16 zmm accumulators, a broadcast of A per row and two
// loads of B per k; a column tail through masked loads and stores (no packing of an in-place B).
// Each C element is the same chain of FMAs over k from zero as small_gemm.cpp's AVX2 tile, so
// both give the same bits.
#include "exec/cpu/kernels.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#include <algorithm>
#endif

namespace netspec::exec::cpu::small_gemm_avx512 {

#if defined(__AVX512F__)
namespace {

// Rows [0, R) x NV vectors of 16 columns of C; the last vector's columns are `last` (a mask).
template <int R, int NV>
inline void tile(int64_t K, const float* a, int64_t am, int64_t ak, const float* b, int64_t ldb,
                 float* c, int64_t ldc, __mmask16 last) {
  __m512 acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k, b += ldb) {
    __m512 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v)
      bv[v] = v + 1 < NV ? _mm512_loadu_ps(b + 16 * v) : _mm512_maskz_loadu_ps(last, b + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * am + k * ak]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(x, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      if (v + 1 < NV)
        _mm512_storeu_ps(c + r * ldc + 16 * v, acc[r][v]);
      else
        _mm512_mask_storeu_ps(c + r * ldc + 16 * v, last, acc[r][v]);
    }
}

template <int NV>
void rows_tile(int64_t rows, int64_t K, const float* a, int64_t am, int64_t ak, const float* b,
               int64_t ldb, float* c, int64_t ldc, __mmask16 last) {
  switch (rows) {
    case 8: return tile<8, NV>(K, a, am, ak, b, ldb, c, ldc, last);
    case 7: return tile<7, NV>(K, a, am, ak, b, ldb, c, ldc, last);
    case 6: return tile<6, NV>(K, a, am, ak, b, ldb, c, ldc, last);
    case 5: return tile<5, NV>(K, a, am, ak, b, ldb, c, ldc, last);
    case 4: return tile<4, NV>(K, a, am, ak, b, ldb, c, ldc, last);
    case 3: return tile<3, NV>(K, a, am, ak, b, ldb, c, ldc, last);
    case 2: return tile<2, NV>(K, a, am, ak, b, ldb, c, ldc, last);
    default: return tile<1, NV>(K, a, am, ak, b, ldb, c, ldc, last);
  }
}

}  // namespace

bool built() { return true; }

void tiles(int64_t M, int64_t N, int64_t K, const float* A, int64_t am, int64_t ak,
           const float* B, int64_t ldb, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; i += 8) {
    const int64_t rows = std::min<int64_t>(8, M - i);
    const float* a = A + i * am;
    for (int64_t j = 0; j < N; j += 32) {
      const int64_t w = std::min<int64_t>(32, N - j);
      const int64_t tail = w > 16 ? w - 16 : w;  // columns of the last vector, 1..16
      const auto last = static_cast<__mmask16>((1u << tail) - 1u);
      if (w > 16)
        rows_tile<2>(rows, K, a, am, ak, B + j, ldb, C + i * ldc + j, ldc, last);
      else
        rows_tile<1>(rows, K, a, am, ak, B + j, ldb, C + i * ldc + j, ldc, last);
    }
  }
}

#else  // not an AVX-512 build of this file: small_gemm.cpp's AVX2 tiles run instead

bool built() { return false; }
void tiles(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const float*, int64_t,
           float*, int64_t) {}

#endif

}  // namespace netspec::exec::cpu::small_gemm_avx512
