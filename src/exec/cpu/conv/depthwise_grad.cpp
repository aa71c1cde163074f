// Depthwise weight gradients (one input and one output channel per group) where oneDNN has no
// fast kernel: oneDNN 2.6's jit_dw backward-weights kernel takes 3x3 only, and its gemm:jit
// fallback ran convnext's 7x7 and efficientnet's 5x5 depthwise gradients at 2-6 GFLOP/s (a
// quarter to a third of convnext-tiny's train step at 96x96).
//   dW[c, kh, kw] = Σ_n Σ_oh,ow dy[n, c, oh, ow] · x[n, c, oh·s + kh·d − l, ow·s + kw·d − l]
// Per channel, each sample's x plane is copied zero-padded onto a grid of Hp x Wp (Hp =
// (OH−1)·s + (KH−1)·d + 1) and dy spread onto a grid of the same shape at (oh·s, ow·s), zeros
// between. Then each tap (kh, kw) is one contiguous dot of the dy grid with the x grid shifted by
// kh·d·Wp + kw·d: grid positions that hold no dy add zero. A row of taps runs at once (one dy
// load, KW shifted x loads, KW vector accumulators). Channels run in parallel; each tap sums its
// lanes in a fixed order, so results do not depend on the thread count.
#include <algorithm>
#include <vector>

#include "core/thread_pool.h"
#include "exec/cpu/conv/conv_sides.h"

namespace netspec::exec::cpu {
namespace {

#if defined(__AVX512F__)
constexpr int64_t kLanes = 16;
#else
constexpr int64_t kLanes = 8;
#endif

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// acc[kw] (kLanes partial sums each) += Σ over the planes of dg[i] · xg[i + kw·dw], for the
// `planes` planes of `plane` floats, `span` (a multiple of kLanes) positions of each.
template <int KW>
void tap_row(const float* dg, const float* xg, int64_t planes, int64_t plane, int64_t span,
             int64_t dw, int kw_n, float (*acc)[kLanes]) {
  const int n_kw = KW > 0 ? KW : kw_n;
  for (int64_t p = 0; p < planes; ++p) {
    const float* d = dg + p * plane;
    const float* xr = xg + p * plane;
    for (int64_t i = 0; i < span; i += kLanes)
      for (int kw = 0; kw < n_kw; ++kw) {
        const float* xs = xr + i + kw * dw;
        for (int64_t l = 0; l < kLanes; ++l) acc[kw][l] += d[i + l] * xs[l];
      }
  }
}

}  // namespace

std::optional<Compiled> compile_depthwise_weight_grad(const DepthwiseGradShape& s) {
  if (s.N < 1 || s.C < 1 || s.OH < 1 || s.OW < 1 || s.KH < 1 || s.KW < 1 || s.sh < 1 || s.sw < 1 ||
      s.dh < 1 || s.dw < 1 || s.ph < 0 || s.pw < 0)
    return std::nullopt;
  const int64_t Hp = (s.OH - 1) * s.sh + (s.KH - 1) * s.dh + 1;
  const int64_t Wp = (s.OW - 1) * s.sw + (s.KW - 1) * s.dw + 1;
  const int64_t span = round_up(((s.OH - 1) * s.sh + 1) * Wp, kLanes);  // dy's rows of a grid
  const int64_t plane = round_up(std::max(Hp * Wp, span), kLanes);
  const int64_t reach = (s.KH - 1) * s.dh * Wp + (s.KW - 1) * s.dw;  // the farthest tap shift
  const auto grid = static_cast<size_t>(s.N * plane + reach + kLanes);
  Compiled c;
  c.run = [=](const RunArgs& a) {
    const float* x = a.in[0]->data<float>();
    const float* dy = a.in[1]->data<float>();
    float* dW = a.out[0]->data<float>();
    parallel_for(s.C, 1, [&](int64_t lo, int64_t hi) {
      thread_local std::vector<float> xg, dg;
      // The same grid positions are written for every channel: zero once per call.
      xg.assign(grid, 0.f);
      dg.assign(grid, 0.f);
      for (int64_t ch = lo; ch < hi; ++ch) {
        for (int64_t n = 0; n < s.N; ++n) {
          const float* xp = x + n * s.x_n + ch * s.x_c;
          float* xq = xg.data() + n * plane;
          for (int64_t ih = 0; ih < s.H && ih + s.ph < Hp; ++ih)
            for (int64_t iw = 0; iw < s.W && iw + s.pw < Wp; ++iw)
              xq[(ih + s.ph) * Wp + iw + s.pw] = xp[ih * s.x_h + iw * s.x_w];
          const float* dp = dy + n * s.dy_n + ch * s.dy_c;
          float* dq = dg.data() + n * plane;
          for (int64_t oh = 0; oh < s.OH; ++oh)
            for (int64_t ow = 0; ow < s.OW; ++ow)
              dq[oh * s.sh * Wp + ow * s.sw] = dp[oh * s.dy_h + ow * s.dy_w];
        }
        for (int64_t kh = 0; kh < s.KH; ++kh) {
          const float* xr = xg.data() + kh * s.dh * Wp;
          for (int64_t kw0 = 0; kw0 < s.KW; kw0 += 7) {  // rows of up to 7 taps
            const int n_kw = static_cast<int>(std::min<int64_t>(7, s.KW - kw0));
            alignas(64) float acc[7][kLanes] = {};
            const float* xs = xr + kw0 * s.dw;
            switch (n_kw) {
              case 7:
                tap_row<7>(dg.data(), xs, s.N, plane, span, s.dw, 7, acc);
                break;
              case 5:
                tap_row<5>(dg.data(), xs, s.N, plane, span, s.dw, 5, acc);
                break;
              case 3:
                tap_row<3>(dg.data(), xs, s.N, plane, span, s.dw, 3, acc);
                break;
              default:
                tap_row<0>(dg.data(), xs, s.N, plane, span, s.dw, n_kw, acc);
                break;
            }
            for (int k = 0; k < n_kw; ++k) {
              float sum = 0.f;
              for (int64_t l = 0; l < kLanes; ++l) sum += acc[k][l];
              dW[ch * s.w_c + kh * s.w_h + (kw0 + k) * s.w_w] = sum;
            }
          }
        }
      }
    });
  };
  return c;
}

}  // namespace netspec::exec::cpu
