// Fast reduce and reduce_window for single-input ops whose body is one add / multiply /
// maximum / minimum / and / or of its two arguments (pattern-matched at plan time). Elements are
// combined in the ref kernels' order (init first, then row-major over the reduced index), except
// f32 sums over contiguous runs of 32+, which use 16 partial sums (vectorised, ~4x faster BN
// reductions; a fixed order, so deterministic, within f32 rounding of the ref, as PyTorch's and
// XLA's vectorised sums are). NETSPEC_FAST_SUM=0 restores the ref order exactly. Other bodies run
// on ref.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "core/thread_pool.h"
#include "exec/cpu/kernels.h"
#include "exec/scalar_ops.h"
#include "hlo/op_family.h"

namespace netspec::exec::cpu {
namespace {

using hlo::I64s;
using hlo::OpKind;

}  // namespace

std::optional<OpKind> combiner_of(const hlo::Block& b) {
  if (b.args.size() != 2 || b.ops.size() != 2) return std::nullopt;
  const hlo::Op& op = *b.ops[0];
  const hlo::Op& ret = *b.ops[1];
  if (ret.kind != OpKind::kReturn || ret.operands.size() != 1 || ret.operand(0) != op.result())
    return std::nullopt;
  if (op.operands.size() != 2) return std::nullopt;
  bool ab = op.operand(0) == b.arg(0) && op.operand(1) == b.arg(1);
  bool ba = op.operand(0) == b.arg(1) && op.operand(1) == b.arg(0);
  if (!ab && !ba) return std::nullopt;
  switch (op.kind) {
    case OpKind::kAdd:
    case OpKind::kMultiply:
    case OpKind::kMaximum:
    case OpKind::kMinimum:
    case OpKind::kAnd:
    case OpKind::kOr:
      return op.kind;
    default:
      return std::nullopt;
  }
}

namespace {

// The reducer's scalar math (exec/scalar_ops.h): i1 add / maximum are or, multiply / minimum and.
template <typename T, OpKind K>
struct Combine {
  T operator()(T a, T b) const { return Scalar<K>::apply(a, b); }
};

// The max (kMax) or min of p[0..n), n >= 16, by plain compares in GCC vectors (one vector
// instruction per 8 lanes on any ISA; no function takes a vector, so no ABI depends on the ISA);
// NaN if p holds a NaN (then the caller refolds in order).
template <bool kMax>
float extremum_unordered(const float* p, int64_t n) {
  typedef float F32x8 __attribute__((vector_size(32)));
  typedef int32_t I32x8 __attribute__((vector_size(32)));
  F32x8 l0, l1, x0, x1;
  std::memcpy(&l0, p, sizeof l0);
  std::memcpy(&l1, p + 8, sizeof l1);
  I32x8 nan = (l0 != l0) | (l1 != l1);
  int64_t j = 16;
  for (; j + 16 <= n; j += 16) {
    std::memcpy(&x0, p + j, sizeof x0);
    std::memcpy(&x1, p + j + 8, sizeof x1);
    l0 = (kMax ? x0 > l0 : x0 < l0) ? x0 : l0;
    l1 = (kMax ? x1 > l1 : x1 < l1) ? x1 : l1;
    nan |= (x0 != x0) | (x1 != x1);
  }
  l0 = (kMax ? l1 > l0 : l1 < l0) ? l1 : l0;
  float r = l0[0];
  int32_t any = nan[0];
  for (int q = 1; q < 8; ++q) {
    r = (kMax ? l0[q] > r : l0[q] < r) ? l0[q] : r;
    any |= nan[q];
  }
  for (; j < n; ++j) {
    r = (kMax ? p[j] > r : p[j] < r) ? p[j] : r;
    any |= p[j] != p[j];
  }
  return any ? NAN : r;
}

// acc folded with p[0..n) in order; f32 sums of 32+ contiguous elements use 16 partial sums
// (vectorised; a fixed order, so still deterministic, within f32 rounding of the ref's order).
template <typename T, OpKind K>
T fold_contiguous(T acc, const T* p, int64_t n, bool lanes) {
  Combine<T, K> f;
  if constexpr (std::is_same_v<T, float> && K == OpKind::kAdd) {
    if (lanes && n >= 32) {
      float lane[16] = {};
      int64_t j = 0;
      for (; j + 16 <= n; j += 16)
        for (int q = 0; q < 16; ++q) lane[q] += p[j + q];
      for (int w = 8; w >= 1; w /= 2)
        for (int q = 0; q < w; ++q) lane[q] += lane[q + w];
      acc += lane[0];
      for (; j < n; ++j) acc += p[j];
      return acc;
    }
  }
  // f32 max/min (softmax's row max) in two 8-lane vectors of plain compares, NaNs flagged aside:
  // without NaNs the extremum of a set is one value, whatever the order, up to the sign of a zero
  // result; rows with a NaN or a zero result are refolded in order (the ref's order picks which
  // NaN, and -0 < +0). The exact select chain per element did not vectorise: 1.7 ns per element
  // on a Zen 1, this 0.23.
  if constexpr (std::is_same_v<T, float> && (K == OpKind::kMaximum || K == OpKind::kMinimum)) {
    if (n >= 16) {
      const float r = extremum_unordered<K == OpKind::kMaximum>(p, n);
      if (r == r && r != 0.f) return f(acc, r);
    }
  }
  for (int64_t j = 0; j < n; ++j) acc = f(acc, p[j]);
  return acc;
}

// Reduce over `red` dims: groups of kept/reduced dims are merged; [.., kept, reduced] and
// [reduced, kept] get contiguous loops, anything else an odometer per output element.
template <typename T, OpKind K>
Compiled make_reduce(const Shape& in, const I64s& red_dims) {
  std::vector<bool> is_red(in.size(), false);
  for (int64_t d : red_dims) is_red[static_cast<size_t>(d)] = true;
  // Merge consecutive dims of the same kind (skip size-1 dims).
  std::vector<int64_t> dims;
  std::vector<bool> kind;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 1) continue;
    if (!dims.empty() && kind.back() == is_red[d])
      dims.back() *= in[d];
    else {
      dims.push_back(in[d]);
      kind.push_back(is_red[d]);
    }
  }
  std::vector<int64_t> st = row_major_strides(dims);
  std::vector<size_t> kept, reduced;
  for (size_t i = 0; i < dims.size(); ++i) (kind[i] ? reduced : kept).push_back(i);
  int64_t n_out = 1, n_red = 1;
  for (size_t i : kept) n_out *= dims[i];
  for (size_t i : reduced) n_red *= dims[i];
  bool red_outer = dims.size() == 2 && kind[0] && !kind[1];  // [R, K]
  // Partial sums change the rounding (not the math): NETSPEC_FAST_SUM=0 turns them off.
  const char* fs = std::getenv("NETSPEC_FAST_SUM");
  const bool lanes = !(fs && std::string_view(fs) == "0");
  // [R, K] sums with few columns and many rows (bias gradients: [tokens, features]) split the
  // rows between threads, each into its own partial row, added after: over columns alone they
  // ran on one thread. Floating-point sums in fast-sum mode only (another order of the adds).
  const int threads = ThreadPool::global().num_threads();
  const bool row_split = red_outer && std::is_floating_point_v<T> && K == OpKind::kAdd && lanes &&
                         threads > 1 && dims[1] < 1024 * threads && dims[0] >= 8 * threads &&
                         dims[0] * dims[1] >= 65536;
  Compiled c;
  if (row_split) c.scratch_bytes = static_cast<size_t>((threads - 1) * dims[1]) * sizeof(T);
  c.run = [=](const RunArgs& a) {
    const T* x = a.in[0]->data<T>();
    const T init = a.in[1]->data<T>()[0];
    T* o = a.out[0]->data<T>();
    Combine<T, K> f;
    if (row_split) {
      const int64_t R = dims[0], Kn = dims[1], rows = (R + threads - 1) / threads;
      T* part = reinterpret_cast<T*>(a.scratch);
      parallel_for(threads, 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          T* p = t == 0 ? o : part + (t - 1) * Kn;
          std::fill(p, p + Kn, t == 0 ? init : T(0));
          for (int64_t r = t * rows; r < std::min(R, (t + 1) * rows); ++r) {
            const T* row = x + r * Kn;
#pragma GCC ivdep
            for (int64_t k = 0; k < Kn; ++k) p[k] += row[k];
          }
        }
      });
      for (int t = 1; t < threads; ++t)
        for (int64_t k = 0; k < Kn; ++k) o[k] += part[(t - 1) * Kn + k];
      return;
    }
    if (n_red == 0 || reduced.empty()) {
      for (int64_t i = 0; i < n_out; ++i) o[i] = n_red == 0 ? init : f(init, x[i]);
      return;
    }
    if (red_outer) {
      const int64_t R = dims[0], Kn = dims[1];
      parallel_for(Kn, 1024, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) o[k] = init;
        for (int64_t r = 0; r < R; ++r) {
          const T* row = x + r * Kn;
          for (int64_t k = b; k < e; ++k) o[k] = f(o[k], row[k]);
        }
      });
      return;
    }
    int64_t grain = std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(n_red, 1));
    parallel_for(n_out, grain, [&](int64_t b, int64_t e) {
      std::vector<int64_t> ridx(reduced.size());
      for (int64_t oi = b; oi < e; ++oi) {
        int64_t rem = oi, base = 0;
        for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
          base += (rem % dims[*it]) * st[*it];
          rem /= dims[*it];
        }
        T acc = init;
        if (reduced.size() == 1 && reduced[0] == dims.size() - 1) {
          acc = fold_contiguous<T, K>(acc, x + base, n_red, lanes);
        } else {
          std::fill(ridx.begin(), ridx.end(), 0);
          const size_t last = reduced.size() - 1;
          const int64_t inner = dims[reduced[last]], inner_s = st[reduced[last]];
          for (int64_t j = 0; j < n_red; j += inner) {
            int64_t off = base;
            for (size_t q = 0; q < last; ++q) off += ridx[q] * st[reduced[q]];
            const T* p = x + off;
            if (inner_s == 1)
              acc = fold_contiguous<T, K>(acc, p, inner, lanes);
            else
              for (int64_t i = 0; i < inner; ++i) acc = f(acc, p[i * inner_s]);
            for (int64_t q = static_cast<int64_t>(last) - 1; q >= 0; --q) {
              if (++ridx[static_cast<size_t>(q)] < dims[reduced[static_cast<size_t>(q)]]) break;
              ridx[static_cast<size_t>(q)] = 0;
            }
          }
        }
        o[oi] = acc;
      }
    });
  };
  return c;
}

}  // namespace

namespace {
// The row folds' NETSPEC_FAST_SUM, read once.
bool row_fold_lanes() {
  static const bool lanes = [] {
    const char* fs = std::getenv("NETSPEC_FAST_SUM");
    return !(fs && std::string_view(fs) == "0");
  }();
  return lanes;
}
}  // namespace

float fold_f32_row(OpKind k, float acc, const float* p, int64_t n) {
  const bool lanes = row_fold_lanes();
  switch (k) {
    case OpKind::kAdd:
      return fold_contiguous<float, OpKind::kAdd>(acc, p, n, lanes);
    case OpKind::kMaximum:
      return fold_contiguous<float, OpKind::kMaximum>(acc, p, n, lanes);
    case OpKind::kMinimum:
      return fold_contiguous<float, OpKind::kMinimum>(acc, p, n, lanes);
    default:
      fail("cpu reduce", "no row fold for {}", op_name(k));
  }
}

void fold_f32_rows(OpKind k, float init, const float* p, int64_t row, int64_t nr, float* dst) {
  int64_t r = 0;
  // Sums fold_contiguous adds in order (rows under 32, or NETSPEC_FAST_SUM=0): 16 rows side by
  // side, each its own chain of adds in its order, where one row at a time waits on every add
  // (mamba's rows of 16: 64 cycles of latency a row).
  if (k == OpKind::kAdd && (row < 32 || !row_fold_lanes())) {
    for (; r + 16 <= nr; r += 16) {
      const float* q = p + r * row;
      float acc[16];
      for (int l = 0; l < 16; ++l) acc[l] = init;
      for (int64_t j = 0; j < row; ++j)
        for (int l = 0; l < 16; ++l) acc[l] += q[l * row + j];
      for (int l = 0; l < 16; ++l) dst[r + l] = acc[l];
    }
  }
  for (; r < nr; ++r) dst[r] = fold_f32_row(k, init, p + r * row, row);
}

std::optional<std::pair<OpKind, int64_t>> row_fold_of(const hlo::Op& reduce) {
  if (reduce.kind != OpKind::kReduce || reduce.operands.size() != 2 ||
      reduce.regions.size() != 1 || !all_tensors(reduce))
    return std::nullopt;
  auto k = combiner_of(*reduce.region(0));
  if (!k || (*k != OpKind::kAdd && *k != OpKind::kMaximum && *k != OpKind::kMinimum))
    return std::nullopt;
  if (reduce.operand_type(0).dtype() != DType::kF32 ||
      reduce.result(0)->type.dtype() != DType::kF32 || reduce.operand_type(1).numel() != 1)
    return std::nullopt;
  const Shape& in = reduce.operand_type(0).shape();
  std::vector<bool> red(in.size(), false);
  for (int64_t d : i64s_attr(reduce, "dimensions")) red[static_cast<size_t>(d)] = true;
  int64_t row = 1;
  bool in_row = false;  // past the first reduced dim of size > 1: every later one is reduced
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 1) continue;
    if (red[d]) in_row = true, row *= in[d];
    else if (in_row) return std::nullopt;
  }
  return std::pair{*k, row};
}

namespace {

template <template <typename, OpKind> class Maker, typename... Args>
std::optional<Compiled> dispatch(DType t, OpKind k, Args&&... args) {
  auto by_kind = [&](auto z) -> std::optional<Compiled> {
    using T = decltype(z);
    switch (k) {
      case OpKind::kAdd:
        return Maker<T, OpKind::kAdd>::make(args...);
      case OpKind::kMultiply:
        return Maker<T, OpKind::kMultiply>::make(args...);
      case OpKind::kMaximum:
        return Maker<T, OpKind::kMaximum>::make(args...);
      case OpKind::kMinimum:
        return Maker<T, OpKind::kMinimum>::make(args...);
      case OpKind::kAnd:
      case OpKind::kOr:
        if constexpr (std::is_floating_point_v<T>)
          return std::nullopt;
        else if (k == OpKind::kAnd)
          return Maker<T, OpKind::kAnd>::make(args...);
        else
          return Maker<T, OpKind::kOr>::make(args...);
      default:
        return std::nullopt;
    }
  };
  if (t == DType::kI1 && k != OpKind::kAnd && k != OpKind::kOr) return std::nullopt;
  return with_dtype_among<float, double, int32_t, int64_t, bool>(t, by_kind);
}

template <typename T, OpKind K>
struct ReduceMaker {
  static std::optional<Compiled> make(const Shape& in, const I64s& dims) {
    return make_reduce<T, K>(in, dims);
  }
};

// The combiner of a one-input reduce / reduce_window whose operand, init and result share one
// element type (the form these kernels take), else nullopt.
std::optional<OpKind> single_input_combiner(const hlo::Op& op) {
  if (op.operands.size() != 2 || op.regions.size() != 1) return std::nullopt;
  auto k = combiner_of(*op.region(0));
  if (!k) return std::nullopt;
  DType t = op.operand_type(0).dtype();
  if (op.operand_type(1).dtype() != t || op.result(0)->type.dtype() != t) return std::nullopt;
  return k;
}

std::optional<Compiled> compile_reduce(const hlo::Op& op) {
  auto k = single_input_combiner(op);
  if (!k) return std::nullopt;
  DType t = op.operand_type(0).dtype();
  return dispatch<ReduceMaker>(t, *k, op.operand_type(0).shape(), i64s_attr(op, "dimensions"));
}

// reduce_window with unit base/window dilation: per output element, the window in row-major
// order; padded positions contribute the init value (the operand is padded with it).
template <typename T, OpKind K>
struct WindowMaker {
  static std::optional<Compiled> make(const Shape& in, const Shape& out, const I64s& win,
                                      const I64s& strides, const std::vector<int64_t>& pad_lo) {
    Compiled c;
    const size_t r = in.size();
    std::vector<int64_t> ist = row_major_strides(in);
    int64_t wn = num_elements(win);
    c.run = [=](const RunArgs& a) {
      const T* x = a.in[0]->data<T>();
      const T init = a.in[1]->data<T>()[0];
      T* o = a.out[0]->data<T>();
      Combine<T, K> f;
      int64_t n_out = num_elements(out);
      parallel_for(n_out, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(wn, 1)),
                   [&](int64_t b, int64_t e) {
                     std::vector<int64_t> oidx(r), widx(r);
                     for (int64_t oi = b; oi < e; ++oi) {
                       int64_t rem = oi;
                       for (size_t d = r; d-- > 0;) {
                         oidx[d] = rem % out[d];
                         rem /= out[d];
                       }
                       std::fill(widx.begin(), widx.end(), 0);
                       T acc = init;
                       for (int64_t w = 0; w < wn; ++w) {
                         int64_t off = 0;
                         bool inside = true;
                         for (size_t d = 0; d < r; ++d) {
                           int64_t pos = oidx[d] * strides[d] + widx[d] - pad_lo[d];
                           if (pos < 0 || pos >= in[d]) {
                             inside = false;
                             break;
                           }
                           off += pos * ist[d];
                         }
                         acc = f(acc, inside ? x[off] : init);
                         for (size_t d = r; d-- > 0;) {
                           if (++widx[d] < win[d]) break;
                           widx[d] = 0;
                         }
                       }
                       o[oi] = acc;
                     }
                   });
    };
    return c;
  }
};

}  // namespace

std::optional<Compiled> compile_reduce_window_generic(const hlo::Op& op) {
  auto k = single_input_combiner(op);
  if (!k) return std::nullopt;
  DType t = op.operand_type(0).dtype();
  const Shape& in = op.operand_type(0).shape();
  std::optional<WindowAttrs> w = undilated_window(op, in.size());
  if (!w) return std::nullopt;
  return dispatch<WindowMaker>(t, *k, in, op.result(0)->type.shape(), w->win, w->strides, w->lo);
}

void register_reduce(Compiler* t) {
  hlo::FamilyTable<Compiler> ft(t, "reduce.cpp", {"reduce"});
  ft.set(OpKind::kReduce, compile_reduce);
}

}  // namespace netspec::exec::cpu
