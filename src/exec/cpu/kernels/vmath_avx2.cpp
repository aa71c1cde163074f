// vmath.h's kernels compiled for AVX2 + FMA without AVX-512 (this file's flags: CMakeLists.txt),
// the variant for CPUs without AVX-512 (AMD EPYC of kind B). exp is written with intrinsics
// here: the auto-vectorised vm_exp of vmath_impl.h ran at 2.7 ns per value on a Zen 1 (one
// 4-lane vector at a time, its ~20-op dependency chain filling the out-of-order window, and
// 2^n applied in two halves for every value); exp_avx2 below runs four 8-lane vectors
// interleaved and adds n to y's exponent bits where the result is a normal float: ~1 ns. erf
// too (1.42 -> 1.2-1.3 ns, the same sequence: its 13 multiplies and fmas per vector bound it), and
// logistic (its double exp; 4.8 -> 2.9 ns, the same sequence).
#include <immintrin.h>

#include "exec/cpu/kernels/vmath.h"
#include "exec/erf_f32.h"

namespace netspec::exec::cpu {
namespace {
#include "exec/cpu/kernels/vmath_impl.h"

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)

// vm_exp's sequence on U vectors of 8 at d[0, 8U) from a[0, 8U): clamp to [-104, 89], fn =
// round(x / ln2), r = x - fn·ln2 in two steps, y = 1 + r + r²·P(r), then y·2^n. Where every
// n is in [-125, 127], y·2^n is a normal float and exact, so adding n to y's exponent field
// gives the same bits as vm_exp's y·2^n1·2^n2; otherwise (a result near the denormal or
// overflow edge, a NaN) those vectors take the two-halves product. NaN in: x + x out.
template <int U>
[[gnu::always_inline]] inline void exp_block(float* d, const float* a) {
  const __m256 lo = _mm256_set1_ps(-104.f), hi = _mm256_set1_ps(89.f);
  const __m256 magic = _mm256_set1_ps(12582912.f);  // 1.5·2^23: adding it rounds to integer
  __m256 x[U], fn[U], r[U], p[U], y[U];
  for (int u = 0; u < U; ++u) x[u] = _mm256_loadu_ps(a + 8 * u);
  for (int u = 0; u < U; ++u) {
    // max/min put a NaN lane at -104 (its result is replaced at the end).
    const __m256 c = _mm256_min_ps(_mm256_max_ps(x[u], lo), hi);
    fn[u] = _mm256_sub_ps(_mm256_fmadd_ps(c, _mm256_set1_ps(1.44269504088896341f), magic), magic);
    r[u] = _mm256_fmadd_ps(fn[u], _mm256_set1_ps(-0.693359375f), c);
  }
  for (int u = 0; u < U; ++u) r[u] = _mm256_fmadd_ps(fn[u], _mm256_set1_ps(2.12194440e-4f), r[u]);
  for (int u = 0; u < U; ++u)
    p[u] = _mm256_fmadd_ps(_mm256_set1_ps(1.9875691500e-4f), r[u], _mm256_set1_ps(1.3981999507e-3f));
  for (int u = 0; u < U; ++u) p[u] = _mm256_fmadd_ps(p[u], r[u], _mm256_set1_ps(8.3334519073e-3f));
  for (int u = 0; u < U; ++u) p[u] = _mm256_fmadd_ps(p[u], r[u], _mm256_set1_ps(4.1665795894e-2f));
  for (int u = 0; u < U; ++u) p[u] = _mm256_fmadd_ps(p[u], r[u], _mm256_set1_ps(1.6666665459e-1f));
  for (int u = 0; u < U; ++u) p[u] = _mm256_fmadd_ps(p[u], r[u], _mm256_set1_ps(5.0000001201e-1f));
  for (int u = 0; u < U; ++u)
    y[u] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p[u], r[u]), r[u], r[u]),
                         _mm256_set1_ps(1.f));
  __m256i n[U], in = _mm256_set1_epi32(-1);
  const __m256i top = _mm256_set1_epi32(252);
  for (int u = 0; u < U; ++u) {
    n[u] = _mm256_cvttps_epi32(fn[u]);
    // n in [-125, 127] <=> n + 125 in [0, 252] as unsigned.
    const __m256i off = _mm256_add_epi32(n[u], _mm256_set1_epi32(125));
    in = _mm256_and_si256(in, _mm256_cmpeq_epi32(_mm256_max_epu32(off, top), top));
  }
  if (_mm256_movemask_ps(_mm256_castsi256_ps(in)) == 0xff) {
    for (int u = 0; u < U; ++u)
      _mm256_storeu_ps(d + 8 * u, _mm256_castsi256_ps(_mm256_add_epi32(
                                      _mm256_castps_si256(y[u]), _mm256_slli_epi32(n[u], 23))));
    return;
  }
  const __m256i bias = _mm256_set1_epi32(127);
  for (int u = 0; u < U; ++u) {
    const __m256i n1 = _mm256_srai_epi32(n[u], 1), n2 = _mm256_sub_epi32(n[u], n1);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    const __m256 e = _mm256_mul_ps(_mm256_mul_ps(y[u], s1), s2);
    _mm256_storeu_ps(d + 8 * u, _mm256_blendv_ps(e, _mm256_add_ps(x[u], x[u]),
                                                 _mm256_cmp_ps(x[u], x[u], _CMP_UNORD_Q)));
  }
}

// vm_erf's sequence on U vectors of 8, interleaved: c = clamp(x, -4, 4) (NaN stays NaN: min/max
// take their second operand, x, when it is NaN), z = c², c·P(z) / Q(z) with Horner steps as fma.
template <int U>
[[gnu::always_inline]] inline void erf_block(float* d, const float* a) {
  __m256 c[U], z[U], p[U], q[U];
  for (int u = 0; u < U; ++u) {
    c[u] = _mm256_max_ps(_mm256_set1_ps(-4.f), _mm256_min_ps(_mm256_set1_ps(4.f), _mm256_loadu_ps(a + 8 * u)));
    z[u] = _mm256_mul_ps(c[u], c[u]);
    p[u] = _mm256_set1_ps(kErfP[0]);
    q[u] = _mm256_set1_ps(kErfQ[0]);
  }
  for (int i = 1; i < kErfPLen; ++i)
    for (int u = 0; u < U; ++u) p[u] = _mm256_fmadd_ps(p[u], z[u], _mm256_set1_ps(kErfP[i]));
  for (int i = 1; i < kErfQLen; ++i)
    for (int u = 0; u < U; ++u) q[u] = _mm256_fmadd_ps(q[u], z[u], _mm256_set1_ps(kErfQ[i]));
  for (int u = 0; u < U; ++u)
    _mm256_storeu_ps(d + 8 * u, _mm256_div_ps(_mm256_mul_ps(c[u], p[u]), q[u]));
}

void erf_avx2(float* d, const float* a, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) erf_block<4>(d + i, a + i);
  for (; i + 8 <= n; i += 8) erf_block<1>(d + i, a + i);
  for (; i < n; ++i) d[i] = vm_erf(a[i]);
}

// vm_logistic's sequence, 1 / (1 + e^-x) with e^-x from vm_exp_d (double: x = n·ln2 + r, Taylor
// to r^10, times 2^n, one rounding to float), on U vectors of 8 floats (2U of 4 doubles),
// interleaved. NaN in: e^-x is NaN (-x + -x), so the result is NaN as in vm_logistic.
template <int U>
[[gnu::always_inline]] inline void logistic_block(float* d, const float* a) {
  constexpr int V = 2 * U;  // double vectors
  __m256 nx[U];
  __m256d xd[V], t[V], r[V], p[V];
  for (int u = 0; u < U; ++u) {
    nx[u] = _mm256_sub_ps(_mm256_setzero_ps(), _mm256_loadu_ps(a + 8 * u));  // -x
    // exp_arg: clamp to [-104, 89] (a NaN lane becomes -104; its result is replaced below).
    const __m256 c = _mm256_min_ps(_mm256_max_ps(nx[u], _mm256_set1_ps(-104.f)), _mm256_set1_ps(89.f));
    xd[2 * u] = _mm256_cvtps_pd(_mm256_castps256_ps128(c));
    xd[2 * u + 1] = _mm256_cvtps_pd(_mm256_extractf128_ps(c, 1));
  }
  const __m256d magic = _mm256_set1_pd(6755399441055744.0);  // 1.5·2^52
  for (int v = 0; v < V; ++v) {
    t[v] = _mm256_fmadd_pd(xd[v], _mm256_set1_pd(1.4426950408889634), magic);
    r[v] = _mm256_fmadd_pd(_mm256_sub_pd(t[v], magic), _mm256_set1_pd(-0.6931471805599453), xd[v]);
    p[v] = _mm256_set1_pd(1.0 / 3628800.0);
  }
  constexpr double kTaylor[] = {1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0,
                                1.0 / 120.0,    1.0 / 24.0,    1.0 / 6.0,    0.5,
                                1.0,            1.0};
  for (double k : kTaylor)
    for (int v = 0; v < V; ++v) p[v] = _mm256_fmadd_pd(p[v], r[v], _mm256_set1_pd(k));
  __m128 e[V];
  for (int v = 0; v < V; ++v) {
    const __m256i n = _mm256_sub_epi64(_mm256_castpd_si256(t[v]), _mm256_castpd_si256(magic));
    const __m256d scale =
        _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(n, _mm256_set1_epi64x(1023)), 52));
    e[v] = _mm256_cvtpd_ps(_mm256_mul_pd(p[v], scale));
  }
  for (int u = 0; u < U; ++u) {
    __m256 ex = _mm256_set_m128(e[2 * u + 1], e[2 * u]);
    ex = _mm256_blendv_ps(ex, _mm256_add_ps(nx[u], nx[u]), _mm256_cmp_ps(nx[u], nx[u], _CMP_UNORD_Q));
    _mm256_storeu_ps(d + 8 * u, _mm256_div_ps(_mm256_set1_ps(1.f), _mm256_add_ps(_mm256_set1_ps(1.f), ex)));
  }
}

void logistic_avx2(float* d, const float* a, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) logistic_block<2>(d + i, a + i);
  for (; i + 8 <= n; i += 8) logistic_block<1>(d + i, a + i);
  for (; i < n; ++i) d[i] = vm_logistic(a[i]);
}

void exp_avx2(float* d, const float* a, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) exp_block<4>(d + i, a + i);
  for (; i + 8 <= n; i += 8) exp_block<1>(d + i, a + i);
  for (; i < n; ++i) d[i] = vm_exp(a[i]);
}

#endif

}  // namespace

VecMath vec_math_avx2() {
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
  VecMath m = vm_table();
  m.exp = exp_avx2;
  m.erf = erf_avx2;
  m.logistic = logistic_avx2;
  return m;
#else
  return {};
#endif
}

}  // namespace netspec::exec::cpu
