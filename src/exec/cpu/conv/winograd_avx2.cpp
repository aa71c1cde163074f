// winograd.h's kernels in AVX2 + FMA (this file's flags: CMakeLists.txt). One vector holds the
// 8 channels of an nChw8c block, so every transform works on 8 channels at once. Only plain
// pointers cross this file's boundary (no inline library code compiled for AVX2 here).
#include "exec/cpu/conv/winograd.h"

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#include <immintrin.h>
#define NETSPEC_WINO_AVX2 1
#endif

namespace netspec::exec::cpu::wino_avx2 {

#ifdef NETSPEC_WINO_AVX2
namespace {

using V8 = __m256;
inline V8 set1(float v) { return _mm256_set1_ps(v); }
inline V8 add(V8 a, V8 b) { return _mm256_add_ps(a, b); }
inline V8 sub(V8 a, V8 b) { return _mm256_sub_ps(a, b); }
inline V8 mul(V8 a, V8 b) { return _mm256_mul_ps(a, b); }
inline V8 fma(V8 a, V8 b, V8 c) { return _mm256_fmadd_ps(a, b, c); }    // a*b + c
inline V8 fnma(V8 a, V8 b, V8 c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a*b

// The points are 0, 1, -1, 1/2, -2 and infinity: 1/2 in place of the usual 2 makes the largest
// coefficients smaller and the result ~1.6x more accurate (rms, unit-scale data; Barabasz et al.,
// 2020). Row i of B^T holds the coefficients of prod over j != i of (x - p_j), ascending; row i
// of G is [1, p_i, p_i^2] / prod over j != i of (p_i - p_j); column i of A^T is [1, p_i, p_i^2,
// p_i^3] (the infinite point: x^5's row, [0 0 1] and [0 0 0 1]).
// B^T d: rows [1 -3/2 -2 3/2 1 0], [0 -1 1/2 5/2 1 0], [0 1 -5/2 1/2 1 0], [0 -2 -1 2 1 0],
// [0 1/2 -1 -1/2 1 0], [0 1 -3/2 -2 3/2 1].
inline void bt6(const V8* d, V8* t) {
  const V8 e = sub(d[3], d[1]), f = sub(d[4], d[2]);
  const V8 half = set1(0.5f), two = set1(2.f), h3 = set1(1.5f), h5 = set1(2.5f);
  t[0] = fma(h3, e, fnma(two, d[2], add(d[0], d[4])));
  t[1] = fma(h5, d[3], fma(half, d[2], sub(d[4], d[1])));
  t[2] = fma(half, d[3], fnma(h5, d[2], add(d[4], d[1])));
  t[3] = fma(two, e, f);
  t[4] = fnma(half, e, f);
  t[5] = fma(h3, f, fnma(two, d[3], add(d[1], d[5])));
}

// A^T m: rows [1 1 1 1 1 0], [0 1 -1 1/2 -2 0], [0 1 1 1/4 4 0], [0 1 -1 1/8 -8 1].
inline void at6(const V8* m, V8* o) {
  const V8 s12 = add(m[1], m[2]), d12 = sub(m[1], m[2]);
  o[0] = add(add(m[0], s12), add(m[3], m[4]));
  o[1] = fma(set1(0.5f), m[3], fnma(set1(2.f), m[4], d12));
  o[2] = fma(set1(0.25f), m[3], fma(set1(4.f), m[4], s12));
  o[3] = add(fma(set1(0.125f), m[3], fnma(set1(8.f), m[4], d12)), m[5]);
}

// G g: rows [1 0 0], [1 1 1] / 3, [1 -1 1] / -3, [1 1/2 1/4] / (-15/16), [1 -2 4] / 15, [0 0 1].
inline void g3(const V8* g, V8* u) {
  const V8 s02 = add(g[0], g[2]);
  u[0] = g[0];
  u[1] = mul(set1(1.f / 3), add(s02, g[1]));
  u[2] = mul(set1(-1.f / 3), sub(s02, g[1]));
  u[3] = mul(set1(-4.f / 15), fma(set1(4.f), g[0], fma(set1(2.f), g[1], g[2])));
  u[4] = mul(set1(1.f / 15), fma(set1(4.f), g[2], fnma(set1(2.f), g[1], g[0])));
  u[5] = g[2];
}

// The weight gradient's F(3x3, 4x4) on the same points (winograd.h): B^T as above; G' d over a
// 4x4 tile of dy, rows [1 0 0 0], [1 1 1 1] / 3, [1 -1 1 -1] / -3, [1 1/2 1/4 1/8] / (-15/16),
// [1 -2 4 -8] / 15, [0 0 0 1]; A'^T rows [1 1 1 1 1 0], [0 1 -1 1/2 -2 0], [0 1 1 1/4 4 1].
inline void g4(const V8* g, V8* u) {
  const V8 s02 = add(g[0], g[2]), s13 = add(g[1], g[3]);
  u[0] = g[0];
  u[1] = mul(set1(1.f / 3), add(s02, s13));
  u[2] = mul(set1(-1.f / 3), sub(s02, s13));
  const V8 p = fma(set1(8.f), g[0], fma(set1(4.f), g[1], fma(set1(2.f), g[2], g[3])));
  u[3] = mul(set1(-2.f / 15), p);
  const V8 q = fma(set1(4.f), g[2], fnma(set1(8.f), g[3], fnma(set1(2.f), g[1], g[0])));
  u[4] = mul(set1(1.f / 15), q);
  u[5] = g[3];
}
inline void at3(const V8* m, V8* o) {
  const V8 s12 = add(m[1], m[2]), d12 = sub(m[1], m[2]);
  o[0] = add(add(m[0], s12), add(m[3], m[4]));
  o[1] = fma(set1(0.5f), m[3], fnma(set1(2.f), m[4], d12));
  o[2] = add(fma(set1(0.25f), m[3], fma(set1(4.f), m[4], s12)), m[5]);
}

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
    a00 = fma(b, u0, a00), a01 = fma(b, u1, a01);
    b = _mm256_broadcast_ss(v1 + kv);
    a10 = fma(b, u0, a10), a11 = fma(b, u1, a11);
    b = _mm256_broadcast_ss(v2 + kv);
    a20 = fma(b, u0, a20), a21 = fma(b, u1, a21);
    b = _mm256_broadcast_ss(v3 + kv);
    a30 = fma(b, u0, a30), a31 = fma(b, u1, a31);
    b = _mm256_broadcast_ss(v4 + kv);
    a40 = fma(b, u0, a40), a41 = fma(b, u1, a41);
    b = _mm256_broadcast_ss(v5 + kv);
    a50 = fma(b, u0, a50), a51 = fma(b, u1, a51);
  }
  const V8 acc[6][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}, {a40, a41}, {a50, a51}};
  for (int r = 0; r < 6; ++r)
    for (int h = 0; h < 2; ++h) {
      float* dst = m[r] + 8 * h;
      _mm256_storeu_ps(dst, accumulate ? add(_mm256_loadu_ps(dst), acc[r][h]) : acc[r][h]);
    }
}

// Rows [0, n) of a product in groups of 6; a last group of fewer rows repeats row `first`
// (its extra results go to `sink`). Row r of v starts at v + r * vr, of m at m + r * mr.
inline void rows6(const float* v, int64_t vr, int64_t vk, const float* u, int64_t uk, int64_t K,
                  float* m, int64_t mr, int64_t n, bool accumulate) {
  alignas(32) float sink[16];
  for (int64_t t = 0; t < n; t += 6) {
    const float* vp[6];
    float* mp[6];
    for (int64_t r = 0; r < 6; ++r) {
      const bool real = t + r < n;
      vp[r] = v + (real ? t + r : t) * vr;
      mp[r] = real ? m + (t + r) * mr : sink;
    }
    micro6(vp, vk, u, uk, K, mp, accumulate);
  }
}

}  // namespace

bool built() { return true; }

void weights(const float* w, const WinogradWeights& ws, int64_t C, int64_t O, int64_t c0,
             int64_t c1, float* U) {
  const int64_t plane = O / 16 * C * 16;
  const __m256i lanes = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32(static_cast<int>(ws.o)));
  // Output blocks outermost: each of the 36 planes is then written 64 bytes after the last.
  for (int64_t ob = 0; ob < O / 16; ++ob)
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t o = ob * 16; o < ob * 16 + 16; o += 8) {
        V8 g[3][3], t[6][3], u[6], col[3];
        const float* wc = w + c * ws.c + o * ws.o;
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx)
            g[ky][kx] = _mm256_i32gather_ps(wc + ky * ws.ky + kx * ws.kx, lanes, 4);
        for (int kx = 0; kx < 3; ++kx) {  // columns: G g
          for (int ky = 0; ky < 3; ++ky) col[ky] = g[ky][kx];
          g3(col, u);
          for (int i = 0; i < 6; ++i) t[i][kx] = u[i];
        }
        float* dst = U + (ob * C + c) * 16 + o % 16;
        for (int i = 0; i < 6; ++i) {  // rows: (G g) G^T
          g3(t[i], u);
          for (int j = 0; j < 6; ++j) _mm256_store_ps(dst + (i * 6 + j) * plane, u[j]);
        }
      }
}

void input(const WinogradShape& s, const float* x, int64_t t0, int64_t nt, float* V, int64_t ld) {
  const int64_t TW = s.tiles_w(), TH = s.tiles_h(), CB = s.C / 8;
  for (int64_t tl = 0; tl < nt; ++tl) {
    const int64_t t = t0 + tl, n = t / (TH * TW), ty = t / TW % TH, tx = t % TW;
    const int64_t y0 = ty * 4 - s.pad_top, x0 = tx * 4 - s.pad_left;
    const bool inside = y0 >= 0 && x0 >= 0 && y0 + 6 <= s.H && x0 + 6 <= s.W;
    for (int64_t cb = 0; cb < CB; ++cb) {
      const float* plane = x + (n * CB + cb) * s.H * s.W * 8;
      V8 d[6][6], r[6][6], col[6], out[6];
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
          const int64_t iy = y0 + i, ix = x0 + j;
          d[i][j] = inside || (iy >= 0 && iy < s.H && ix >= 0 && ix < s.W)
                        ? _mm256_loadu_ps(plane + (iy * s.W + ix) * 8)
                        : _mm256_setzero_ps();
        }
      for (int j = 0; j < 6; ++j) {  // columns: B^T d
        for (int i = 0; i < 6; ++i) col[i] = d[i][j];
        bt6(col, out);
        for (int i = 0; i < 6; ++i) r[i][j] = out[i];
      }
      float* dst = V + tl * s.C + cb * 8;
      for (int i = 0; i < 6; ++i) {  // rows: (B^T d) B
        bt6(r[i], out);
        for (int j = 0; j < 6; ++j) _mm256_storeu_ps(dst + (i * 6 + j) * ld, out[j]);
      }
    }
  }
}

void multiply(const float* V, int64_t ldv, const float* U, float* M, int64_t ldm, int64_t nt,
              int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0, int64_t b1) {
  const int64_t OB = O / 16;
  for (int64_t xi = x0; xi < x1; ++xi)
    for (int64_t b = b0; b < b1; ++b) {
      const float* u = U + (xi * OB + b) * C * 16;
      const float* v = V + xi * ldv;
      float* m = M + xi * ldm + b * 16;
      rows6(v, C, 1, u, 16, C, m, O, nt, false);
    }
}

void output(const WinogradShape& s, const float* M, int64_t ld, int64_t t0, int64_t nt, float* y) {
  const int64_t TW = s.tiles_w(), TH = s.tiles_h(), OB8 = s.O / 8;
  for (int64_t tl = 0; tl < nt; ++tl) {
    const int64_t t = t0 + tl, n = t / (TH * TW), ty = t / TW % TH, tx = t % TW;
    const int64_t oy0 = ty * 4, ox0 = tx * 4;
    const int64_t rows = s.OH - oy0 < 4 ? s.OH - oy0 : 4, cols = s.OW - ox0 < 4 ? s.OW - ox0 : 4;
    for (int64_t ob = 0; ob < OB8; ++ob) {
      const float* src = M + tl * s.O + ob * 8;
      V8 m[6][6], r[4][6], col[6], out[4];
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) m[i][j] = _mm256_loadu_ps(src + (i * 6 + j) * ld);
      for (int j = 0; j < 6; ++j) {  // columns: A^T m
        for (int i = 0; i < 6; ++i) col[i] = m[i][j];
        at6(col, out);
        for (int i = 0; i < 4; ++i) r[i][j] = out[i];
      }
      float* plane = y + (n * OB8 + ob) * s.OH * s.OW * 8;
      for (int i = 0; i < rows; ++i) {  // rows: (A^T m) A
        at6(r[i], out);
        for (int j = 0; j < cols; ++j)
          _mm256_storeu_ps(plane + ((oy0 + i) * s.OW + ox0 + j) * 8, out[j]);
      }
    }
  }
}

void grad_input(const WinogradShape& s, const float* dy, int64_t t0, int64_t nt, float* D,
                int64_t ld) {
  const int64_t TW = s.tiles_w(), TH = s.tiles_h(), OB8 = s.O / 8;
  for (int64_t tl = 0; tl < nt; ++tl) {
    const int64_t t = t0 + tl, n = t / (TH * TW), ty = t / TW % TH, tx = t % TW;
    const int64_t oy0 = ty * 4, ox0 = tx * 4;
    for (int64_t ob = 0; ob < OB8; ++ob) {
      const float* plane = dy + (n * OB8 + ob) * s.OH * s.OW * 8;
      V8 g[4][4], r[6][4], col[4], out[6];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)  // dy past the map's edge is zero
          g[i][j] = oy0 + i < s.OH && ox0 + j < s.OW
                        ? _mm256_loadu_ps(plane + ((oy0 + i) * s.OW + ox0 + j) * 8)
                        : _mm256_setzero_ps();
      for (int j = 0; j < 4; ++j) {  // columns: G' g
        for (int i = 0; i < 4; ++i) col[i] = g[i][j];
        g4(col, out);
        for (int i = 0; i < 6; ++i) r[i][j] = out[i];
      }
      float* dst = D + tl * s.O + ob * 8;
      for (int i = 0; i < 6; ++i) {  // rows: (G' g) G'^T
        g4(r[i], out);
        for (int j = 0; j < 6; ++j) _mm256_storeu_ps(dst + (i * 6 + j) * ld, out[j]);
      }
    }
  }
}

void grad_multiply(const float* D, int64_t ldd, const float* X, int64_t ldx, float* P, int64_t nt,
                   int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0, int64_t b1,
                   bool accumulate) {
  for (int64_t xi = x0; xi < x1; ++xi)
    for (int64_t b = b0; b < b1; ++b)  // P[xi][o][16 b ..] over rows o, summing tiles
      rows6(D + xi * ldd, 1, O, X + xi * ldx + b * 16, C, nt, P + (xi * O) * C + b * 16, C, O,
            accumulate);
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
    at3(col, out);
    for (int i = 0; i < 3; ++i) r[i][j] = out[i];
  }
  alignas(32) float k[3][3][8];
  for (int i = 0; i < 3; ++i) {  // rows: (A'^T m) A'
    at3(r[i], out);
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
  for (int64_t xi = 0; xi < 36; ++xi)
    for (int64_t c = c0; c < c1; c += 16)
      rows6(D + xi * ldd + o0, 1, O, X + xi * ldx + c, C, nt, P + xi * ldp + c - c0, ldr, o1 - o0,
            false);
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
