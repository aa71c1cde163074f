// Pooling kernels: f32 reduce_window (max / add) and select_and_scatter (max-pool's VJP) whose
// windows span at most two dims (the spatial ones, any layout); every other dim is a "plane"
// (window 1, stride 1, no padding). Planes run in parallel; inside a plane the window loop is a
// plain 2-D loop. Semantics follow the ref kernels exactly: a padded position contributes the
// init value to a reduce_window fold, select_and_scatter picks the first window element unless
// select(current, candidate) is false (padding is never a candidate) and adds the source there.
// Other shapes and bodies use reduce.cpp's generic kernel or the ref kernel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/thread_pool.h"
#include "exec/cpu/kernels.h"
#include "exec/scalar_ops.h"
#include "hlo/op_family.h"

namespace netspec::exec::cpu {
namespace {

using hlo::I64s;
using hlo::OpKind;

// Geometry: window dims h, w (size 1 / stride 0 when absent) and the per-plane base offsets.
struct Pool2d {
  int64_t ih = 1, iw = 1, oh = 1, ow = 1, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  int64_t xs_h = 0, xs_w = 0, os_h = 0,
          os_w = 0;                       // element strides of h, w in the big / small tensor
  std::vector<int64_t> plane_x, plane_o;  // base offset of each plane
};

// `big` is the windowed operand, `small` the per-window tensor (reduce_window's result or
// select_and_scatter's source).
std::optional<Pool2d> pool_geometry(const std::optional<WindowAttrs>& w, const Shape& big,
                                    const Shape& small) {
  const size_t r = big.size();
  if (small.size() != r || r == 0 || !w || w->win.size() != r) return std::nullopt;
  const I64s &win = w->win, &str = w->strides;
  const std::vector<int64_t>& lo = w->lo;
  std::vector<size_t> active, plane;
  for (size_t d = 0; d < r; ++d) {
    if (win[d] < 1 || str[d] < 1 || lo[d] < 0) return std::nullopt;
    bool is_plane = win[d] == 1 && str[d] == 1 && lo[d] == 0 && big[d] == small[d];
    (is_plane ? plane : active).push_back(d);
  }
  if (active.size() > 2) return std::nullopt;
  std::vector<int64_t> bs = row_major_strides(big), ss = row_major_strides(small);
  Pool2d g;
  auto set = [&](size_t d, int64_t& i, int64_t& o, int64_t& k, int64_t& s, int64_t& p, int64_t& xs,
                 int64_t& os) {
    i = big[d], o = small[d], k = win[d], s = str[d], p = lo[d], xs = bs[d], os = ss[d];
  };
  if (!active.empty()) set(active[0], g.ih, g.oh, g.kh, g.sh, g.ph, g.xs_h, g.os_h);
  if (active.size() == 2) set(active[1], g.iw, g.ow, g.kw, g.sw, g.pw, g.xs_w, g.os_w);
  // Plane base offsets by an odometer over the plane dims.
  int64_t n_planes = 1;
  for (size_t d : plane) n_planes *= big[d];
  if (n_planes == 0 || g.oh * g.ow == 0) return std::nullopt;
  g.plane_x.resize(static_cast<size_t>(n_planes));
  g.plane_o.resize(static_cast<size_t>(n_planes));
  std::vector<int64_t> idx(plane.size(), 0);
  for (int64_t p = 0; p < n_planes; ++p) {
    int64_t xo = 0, oo = 0;
    for (size_t k = 0; k < plane.size(); ++k) {
      xo += idx[k] * bs[plane[k]];
      oo += idx[k] * ss[plane[k]];
    }
    g.plane_x[static_cast<size_t>(p)] = xo;
    g.plane_o[static_cast<size_t>(p)] = oo;
    for (size_t k = plane.size(); k-- > 0;) {
      if (++idx[k] < big[plane[k]]) break;
      idx[k] = 0;
    }
  }
  return g;
}

// The geometry of op's window; block B > 0: both tensors are channel-blocked [N, C, H, W]
// (physically [N, C/B, H, W, B]: the lane dim is one more plane dim, window 1).
std::optional<Pool2d> op_geometry(const hlo::Op& op, const Shape& big, const Shape& small, int B) {
  std::optional<WindowAttrs> w = undilated_window(op, big.size());
  if (!w || B == 0) return pool_geometry(w, big, small);
  if (big.size() != 4 || small.size() != 4 || w->win[1] != 1 || w->strides[1] != 1 ||
      w->lo[1] != 0 || big[1] % B != 0 || small[1] != big[1])
    return std::nullopt;
  auto phys = [B](const Shape& s) { return Shape{s[0], s[1] / B, s[2], s[3], B}; };
  w->win.push_back(1);
  w->strides.push_back(1);
  w->lo.push_back(0);
  return pool_geometry(w, phys(big), phys(small));
}

// IEEE maximum as in the ref body (exec/scalar_ops.h): the first NaN propagates, -0 < +0.
inline float fmax_ieee(float a, float b) { return Scalar<OpKind::kMaximum>::apply(a, b); }

// B lanes of a channel block as one GCC vector (zmm / 2 ymm / ...), and its lane masks.
template <int B>
struct Lanes {
  typedef float F __attribute__((vector_size(B * sizeof(float))));
  typedef int32_t I __attribute__((vector_size(B * sizeof(float))));
  static F load(const float* p) {
    F v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, F v) { std::memcpy(p, &v, sizeof v); }
  static F splat(float x) { return F{} + x; }
  // fmax_ieee lane by lane: a > b ? a : b gives b for a NaN b; equal values give a & b bitwise
  // (+0 from ±0, else a itself); a NaN a wins. (Vector casts keep the bits.)
  static F max(F a, F b) {
    F r = a > b ? a : b;
    r = a == b ? (F)((I)a & (I)b) : r;
    return a != a ? a : r;
  }
};

// The single op of a two-argument region `(a, b) -> op(x, y)`; sets `swapped` when x = b.
const hlo::Op* body_op(const hlo::Block& b, bool& swapped) {
  if (b.args.size() != 2 || b.ops.size() != 2) return nullptr;
  const hlo::Op& op = *b.ops[0];
  const hlo::Op& ret = *b.ops[1];
  if (ret.kind != OpKind::kReturn || ret.operands.size() != 1 || ret.operand(0) != op.result())
    return nullptr;
  if (op.operands.size() != 2) return nullptr;
  if (op.operand(0) == b.arg(0) && op.operand(1) == b.arg(1))
    swapped = false;
  else if (op.operand(0) == b.arg(1) && op.operand(1) == b.arg(0))
    swapped = true;
  else
    return nullptr;
  return &op;
}

bool all_f32(const hlo::Op& op) {
  for (auto* v : op.operands)
    if (v->type.dtype() != DType::kF32) return false;
  return op.result(0)->type.dtype() == DType::kF32;
}

// One plane of a 2-D pool. Rows and columns whose windows lie inside the input (the interior)
// fold without bounds checks; the border ones read `init` for padded positions. The fold order
// (init, then the window row by row) is the ref kernel's in both, so the results are identical.
template <bool kMax>
void pool_plane(const Pool2d& g, const float* xp, float* op_, float init) {
  auto f = [](float acc, float v) { return kMax ? fmax_ieee(acc, v) : acc + v; };
  // Outputs whose window starts at >= 0 and ends at <= the input size, per axis.
  auto interior = [](int64_t o, int64_t k, int64_t s, int64_t p, int64_t in, int64_t& lo,
                     int64_t& hi) {
    lo = std::min(o, (p + s - 1) / s);
    hi = lo;
    while (hi < o && hi * s - p + k <= in) ++hi;
  };
  int64_t y0, y1, x0, x1;
  interior(g.oh, g.kh, g.sh, g.ph, g.ih, y0, y1);
  interior(g.ow, g.kw, g.sw, g.pw, g.iw, x0, x1);
  // Interior rows: the fold runs window position by window position over a whole run of
  // outputs (the same per-output order, but a loop over outputs the compiler vectorises).
  constexpr int64_t kRun = 256;
  float acc_run[kRun];
  for (int64_t y = 0; y < g.oh; ++y) {
    const bool row_in = y >= y0 && y < y1;
    for (int64_t xo = 0; xo < g.ow; ++xo) {
      if (row_in && xo == x0 && x1 > x0) {
        for (int64_t xb = x0; xb < x1; xb += kRun) {
          const int64_t len = std::min(kRun, x1 - xb);
          for (int64_t t = 0; t < len; ++t) acc_run[t] = init;
          for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
              const float* w =
                  xp + (y * g.sh - g.ph + i) * g.xs_h + (xb * g.sw - g.pw + j) * g.xs_w;
              const int64_t step = g.sw * g.xs_w;
              for (int64_t t = 0; t < len; ++t) acc_run[t] = f(acc_run[t], w[t * step]);
            }
          for (int64_t t = 0; t < len; ++t) op_[y * g.os_h + (xb + t) * g.os_w] = acc_run[t];
        }
        xo = x1 - 1;
        continue;
      }
      float acc = init;
      for (int64_t i = 0; i < g.kh; ++i) {
        const int64_t hh = y * g.sh + i - g.ph;
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t ww = xo * g.sw + j - g.pw;
          const bool inside = hh >= 0 && hh < g.ih && ww >= 0 && ww < g.iw;
          acc = f(acc, inside ? xp[hh * g.xs_h + ww * g.xs_w] : init);
        }
      }
      op_[y * g.os_h + xo * g.os_w] = acc;
    }
  }
}

// f(std::integral_constant<int, B>) for the block sizes the kernels are compiled for (16, 8).
template <typename F>
void with_block(int B, F&& f) {
  if (B == 16)
    f(std::integral_constant<int, 16>{});
  else
    f(std::integral_constant<int, 8>{});
}

// The outputs [lo, hi) of a row whose window column j lies inside the input: 0 <= xo·sw + j - pw
// < iw.
inline void inside_columns(const Pool2d& g, int64_t j, int64_t& lo, int64_t& hi) {
  const int64_t first = g.pw - j;  // xo·sw >= first
  lo = first <= 0 ? 0 : (first + g.sw - 1) / g.sw;
  const int64_t last = g.iw - 1 + g.pw - j;  // xo·sw <= last
  hi = last < 0 ? 0 : std::min(g.ow, last / g.sw + 1);
  lo = std::min(lo, hi);
}

// Channel-blocked planes: the B lanes of one block (consecutive planes, element stride 1) fold
// together as one vector, each lane in the ref kernel's order. A row of outputs folds window
// position by window position (acc: one vector per output of the row), so the folds of
// neighbouring outputs are independent (resnet50's 3x3/2 pool at 16x64x112x112 on a Zen 5:
// 8.5 ms with a loop per lane, 4.3 one output at a time, 2.2 this way).
template <int B, bool kMax>
void pool_lanes(const Pool2d& g, const float* xp, float* op_, float init,
                std::vector<typename Lanes<B>::F>& acc) {
  using L = Lanes<B>;
  const typename L::F vinit = L::splat(init);
  acc.resize(static_cast<size_t>(g.ow));
  for (int64_t y = 0; y < g.oh; ++y) {
    for (auto& a : acc) a = vinit;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t hh = y * g.sh + i - g.ph;
      const bool row_in = hh >= 0 && hh < g.ih;
      auto fold = [&](int64_t xo, typename L::F v) {
        auto& a = acc[static_cast<size_t>(xo)];
        a = kMax ? L::max(a, v) : a + v;
      };
      for (int64_t j = 0; j < g.kw; ++j) {
        int64_t lo = 0, hi = 0;
        if (row_in) inside_columns(g, j, lo, hi);
        for (int64_t xo = 0; xo < lo; ++xo) fold(xo, vinit);
        if (lo < hi) {  // (the pointer is formed only where it points into the plane)
          const float* at = xp + hh * g.xs_h + (lo * g.sw + j - g.pw) * g.xs_w;
          for (int64_t xo = lo; xo < hi; ++xo, at += g.sw * g.xs_w) fold(xo, L::load(at));
        }
        for (int64_t xo = hi; xo < g.ow; ++xo) fold(xo, vinit);
      }
    }
    for (int64_t xo = 0; xo < g.ow; ++xo)
      L::store(op_ + y * g.os_h + xo * g.os_w, acc[static_cast<size_t>(xo)]);
  }
}

template <int B>
void pool_blocked_run(const Pool2d& g, bool is_max, const RunArgs& a) {
  const float* x = a.in[0]->data<float>();
  const float init = a.in[1]->data<float>()[0];
  float* o = a.out[0]->data<float>();
  const int64_t groups = static_cast<int64_t>(g.plane_x.size()) / B;
  parallel_for(groups, 1, [&](int64_t pb, int64_t pe) {
    std::vector<typename Lanes<B>::F> acc;
    for (int64_t p = pb; p < pe; ++p) {
      const float* xp = x + g.plane_x[static_cast<size_t>(p * B)];
      float* op_ = o + g.plane_o[static_cast<size_t>(p * B)];
      if (is_max)
        pool_lanes<B, true>(g, xp, op_, init, acc);
      else
        pool_lanes<B, false>(g, xp, op_, init, acc);
    }
  });
}

std::optional<Compiled> compile_pool(const hlo::Op& op, int B) {
  if (op.operands.size() != 2 || op.regions.size() != 1 || !all_f32(op)) return std::nullopt;
  bool sw = false;
  const hlo::Op* body = body_op(*op.region(0), sw);
  if (!body || (body->kind != OpKind::kMaximum && body->kind != OpKind::kAdd)) return std::nullopt;
  auto g = op_geometry(op, op.operand_type(0).shape(), op.result(0)->type.shape(), B);
  if (!g) return std::nullopt;
  const bool is_max = body->kind == OpKind::kMaximum;
  Compiled c;
  if (B) {
    if (B != 16 && B != 8) return std::nullopt;
    c.run = [g = *g, is_max, B](const RunArgs& a) {
      with_block(B, [&](auto b) { pool_blocked_run<decltype(b)::value>(g, is_max, a); });
    };
    return c;
  }
  c.run = [g = *g, is_max](const RunArgs& a) {
    const float* x = a.in[0]->data<float>();
    const float init = a.in[1]->data<float>()[0];
    float* o = a.out[0]->data<float>();
    const int64_t n_planes = static_cast<int64_t>(g.plane_x.size());
    parallel_for(n_planes, std::max<int64_t>(1, 4096 / (g.oh * g.ow * g.kh * g.kw)),
                 [&](int64_t pb, int64_t pe) {
                   for (int64_t p = pb; p < pe; ++p) {
                     const float* xp = x + g.plane_x[static_cast<size_t>(p)];
                     float* op_ = o + g.plane_o[static_cast<size_t>(p)];
                     if (is_max)
                       pool_plane<true>(g, xp, op_, init);
                     else
                       pool_plane<false>(g, xp, op_, init);
                   }
                 });
  };
  return c;
}

// select_and_scatter on one block of B channel-blocked lanes (B = 1: one row-major plane): per
// lane the ref's choice (first candidate unless keep(current, candidate) is false).
template <int B, typename Keep>
void scatter_lanes(const Pool2d& g, const float* xp, const float* sp, float* op_, float init,
                   Keep keep) {
  for (int64_t hh = 0; hh < g.ih; ++hh)
    for (int64_t ww = 0; ww < g.iw; ++ww)
      for (int l = 0; l < B; ++l) op_[hh * g.xs_h + ww * g.xs_w + l] = init;
  for (int64_t y = 0; y < g.oh; ++y)
    for (int64_t xo = 0; xo < g.ow; ++xo) {
      int64_t best[B];
      for (int l = 0; l < B; ++l) best[l] = -1;
      for (int64_t i = 0; i < g.kh; ++i) {
        const int64_t hh = y * g.sh + i - g.ph;
        if (hh < 0 || hh >= g.ih) continue;
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t ww = xo * g.sw + j - g.pw;
          if (ww < 0 || ww >= g.iw) continue;
          const int64_t off = hh * g.xs_h + ww * g.xs_w;
          for (int l = 0; l < B; ++l)
            if (best[l] < 0 || !keep(xp[best[l] + l], xp[off + l])) best[l] = off;
        }
      }
      const float* s = sp + y * g.os_h + xo * g.os_w;
      for (int l = 0; l < B; ++l)
        if (best[l] >= 0) op_[best[l] + l] += s[l];
    }
}

// The same on B lanes as one vector. First every output's choice per lane (best value and
// window position i·kw + j, -1: none yet), folded window position by window position over a row
// of outputs so that neighbouring outputs' folds are independent. Then each input row gathers:
// init, then the source of every window that chose the position, in the ref's order of adds
// (windows by output row, then by output column: descending j), each a masked add.
// resnet50's max-pool VJP at 16x64x112x112 on a Zen 5: 8.4 ms with a loop per lane, 4.0 this way.
template <int B, typename Keep>
void scatter_vector(const Pool2d& g, const float* xp, const float* sp, float* op_, float init,
                    Keep keep, std::vector<typename Lanes<B>::F>& buf_v,
                    std::vector<typename Lanes<B>::I>& buf_k) {
  using L = Lanes<B>;
  using F = typename L::F;
  using I = typename L::I;
  buf_v.resize(static_cast<size_t>(std::max(g.ow, g.iw)));
  buf_k.resize(static_cast<size_t>(g.oh * g.ow));
  for (int64_t y = 0; y < g.oh; ++y) {
    I* bestk = buf_k.data() + y * g.ow;
    F* bestv = buf_v.data();
    for (int64_t xo = 0; xo < g.ow; ++xo) bestk[xo] = I{} - 1;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t hh = y * g.sh + i - g.ph;
      if (hh < 0 || hh >= g.ih) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int32_t c = static_cast<int32_t>(i * g.kw + j);
        int64_t lo, hi;
        inside_columns(g, j, lo, hi);
        if (lo == hi) continue;
        const float* at = xp + hh * g.xs_h + (lo * g.sw + j - g.pw) * g.xs_w;
        for (int64_t xo = lo; xo < hi; ++xo, at += g.sw * g.xs_w) {
          const F cand = L::load(at);
          const I take = (bestk[xo] < 0) | (keep(bestv[xo], cand) == 0);
          bestv[xo] = take ? cand : bestv[xo];
          bestk[xo] = take ? c : bestk[xo];
        }
      }
    }
  }
  F* acc = buf_v.data();
  const F vinit = L::splat(init);
  for (int64_t hh = 0; hh < g.ih; ++hh) {
    for (int64_t ww = 0; ww < g.iw; ++ww) acc[ww] = vinit;
    for (int64_t y = 0; y < g.oh; ++y) {
      const int64_t i = hh - y * g.sh + g.ph;
      if (i < 0 || i >= g.kh) continue;
      const I* bestk = buf_k.data() + y * g.ow;
      const float* src_row = sp + y * g.os_h;
      for (int64_t j = g.kw; j-- > 0;) {
        const int32_t c = static_cast<int32_t>(i * g.kw + j);
        int64_t lo, hi;
        inside_columns(g, j, lo, hi);
        for (int64_t xo = lo; xo < hi; ++xo) {
          const F s = L::load(src_row + xo * g.os_w);
          F& at = acc[xo * g.sw + j - g.pw];  // window column j of output xo
          at = bestk[xo] == c ? at + s : at;
        }
      }
    }
    for (int64_t ww = 0; ww < g.iw; ++ww) L::store(op_ + hh * g.xs_h + ww * g.xs_w, acc[ww]);
  }
}

template <int B, typename Keep>
void scatter_blocked_run(const Pool2d& g, const RunArgs& a, Keep keep) {
  const float* x = a.in[0]->data<float>();
  const float* src = a.in[1]->data<float>();
  const float init = a.in[2]->data<float>()[0];
  float* o = a.out[0]->data<float>();
  const int64_t groups = static_cast<int64_t>(g.plane_x.size()) / B;
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(g.ih * g.iw * B, 1));
  parallel_for(groups, grain, [&](int64_t pb, int64_t pe) {
    std::vector<typename Lanes<B>::F> bestv;
    std::vector<typename Lanes<B>::I> bestk;
    for (int64_t p = pb; p < pe; ++p) {
      const int64_t x0 = g.plane_x[static_cast<size_t>(p * B)];
      const float* sp = src + g.plane_o[static_cast<size_t>(p * B)];
      if constexpr (B == 1)
        scatter_lanes<B>(g, x + x0, sp, o + x0, init, keep);
      else
        scatter_vector<B>(g, x + x0, sp, o + x0, init, keep, bestv, bestk);
    }
  });
}

template <int B>
void scatter_blocked_mode(const Pool2d& g, const RunArgs& a, int mode) {
  switch (mode) {
    case 0:
      return scatter_blocked_run<B>(g, a, [](auto c, auto d) { return c >= d; });
    case 1:
      return scatter_blocked_run<B>(g, a, [](auto c, auto d) { return c > d; });
    case 2:
      return scatter_blocked_run<B>(g, a, [](auto c, auto d) { return c <= d; });
    default:
      return scatter_blocked_run<B>(g, a, [](auto c, auto d) { return c < d; });
  }
}

std::optional<Compiled> compile_select_and_scatter(const hlo::Op& op, int B) {
  if (op.operands.size() != 3 || op.regions.size() != 2 || !all_f32(op)) return std::nullopt;
  bool sel_sw = false, sc_sw = false;
  const hlo::Op* sel = body_op(*op.region(0), sel_sw);
  const hlo::Op* sc = body_op(*op.region(1), sc_sw);
  if (!sel || sel->kind != OpKind::kCompare || !sc || sc->kind != OpKind::kAdd) return std::nullopt;
  if (sel->operand_type(0).dtype() != DType::kF32) return std::nullopt;
  if (auto* ct = sel->attrs.get_if<hlo::EnumAttr>("compare_type"))
    if (!(ct->value.empty() || ct->value == "FLOAT")) return std::nullopt;
  auto* dir = sel->attrs.get_if<hlo::EnumAttr>("comparison_direction");
  if (!dir) return std::nullopt;
  // keep(cur, cand) = compare(cur, cand) with the body's argument order.
  int mode;  // 0 GE, 1 GT, 2 LE, 3 LT on (first, second)
  if (dir->value == "GE")
    mode = 0;
  else if (dir->value == "GT")
    mode = 1;
  else if (dir->value == "LE")
    mode = 2;
  else if (dir->value == "LT")
    mode = 3;
  else
    return std::nullopt;
  if (sel_sw) mode ^= 2;  // compare(cand, cur, GE) == compare(cur, cand, LE)
  auto g = op_geometry(op, op.operand_type(0).shape(), op.operand_type(1).shape(), B);
  if (!g) return std::nullopt;
  Compiled c;
  if (B != 0 && B != 16 && B != 8) return std::nullopt;
  c.run = [g = *g, mode, B](const RunArgs& a) {
    if (B == 0)
      scatter_blocked_mode<1>(g, a, mode);  // row-major: every plane is one lane
    else
      with_block(B, [&](auto b) { scatter_blocked_mode<decltype(b)::value>(g, a, mode); });
  };
  return c;
}

std::optional<Compiled> compile_reduce_window_any(const hlo::Op& op) {
  if (auto c = compile_pool(op, 0)) return c;
  return compile_reduce_window_generic(op);
}
std::optional<Compiled> compile_select_and_scatter_plain(const hlo::Op& op) {
  return compile_select_and_scatter(op, 0);
}

}  // namespace

std::optional<Compiled> compile_pool_blocked(const hlo::Op& op, int B) {
  if (B <= 0) return std::nullopt;
  if (op.kind == OpKind::kReduceWindow) return compile_pool(op, B);
  if (op.kind == OpKind::kSelectAndScatter) return compile_select_and_scatter(op, B);
  return std::nullopt;
}

void register_window(Compiler* t) {
  hlo::FamilyTable<Compiler> ft(t, "window.cpp", {"window"});
  ft.set(OpKind::kReduceWindow, compile_reduce_window_any);
  ft.set(OpKind::kSelectAndScatter, compile_select_and_scatter_plain);
}

}  // namespace netspec::exec::cpu
