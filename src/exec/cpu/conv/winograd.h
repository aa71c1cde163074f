// netspec's own Winograd F(4x4, 3x3) convolution (first for CPUs where oneDNN has none; with
// 16-lane kernels it also beats oneDNN's on AVX-512): 3x3, stride 1, f32, channel-blocked
// nChw8c or nChw16c activations. Each 4x4 output tile comes from a 6x6 input tile:
// y = A^T [ (G g G^T) . (B^T d B) ] A, the elementwise product summed over input channels as 36
// matrix products (tiles x C times C x O), so a tile costs 36 multiply-adds per channel pair
// instead of direct's 144 (Lavin & Gray, 2016; the interpolation points are in
// winograd_transforms.h). The kernels are AVX2 + FMA
// (winograd_avx2.cpp) and AVX-512 (winograd_avx512.cpp), each file compiled for its ISA;
// winograd.cpp plans and threads them.
#pragma once
#include <cstddef>
#include <cstdint>

namespace netspec::exec::cpu {

// y[n, o, oy, ox] = sum over c, ky, kx of x[n, c, oy + ky - pad_top, ox + kx - pad_left] *
// w[o, c, ky, kx], positions outside x reading zero. C % 8 == 0, O % 16 == 0.
struct WinogradShape {
  int64_t N = 0, C = 0, H = 0, W = 0, O = 0, OH = 0, OW = 0, pad_top = 0, pad_left = 0;
  // x, y and dy as nChw8c, or nChw16c (C and O % 16, winograd_avx512_products()): the transforms
  // then run 16 lanes wide on the planner's AVX-512 layout, with no reorders around them.
  int64_t block = 8;
  int64_t tiles_h() const { return (OH + 3) / 4; }
  int64_t tiles_w() const { return (OW + 3) / 4; }
  int64_t tiles() const { return N * tiles_h() * tiles_w(); }
};

// Where weight w[o, c, ky, kx] lies: w + o*o + c*c + ky*ky + kx*kx (in floats; negative strides
// read a flipped kernel). |o| * 15 fits in 32 bits (the 16 lanes of a gather).
struct WinogradWeights {
  int64_t o = 0, c = 0, ky = 0, kx = 0;
};

// A convolution planned for the Winograd kernels: `run` reads x (nChw8c) and the weights (w
// points at w[0, 0, 0, 0]) and writes y (nChw8c), using scratch_bytes of 64-byte-aligned scratch.
struct WinogradPlan {
  WinogradShape s;
  WinogradWeights w;
  int threads = 1;
  int64_t chunk = 0;      // tiles per task (each worker transforms, multiplies, writes its own)
  bool per_chunk = true;  // false: one pass over all tiles, each phase split over the workers
  bool avx512_products = false;  // the 36 products by wino_avx512 (same bits, 16 lanes)
  size_t scratch_bytes = 0;
  // u: the weights already transformed (transform_weights, kept between calls while the weight
  // operand is unchanged), or null to transform w into scratch first.
  void run(const float* x, const float* w, float* y, uint8_t* scratch,
           const float* u = nullptr) const;
  size_t u_bytes() const { return static_cast<size_t>(36 * s.C * s.O) * sizeof(float); }
  void transform_weights(const float* w, float* u) const;  // U = G g G^T, u_bytes() of them
};

// The weight gradient of that convolution, dW[o, c, ky, kx] = sum over n, oy, ox of
// dy[n, o, oy, ox] * x[n, c, oy + ky - pad_top, ox + kx - pad_left], by F(3x3, 4x4) over the same
// 4x4 tiles of dy: dW = A'^T [sum over tiles of (G' dy_t G'^T) . (B^T x_t B)] A', with B^T as
// above and G', A' from the same points; the sum over tiles is 36 products (O x tiles times
// tiles x C). x, dy: nChw8c; dW written through `dw`'s strides. C % 16 == 0, O % 8 == 0.
struct WinogradGradPlan {
  WinogradShape s;
  WinogradWeights dw;
  int threads = 1;
  int64_t chunk = 0;             // tiles per chunk or pass (products accumulate over them)
  bool per_thread = true;        // each worker sums its chunks into its own P (small weights, many
                                 // tiles); false: passes over all tiles, each phase split
  bool blocks = false;           // one pass of few tiles: products and dW per (48 output rows, 64
                                 // input channels) block, whose 36 planes stay in the worker's L2
  bool avx512_products = false;  // as in WinogradPlan
  size_t scratch_bytes = 0;
  void run(const float* x, const float* dy, float* dw_out, uint8_t* scratch) const;
};
WinogradGradPlan plan_winograd_grad(const WinogradShape& s, const WinogradWeights& dw, int threads,
                                    int64_t pass_bytes = 32 << 20);

// Whether the AVX2 kernels exist in this build and this CPU runs them (AVX2 and FMA).
bool winograd_avx2_runs();
// Whether the plans take wino_avx512's products and nChw16c transforms: built, oneDNN runs
// avx512_core here (so ONEDNN_MAX_CPU_ISA caps it), and NETSPEC_WINO_AVX512 is not 0 (read once).
bool winograd_avx512_products();
// pass_bytes: the most V and M of one pass hold (the schedule for large weights; tests make it
// small to run several passes).
WinogradPlan plan_winograd(const WinogradShape& s, const WinogradWeights& w, int threads,
                           int64_t pass_bytes = 32 << 20);

// The AVX2 kernels (winograd_avx2.cpp). V, U, M: the transformed input [36][tiles][C], weights
// [36][O/16][C][16] and products [36][tiles][O]; `ld` is the distance between two of the 36
// planes in floats.
namespace wino_avx2 {
bool built();
// U for input channels [c0, c1).
void weights(const float* w, const WinogradWeights& ws, int64_t C, int64_t O, int64_t c0,
             int64_t c1, float* U);
// V rows 0..nt-1 for tiles t0..t0+nt-1 (tile t = (n, ty, tx), row-major).
void input(const WinogradShape& s, const float* x, int64_t t0, int64_t nt, float* V, int64_t ld);
// M[xi][t][o] = sum_c V[xi][t][c] U[xi][o/16][c][o%16] for xi in [x0, x1), o-blocks of 16 in
// [b0, b1), rows t in [0, nt).
void multiply(const float* V, int64_t ldv, const float* U, float* M, int64_t ldm, int64_t nt,
              int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0, int64_t b1);
// y for tiles t0..t0+nt-1 from M rows 0..nt-1 (tiles past the map's edge are cut).
void output(const WinogradShape& s, const float* M, int64_t ld, int64_t t0, int64_t nt, float* y);
// The weight gradient's pieces: D[xi][t][o] from dy tiles t0..t0+nt-1; P[xi][o][c] (+)=
// sum over rows t < nt of D[xi][t][o] X[xi][t][c] for xi in [x0, x1), c-blocks of 16 in
// [b0, b1); dW for o in [o0, o1) from P.
void grad_input(const WinogradShape& s, const float* dy, int64_t t0, int64_t nt, float* D,
                int64_t ld);
void grad_multiply(const float* D, int64_t ldd, const float* X, int64_t ldx, float* P, int64_t nt,
                   int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0, int64_t b1,
                   bool accumulate);
void grad_output(const float* P, int64_t C, int64_t O, int64_t o0, int64_t o1,
                 const WinogradWeights& ws, float* dw);
// One (output rows, input channels) block of the single-pass schedule: Pb[xi][o - o0][c - c0]
// = sum over rows t < nt of D[xi][t][o] X[xi][t][c] for all 36 planes, o in [o0, o1), c in
// [c0, c1) (multiples of 16; Pb's planes `ldp` floats apart, its rows `ldr`), then dW for the
// block from Pb.
void grad_multiply_block(const float* D, int64_t ldd, const float* X, int64_t ldx, int64_t nt,
                         int64_t C, int64_t O, int64_t o0, int64_t o1, int64_t c0, int64_t c1,
                         float* Pb, int64_t ldp, int64_t ldr);
void grad_output_block(const float* Pb, int64_t ldp, int64_t ldr, int64_t o0, int64_t o1,
                       int64_t c0, int64_t c1, const WinogradWeights& ws, float* dw);
}  // namespace wino_avx2

// multiply and grad_multiply of wino_avx2 with 16-lane vectors (winograd_avx512.cpp): the same
// FMAs in the same order, so the same results.
namespace wino_avx512 {
bool built();
void multiply(const float* V, int64_t ldv, const float* U, float* M, int64_t ldm, int64_t nt,
              int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0, int64_t b1);
void grad_multiply(const float* D, int64_t ldd, const float* X, int64_t ldx, float* P, int64_t nt,
                   int64_t C, int64_t O, int64_t x0, int64_t x1, int64_t b0, int64_t b1,
                   bool accumulate);
void grad_multiply_block(const float* D, int64_t ldd, const float* X, int64_t ldx, int64_t nt,
                         int64_t C, int64_t O, int64_t o0, int64_t o1, int64_t c0, int64_t c1,
                         float* Pb, int64_t ldp, int64_t ldr);
// wino_avx2's weights (16 output channels per vector; same bits), and its input, output and
// grad_input on nChw16c (winograd_transforms.h, 16 lanes).
void weights(const float* w, const WinogradWeights& ws, int64_t C, int64_t O, int64_t c0,
             int64_t c1, float* U);
void input16(const WinogradShape& s, const float* x, int64_t t0, int64_t nt, float* V, int64_t ld);
void output16(const WinogradShape& s, const float* M, int64_t ld, int64_t t0, int64_t nt, float* y);
void grad_input16(const WinogradShape& s, const float* dy, int64_t t0, int64_t nt, float* D,
                  int64_t ld);
}  // namespace wino_avx512

}  // namespace netspec::exec::cpu
