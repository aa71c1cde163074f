// The data transforms of winograd.h's kernels and the loops around their products, written once
// for any vector width: K gives the vector type V, its lanes (the channel block of the
// activations: nChw8c with AVX2, nChw16c with AVX-512), the ops, and the products' micro-kernel
// (kRows rows x 16 columns). Included only by winograd_avx2.cpp and winograd_avx512.cpp: it lives
// in an unnamed namespace, so each of them compiles its own copy for its ISA with internal linkage
// (no inline code shared across ISAs).
#pragma once
#include <cstdint>

#include "exec/cpu/conv/winograd.h"

namespace netspec::exec::cpu {
namespace {  // NOLINT(google-build-namespaces): one copy per ISA file, on purpose

template <class K>
struct WinogradTransforms {
  using V = typename K::V;
  static constexpr int64_t B = K::kLanes;

  // The points are 0, 1, -1, 1/2, -2 and infinity: 1/2 in place of the usual 2 makes the largest
  // coefficients smaller and the result ~1.6x more accurate (rms, unit-scale data; Barabasz et
  // al., 2020). Row i of B^T holds the coefficients of prod over j != i of (x - p_j), ascending;
  // row i of G is [1, p_i, p_i^2] / prod over j != i of (p_i - p_j); column i of A^T is [1, p_i,
  // p_i^2, p_i^3] (the infinite point: x^5's row, [0 0 1] and [0 0 0 1]).
  // B^T d: rows [1 -3/2 -2 3/2 1 0], [0 -1 1/2 5/2 1 0], [0 1 -5/2 1/2 1 0], [0 -2 -1 2 1 0],
  // [0 1/2 -1 -1/2 1 0], [0 1 -3/2 -2 3/2 1].
  static void bt6(const V* d, V* t) {
    const V e = K::sub(d[3], d[1]), f = K::sub(d[4], d[2]);
    const V half = K::set1(0.5f), two = K::set1(2.f), h3 = K::set1(1.5f), h5 = K::set1(2.5f);
    t[0] = K::fma(h3, e, K::fnma(two, d[2], K::add(d[0], d[4])));
    t[1] = K::fma(h5, d[3], K::fma(half, d[2], K::sub(d[4], d[1])));
    t[2] = K::fma(half, d[3], K::fnma(h5, d[2], K::add(d[4], d[1])));
    t[3] = K::fma(two, e, f);
    t[4] = K::fnma(half, e, f);
    t[5] = K::fma(h3, f, K::fnma(two, d[3], K::add(d[1], d[5])));
  }

  // G g: rows [1 0 0], [1 1 1] / 3, [1 -1 1] / -3, [1 1/2 1/4] / (-15/16), [1 -2 4] / 15,
  // [0 0 1].
  static void g3(const V* g, V* u) {
    const V s02 = K::add(g[0], g[2]);
    u[0] = g[0];
    u[1] = K::mul(K::set1(1.f / 3), K::add(s02, g[1]));
    u[2] = K::mul(K::set1(-1.f / 3), K::sub(s02, g[1]));
    u[3] = K::mul(K::set1(-4.f / 15), K::fma(K::set1(4.f), g[0], K::fma(K::set1(2.f), g[1], g[2])));
    u[4] = K::mul(K::set1(1.f / 15), K::fma(K::set1(4.f), g[2], K::fnma(K::set1(2.f), g[1], g[0])));
    u[5] = g[2];
  }

  // U (G g G^T) for input channels [c0, c1), one vector of K::kLanes output channels at a time:
  // g's 9 taps gathered from w through its strides (lane offsets `lanes`, ws.o apart).
  template <class Gather>
  static void weights(const float* w, const WinogradWeights& ws, int64_t C, int64_t O, int64_t c0,
                      int64_t c1, float* U, Gather gather) {
    const int64_t plane = O / 16 * C * 16;
    // Output blocks outermost: each of the 36 planes is then written 64 bytes after the last.
    for (int64_t ob = 0; ob < O / 16; ++ob)
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t o = ob * 16; o < ob * 16 + 16; o += B) {
          V g[3][3], t[6][3], u[6], col[3];
          const float* wc = w + c * ws.c + o * ws.o;
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) g[ky][kx] = gather(wc + ky * ws.ky + kx * ws.kx);
          for (int kx = 0; kx < 3; ++kx) {  // columns: G g
            for (int ky = 0; ky < 3; ++ky) col[ky] = g[ky][kx];
            g3(col, u);
            for (int i = 0; i < 6; ++i) t[i][kx] = u[i];
          }
          float* dst = U + (ob * C + c) * 16 + o % 16;
          for (int i = 0; i < 6; ++i) {  // rows: (G g) G^T
            g3(t[i], u);
            for (int j = 0; j < 6; ++j) K::store(dst + (i * 6 + j) * plane, u[j]);
          }
        }
  }

  // A^T m: rows [1 1 1 1 1 0], [0 1 -1 1/2 -2 0], [0 1 1 1/4 4 0], [0 1 -1 1/8 -8 1].
  static void at6(const V* m, V* o) {
    const V s12 = K::add(m[1], m[2]), d12 = K::sub(m[1], m[2]);
    o[0] = K::add(K::add(m[0], s12), K::add(m[3], m[4]));
    o[1] = K::fma(K::set1(0.5f), m[3], K::fnma(K::set1(2.f), m[4], d12));
    o[2] = K::fma(K::set1(0.25f), m[3], K::fma(K::set1(4.f), m[4], s12));
    o[3] = K::add(K::fma(K::set1(0.125f), m[3], K::fnma(K::set1(8.f), m[4], d12)), m[5]);
  }

  // The weight gradient's F(3x3, 4x4) on the same points (winograd.h): G' d over a 4x4 tile of dy,
  // rows [1 0 0 0], [1 1 1 1] / 3, [1 -1 1 -1] / -3, [1 1/2 1/4 1/8] / (-15/16), [1 -2 4 -8] / 15,
  // [0 0 0 1].
  static void g4(const V* g, V* u) {
    const V s02 = K::add(g[0], g[2]), s13 = K::add(g[1], g[3]);
    u[0] = g[0];
    u[1] = K::mul(K::set1(1.f / 3), K::add(s02, s13));
    u[2] = K::mul(K::set1(-1.f / 3), K::sub(s02, s13));
    const V p =
        K::fma(K::set1(8.f), g[0], K::fma(K::set1(4.f), g[1], K::fma(K::set1(2.f), g[2], g[3])));
    u[3] = K::mul(K::set1(-2.f / 15), p);
    const V q =
        K::fma(K::set1(4.f), g[2], K::fnma(K::set1(8.f), g[3], K::fnma(K::set1(2.f), g[1], g[0])));
    u[4] = K::mul(K::set1(1.f / 15), q);
    u[5] = g[3];
  }

  // The weight gradient's A'^T (G' is g4 above): rows [1 1 1 1 1 0], [0 1 -1 1/2 -2 0],
  // [0 1 1 1/4 4 1].
  static void at3(const V* m, V* o) {
    const V s12 = K::add(m[1], m[2]), d12 = K::sub(m[1], m[2]);
    o[0] = K::add(K::add(m[0], s12), K::add(m[3], m[4]));
    o[1] = K::fma(K::set1(0.5f), m[3], K::fnma(K::set1(2.f), m[4], d12));
    o[2] = K::add(K::fma(K::set1(0.25f), m[3], K::fma(K::set1(4.f), m[4], s12)), m[5]);
  }

  // Rows [0, n) of a product in groups of kRows; a last group of fewer rows repeats row `first`
  // (its extra results go to `sink`). Row r of v starts at v + r * vr, of m at m + r * mr.
  static void rows(const float* v, int64_t vr, int64_t vk, const float* u, int64_t uk, int64_t K_,
                   float* m, int64_t mr, int64_t n, bool accumulate) {
    alignas(64) float sink[16];
    for (int64_t t = 0; t < n; t += K::kRows) {
      const float* vp[K::kRows];
      float* mp[K::kRows];
      for (int64_t r = 0; r < K::kRows; ++r) {
        const bool real = t + r < n;
        vp[r] = v + (real ? t + r : t) * vr;
        mp[r] = real ? m + (t + r) * mr : sink;
      }
      K::micro(vp, vk, u, uk, K_, mp, accumulate);
    }
  }

  // winograd.h's multiply, grad_multiply and grad_multiply_block.
  static void multiply(const float* Vt, int64_t ldv, const float* U, float* M, int64_t ldm,
                       int64_t nt, int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0,
                       int64_t b1) {
    const int64_t OB = O / 16;
    for (int64_t xi = x0; xi < x1; ++xi)
      for (int64_t b = b0; b < b1; ++b)
        rows(Vt + xi * ldv, C, 1, U + (xi * OB + b) * C * 16, 16, C, M + xi * ldm + b * 16, O, nt,
             false);
  }
  static void grad_multiply(const float* D, int64_t ldd, const float* X, int64_t ldx, float* P,
                            int64_t nt, int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0,
                            int64_t b1, bool accumulate) {
    for (int64_t xi = x0; xi < x1; ++xi)
      for (int64_t b = b0; b < b1; ++b)  // P[xi][o][16 b ..] over rows o, summing tiles
        rows(D + xi * ldd, 1, O, X + xi * ldx + b * 16, C, nt, P + (xi * O) * C + b * 16, C, O,
             accumulate);
  }
  static void grad_multiply_block(const float* D, int64_t ldd, const float* X, int64_t ldx,
                                  int64_t nt, int64_t C, int64_t O, int64_t o0, int64_t o1,
                                  int64_t c0, int64_t c1, float* P, int64_t ldp, int64_t ldr) {
    for (int64_t xi = 0; xi < 36; ++xi)
      for (int64_t c = c0; c < c1; c += 16)
        rows(D + xi * ldd + o0, 1, O, X + xi * ldx + c, C, nt, P + xi * ldp + c - c0, ldr, o1 - o0,
             false);
  }

  // V rows 0..nt-1 (B^T d B per input channel) for tiles t0..t0+nt-1 of x (nChw{B}c).
  static void input(const WinogradShape& s, const float* x, int64_t t0, int64_t nt, float* Vt,
                    int64_t ld) {
    const int64_t TW = s.tiles_w(), TH = s.tiles_h(), CB = s.C / B;
    for (int64_t tl = 0; tl < nt; ++tl) {
      const int64_t t = t0 + tl, n = t / (TH * TW), ty = t / TW % TH, tx = t % TW;
      const int64_t y0 = ty * 4 - s.pad_top, x0 = tx * 4 - s.pad_left;
      const bool inside = y0 >= 0 && x0 >= 0 && y0 + 6 <= s.H && x0 + 6 <= s.W;
      for (int64_t cb = 0; cb < CB; ++cb) {
        const float* plane = x + (n * CB + cb) * s.H * s.W * B;
        V d[6][6], r[6][6], col[6], out[6];
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 6; ++j) {
            const int64_t iy = y0 + i, ix = x0 + j;
            d[i][j] = inside || (iy >= 0 && iy < s.H && ix >= 0 && ix < s.W)
                          ? K::load(plane + (iy * s.W + ix) * B)
                          : K::zero();
          }
        for (int j = 0; j < 6; ++j) {  // columns: B^T d
          for (int i = 0; i < 6; ++i) col[i] = d[i][j];
          bt6(col, out);
          for (int i = 0; i < 6; ++i) r[i][j] = out[i];
        }
        float* dst = Vt + tl * s.C + cb * B;
        for (int i = 0; i < 6; ++i) {  // rows: (B^T d) B
          bt6(r[i], out);
          for (int j = 0; j < 6; ++j) K::store(dst + (i * 6 + j) * ld, out[j]);
        }
      }
    }
  }

  // y (nChw{B}c) for tiles t0..t0+nt-1 from M rows 0..nt-1 (tiles past the map's edge are cut).
  static void output(const WinogradShape& s, const float* M, int64_t ld, int64_t t0, int64_t nt,
                     float* y) {
    const int64_t TW = s.tiles_w(), TH = s.tiles_h(), OB = s.O / B;
    for (int64_t tl = 0; tl < nt; ++tl) {
      const int64_t t = t0 + tl, n = t / (TH * TW), ty = t / TW % TH, tx = t % TW;
      const int64_t oy0 = ty * 4, ox0 = tx * 4;
      const int64_t rows = s.OH - oy0 < 4 ? s.OH - oy0 : 4, cols = s.OW - ox0 < 4 ? s.OW - ox0 : 4;
      for (int64_t ob = 0; ob < OB; ++ob) {
        const float* src = M + tl * s.O + ob * B;
        V m[6][6], r[4][6], col[6], out[4];
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 6; ++j) m[i][j] = K::load(src + (i * 6 + j) * ld);
        for (int j = 0; j < 6; ++j) {  // columns: A^T m
          for (int i = 0; i < 6; ++i) col[i] = m[i][j];
          at6(col, out);
          for (int i = 0; i < 4; ++i) r[i][j] = out[i];
        }
        float* plane = y + (n * OB + ob) * s.OH * s.OW * B;
        for (int i = 0; i < rows; ++i) {  // rows: (A^T m) A
          at6(r[i], out);
          for (int j = 0; j < cols; ++j) K::store(plane + ((oy0 + i) * s.OW + ox0 + j) * B, out[j]);
        }
      }
    }
  }

  // D rows 0..nt-1 (G' dy G'^T per output channel) for tiles t0..t0+nt-1 of dy (nChw{B}c).
  static void grad_input(const WinogradShape& s, const float* dy, int64_t t0, int64_t nt, float* D,
                         int64_t ld) {
    const int64_t TW = s.tiles_w(), TH = s.tiles_h(), OB = s.O / B;
    for (int64_t tl = 0; tl < nt; ++tl) {
      const int64_t t = t0 + tl, n = t / (TH * TW), ty = t / TW % TH, tx = t % TW;
      const int64_t oy0 = ty * 4, ox0 = tx * 4;
      for (int64_t ob = 0; ob < OB; ++ob) {
        const float* plane = dy + (n * OB + ob) * s.OH * s.OW * B;
        V g[4][4], r[6][4], col[4], out[6];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j)  // dy past the map's edge is zero
            g[i][j] = oy0 + i < s.OH && ox0 + j < s.OW
                          ? K::load(plane + ((oy0 + i) * s.OW + ox0 + j) * B)
                          : K::zero();
        for (int j = 0; j < 4; ++j) {  // columns: G' g
          for (int i = 0; i < 4; ++i) col[i] = g[i][j];
          g4(col, out);
          for (int i = 0; i < 6; ++i) r[i][j] = out[i];
        }
        float* dst = D + tl * s.O + ob * B;
        for (int i = 0; i < 6; ++i) {  // rows: (G' g) G'^T
          g4(r[i], out);
          for (int j = 0; j < 6; ++j) K::store(dst + (i * 6 + j) * ld, out[j]);
        }
      }
    }
  }
};

}  // namespace
}  // namespace netspec::exec::cpu
