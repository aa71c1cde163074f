// The 36 products of winograd.h's kernels in AVX-512 (this file's flags: CMakeLists.txt), for
// CPUs that have it: one 16-lane vector holds a whole 16-channel block of U (forward) or X (weight
// gradient), so a row of a product is one FMA per k instead of two. Each output is the same chain
// of FMAs over k in the same order as there, so both files give the same bits. The data
// transforms and the kernel's (winograd_transforms.h) run here 16 lanes wide, the data ones on
// nChw16c activations; dW's output transform stays in winograd_avx2.cpp.
#include "exec/cpu/conv/winograd.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#include "exec/cpu/conv/winograd_transforms.h"
#define NETSPEC_WINO_AVX512 1
#endif

namespace netspec::exec::cpu::wino_avx512 {

#ifdef NETSPEC_WINO_AVX512
namespace {

using V16 = __m512;

// 12 rows x 16 columns of one plane's product: m[r][0..16) (+)= sum_k v[r][k * vk] u[k * uk +
// 0..16). Per k one vector of u and 12 broadcasts feed 12 FMAs (Zen 5 and Intel cores issue two
// 512-bit FMAs a cycle and load the broadcasts beside them). Named accumulators, as in the AVX2
// kernel: GCC keeps an array of them on the stack.
inline void micro12(const float* const* v, int64_t vk, const float* u, int64_t uk, int64_t K,
                    float* const* m, bool accumulate) {
  V16 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
  V16 a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  const float *v0 = v[0], *v1 = v[1], *v2 = v[2], *v3 = v[3], *v4 = v[4], *v5 = v[5];
  const float *v6 = v[6], *v7 = v[7], *v8 = v[8], *v9 = v[9], *v10 = v[10], *v11 = v[11];
  for (int64_t k = 0, kv = 0; k < K; ++k, kv += vk, u += uk) {
    const V16 w = _mm512_loadu_ps(u);
    a0 = _mm512_fmadd_ps(_mm512_set1_ps(v0[kv]), w, a0);
    a1 = _mm512_fmadd_ps(_mm512_set1_ps(v1[kv]), w, a1);
    a2 = _mm512_fmadd_ps(_mm512_set1_ps(v2[kv]), w, a2);
    a3 = _mm512_fmadd_ps(_mm512_set1_ps(v3[kv]), w, a3);
    a4 = _mm512_fmadd_ps(_mm512_set1_ps(v4[kv]), w, a4);
    a5 = _mm512_fmadd_ps(_mm512_set1_ps(v5[kv]), w, a5);
    a6 = _mm512_fmadd_ps(_mm512_set1_ps(v6[kv]), w, a6);
    a7 = _mm512_fmadd_ps(_mm512_set1_ps(v7[kv]), w, a7);
    a8 = _mm512_fmadd_ps(_mm512_set1_ps(v8[kv]), w, a8);
    a9 = _mm512_fmadd_ps(_mm512_set1_ps(v9[kv]), w, a9);
    a10 = _mm512_fmadd_ps(_mm512_set1_ps(v10[kv]), w, a10);
    a11 = _mm512_fmadd_ps(_mm512_set1_ps(v11[kv]), w, a11);
  }
  const V16 acc[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
  for (int r = 0; r < 12; ++r)
    _mm512_storeu_ps(m[r], accumulate ? _mm512_add_ps(_mm512_loadu_ps(m[r]), acc[r]) : acc[r]);
}

struct Avx512 {  // winograd_transforms.h's vector: 16 channels of nChw16c
  using V = V16;
  static constexpr int64_t kLanes = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float v) { return _mm512_set1_ps(v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static constexpr int kRows = 12;  // the products' micro-kernel
  static void micro(const float* const* v, int64_t vk, const float* u, int64_t uk, int64_t K,
                    float* const* m, bool accumulate) {
    micro12(v, vk, u, uk, K, m, accumulate);
  }
};
using Transforms = WinogradTransforms<Avx512>;

}  // namespace

bool built() { return true; }

void weights(const float* w, const WinogradWeights& ws, int64_t C, int64_t O, int64_t c0,
             int64_t c1, float* U) {
  const __m512i lanes =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int>(ws.o)));
  Transforms::weights(
      w, ws, C, O, c0, c1, U,
      [&](const float* p) {  // masked: GCC 12 warns on the unmasked form's undefined source
        return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xffff, lanes, p, 4);
      });
}

void input16(const WinogradShape& s, const float* x, int64_t t0, int64_t nt, float* V, int64_t ld) {
  Transforms::input(s, x, t0, nt, V, ld);
}
void output16(const WinogradShape& s, const float* M, int64_t ld, int64_t t0, int64_t nt,
              float* y) {
  Transforms::output(s, M, ld, t0, nt, y);
}
void grad_input16(const WinogradShape& s, const float* dy, int64_t t0, int64_t nt, float* D,
                  int64_t ld) {
  Transforms::grad_input(s, dy, t0, nt, D, ld);
}

void multiply(const float* V, int64_t ldv, const float* U, float* M, int64_t ldm, int64_t nt,
              int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0, int64_t b1) {
  Transforms::multiply(V, ldv, U, M, ldm, nt, C, O, x0, x1, b0, b1);
}

void grad_multiply(const float* D, int64_t ldd, const float* X, int64_t ldx, float* P, int64_t nt,
                   int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0, int64_t b1,
                   bool accumulate) {
  Transforms::grad_multiply(D, ldd, X, ldx, P, nt, C, O, x0, x1, b0, b1, accumulate);
}

void grad_multiply_block(const float* D, int64_t ldd, const float* X, int64_t ldx, int64_t nt,
                         int64_t C, int64_t O, int64_t o0, int64_t o1, int64_t c0, int64_t c1,
                         float* P, int64_t ldp, int64_t ldr) {
  Transforms::grad_multiply_block(D, ldd, X, ldx, nt, C, O, o0, o1, c0, c1, P, ldp, ldr);
}

#else  // not an AVX-512 build of this file: the AVX2 products run instead

bool built() { return false; }
void weights(const float*, const WinogradWeights&, int64_t, int64_t, int64_t, int64_t, float*) {}
void input16(const WinogradShape&, const float*, int64_t, int64_t, float*, int64_t) {}
void output16(const WinogradShape&, const float*, int64_t, int64_t, int64_t, float*) {}
void grad_input16(const WinogradShape&, const float*, int64_t, int64_t, float*, int64_t) {}
void multiply(const float*, int64_t, const float*, float*, int64_t, int64_t, int64_t, int64_t,
              int64_t, int64_t, int64_t, int64_t) {}
void grad_multiply(const float*, int64_t, const float*, int64_t, float*, int64_t, int64_t, int64_t,
                   int64_t, int64_t, int64_t, int64_t, bool) {}
void grad_multiply_block(const float*, int64_t, const float*, int64_t, int64_t, int64_t, int64_t,
                         int64_t, int64_t, int64_t, int64_t, float*, int64_t, int64_t) {}

#endif

}  // namespace netspec::exec::cpu::wino_avx512
