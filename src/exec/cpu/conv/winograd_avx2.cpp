// winograd.h's kernels in AVX2 + FMA (this file's flags: CMakeLists.txt). One vector holds the
// 8 channels of an nChw8c block, so every transform works on 8 channels at once. Only plain
// pointers cross this file's boundary (no inline library code compiled for AVX2 here).
#include "exec/cpu/conv/winograd.h"

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#include <immintrin.h>

#include "exec/cpu/conv/winograd_transforms.h"
#define NETSPEC_WINO_AVX2 1
#endif

namespace netspec::exec::cpu::wino_avx2 {

#ifdef NETSPEC_WINO_AVX2
namespace {

using V8 = __m256;
// 6 rows x 16 columns of one plane's product: m[r][0..16) (+)= sum_k v[r][k * vk] u[k * uk +
// 0..16). Twelve named accumulators: with an array GCC 12 kept a copy of them on the stack, storing
// all twelve every step (a third of the speed).
inline void micro6(const float* const* v, int64_t vk, const float* u, int64_t uk, int64_t K,
                   float* const* m, bool accumulate) {
  V8 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00;
  V8 a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
  const float *v0 = v[0], *v1 = v[1], *v2 = v[2], *v3 = v[3], *v4 = v[4], *v5 = v[5];
  for (int64_t k = 0, kv = 0; k < K; ++k, kv += vk, u += uk) {
    const V8 u0 = _mm256_loadu_ps(u), u1 = _mm256_loadu_ps(u + 8);
    V8 b = _mm256_broadcast_ss(v0 + kv);
    a00 = _mm256_fmadd_ps(b, u0, a00), a01 = _mm256_fmadd_ps(b, u1, a01);
    b = _mm256_broadcast_ss(v1 + kv);
    a10 = _mm256_fmadd_ps(b, u0, a10), a11 = _mm256_fmadd_ps(b, u1, a11);
    b = _mm256_broadcast_ss(v2 + kv);
    a20 = _mm256_fmadd_ps(b, u0, a20), a21 = _mm256_fmadd_ps(b, u1, a21);
    b = _mm256_broadcast_ss(v3 + kv);
    a30 = _mm256_fmadd_ps(b, u0, a30), a31 = _mm256_fmadd_ps(b, u1, a31);
    b = _mm256_broadcast_ss(v4 + kv);
    a40 = _mm256_fmadd_ps(b, u0, a40), a41 = _mm256_fmadd_ps(b, u1, a41);
    b = _mm256_broadcast_ss(v5 + kv);
    a50 = _mm256_fmadd_ps(b, u0, a50), a51 = _mm256_fmadd_ps(b, u1, a51);
  }
  const V8 acc[6][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}, {a40, a41}, {a50, a51}};
  for (int r = 0; r < 6; ++r)
    for (int h = 0; h < 2; ++h) {
      float* dst = m[r] + 8 * h;
      _mm256_storeu_ps(dst,
                       accumulate ? _mm256_add_ps(_mm256_loadu_ps(dst), acc[r][h]) : acc[r][h]);
    }
}

struct Avx2 {  // winograd_transforms.h's vector: 8 channels of nChw8c
  using V = V8;
  static constexpr int64_t kLanes = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float v) { return _mm256_set1_ps(v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static constexpr int kRows = 6;  // the products' micro-kernel
  static void micro(const float* const* v, int64_t vk, const float* u, int64_t uk, int64_t K,
                    float* const* m, bool accumulate) {
    micro6(v, vk, u, uk, K, m, accumulate);
  }
};
using Transforms = WinogradTransforms<Avx2>;

}  // namespace

bool built() { return true; }

void weights(const float* w, const WinogradWeights& ws, int64_t C, int64_t O, int64_t c0,
             int64_t c1, float* U) {
  const __m256i lanes = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32(static_cast<int>(ws.o)));
  Transforms::weights(w, ws, C, O, c0, c1, U,
                      [&](const float* p) { return _mm256_i32gather_ps(p, lanes, 4); });
}

void input(const WinogradShape& s, const float* x, int64_t t0, int64_t nt, float* V, int64_t ld) {
  Transforms::input(s, x, t0, nt, V, ld);
}

void multiply(const float* V, int64_t ldv, const float* U, float* M, int64_t ldm, int64_t nt,
              int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0, int64_t b1) {
  Transforms::multiply(V, ldv, U, M, ldm, nt, C, O, x0, x1, b0, b1);
}

void output(const WinogradShape& s, const float* M, int64_t ld, int64_t t0, int64_t nt, float* y) {
  Transforms::output(s, M, ld, t0, nt, y);
}

void grad_input(const WinogradShape& s, const float* dy, int64_t t0, int64_t nt, float* D,
                int64_t ld) {
  Transforms::grad_input(s, dy, t0, nt, D, ld);
}

void grad_multiply(const float* D, int64_t ldd, const float* X, int64_t ldx, float* P, int64_t nt,
                   int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0, int64_t b1,
                   bool accumulate) {
  Transforms::grad_multiply(D, ldd, X, ldx, P, nt, C, O, x0, x1, b0, b1, accumulate);
}

namespace {
// dW[o, c..c+8) from m_at: m_at + q * plane holds the 8 channels' value of plane q (of 36).
inline void grad_output_at(const float* m_at, int64_t plane, int64_t o, int64_t c,
                           const WinogradWeights& ws, float* dw) {
  V8 m[6][6], r[3][6], col[6], out[3];
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) m[i][j] = _mm256_loadu_ps(m_at + (i * 6 + j) * plane);
  for (int j = 0; j < 6; ++j) {  // columns: A'^T m
    for (int i = 0; i < 6; ++i) col[i] = m[i][j];
    Transforms::at3(col, out);
    for (int i = 0; i < 3; ++i) r[i][j] = out[i];
  }
  alignas(32) float k[3][3][8];
  for (int i = 0; i < 3; ++i) {  // rows: (A'^T m) A'
    Transforms::at3(r[i], out);
    for (int j = 0; j < 3; ++j) _mm256_store_ps(k[i][j], out[j]);
  }
  for (int64_t l = 0; l < 8; ++l)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        dw[o * ws.o + (c + l) * ws.c + i * ws.ky + j * ws.kx] = k[i][j][l];
}
}  // namespace

void grad_output(const float* P, int64_t C, int64_t O, int64_t o0, int64_t o1,
                 const WinogradWeights& ws, float* dw) {
  for (int64_t o = o0; o < o1; ++o)
    for (int64_t c = 0; c < C; c += 8) grad_output_at(P + o * C + c, O * C, o, c, ws, dw);
}

void grad_output_block(const float* P, int64_t ldp, int64_t ldr, int64_t o0, int64_t o1, int64_t c0,
                       int64_t c1, const WinogradWeights& ws, float* dw) {
  for (int64_t o = o0; o < o1; ++o)
    for (int64_t c = c0; c < c1; c += 8)
      grad_output_at(P + (o - o0) * ldr + c - c0, ldp, o, c, ws, dw);
}

void grad_multiply_block(const float* D, int64_t ldd, const float* X, int64_t ldx, int64_t nt,
                         int64_t C, int64_t O, int64_t o0, int64_t o1, int64_t c0, int64_t c1,
                         float* P, int64_t ldp, int64_t ldr) {
  Transforms::grad_multiply_block(D, ldd, X, ldx, nt, C, O, o0, o1, c0, c1, P, ldp, ldr);
}

#else  // not an AVX2 build of this file: nothing runs (winograd_avx2_runs() is false)

bool built() { return false; }
void weights(const float*, const WinogradWeights&, int64_t, int64_t, int64_t, int64_t, float*) {}
void input(const WinogradShape&, const float*, int64_t, int64_t, float*, int64_t) {}
void multiply(const float*, int64_t, const float*, float*, int64_t, int64_t, int64_t, int64_t,
              int64_t, int64_t, int64_t, int64_t) {}
void output(const WinogradShape&, const float*, int64_t, int64_t, int64_t, float*) {}
void grad_input(const WinogradShape&, const float*, int64_t, int64_t, float*, int64_t) {}
void grad_multiply(const float*, int64_t, const float*, int64_t, float*, int64_t, int64_t, int64_t,
                   int64_t, int64_t, int64_t, int64_t, bool) {}
void grad_output(const float*, int64_t, int64_t, int64_t, int64_t, const WinogradWeights&, float*) {
}
void grad_output_block(const float*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       const WinogradWeights&, float*) {}
void grad_multiply_block(const float*, int64_t, const float*, int64_t, int64_t, int64_t, int64_t,
                         int64_t, int64_t, int64_t, int64_t, float*, int64_t, int64_t) {}

#endif

}  // namespace netspec::exec::cpu::wino_avx2
