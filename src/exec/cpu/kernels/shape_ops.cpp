// Fast data-movement kernels: reshape is a view; broadcast_in_dim, transpose, slice and reverse
// are one strided copy each (stride 0 for broadcast dims, negative for reversed ones);
// concatenate copies contiguous runs per outer index.
#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"
#include "exec/cpu/kernels.h"
#include "hlo/op_family.h"

namespace netspec::exec::cpu {
namespace {

using hlo::I64s;

std::optional<Compiled> compile_reshape(const hlo::Op&) {
  Compiled c;
  c.view = true;
  return c;
}

// out = copy of in viewed with (base offset, strides) over the result shape.
Compiled strided_kernel(int64_t base, std::vector<int64_t> strides, Shape dims, size_t elem) {
  Compiled c;
  c.run = [=](const RunArgs& a) {
    const uint8_t* src =
        static_cast<const uint8_t*>(a.in[0]->raw()) + base * static_cast<int64_t>(elem);
    strided_copy(a.out[0]->raw(), src, dims, strides, elem);
  };
  return c;
}

// out = the one element of in, everywhere (a splat: parallel fills, not a stride-0 copy).
template <typename T>
Compiled fill_kernel() {
  Compiled c;
  c.run = [](const RunArgs& a) {
    const T v = *static_cast<const T*>(a.in[0]->raw());
    T* out = static_cast<T*>(a.out[0]->raw());
    parallel_for(a.out[0]->numel(), kGrainCheap,
                 [&](int64_t b, int64_t e) { std::fill(out + b, out + e, v); });
  };
  return c;
}

std::optional<Compiled> compile_broadcast(const hlo::Op& op) {
  const Shape& in = op.operand_type(0).shape();
  const Shape& out = op.result(0)->type.shape();
  I64s bd = i64s_attr(op, "broadcast_dimensions");
  if (bd.size() != in.size()) return std::nullopt;
  if (num_elements(in) == 1) {
    switch (dtype_size(op.result(0)->type.dtype())) {
      case 1:
        return fill_kernel<uint8_t>();
      case 2:
        return fill_kernel<uint16_t>();
      case 4:
        return fill_kernel<uint32_t>();
      case 8:
        return fill_kernel<uint64_t>();
      default:
        break;
    }
  }
  std::vector<int64_t> rs = row_major_strides(in), st(out.size(), 0);
  for (size_t k = 0; k < bd.size(); ++k)
    if (in[k] == out[static_cast<size_t>(bd[k])]) st[static_cast<size_t>(bd[k])] = rs[k];
  return strided_kernel(0, st, out, dtype_size(op.result(0)->type.dtype()));
}

std::optional<Compiled> compile_transpose(const hlo::Op& op) {
  I64s perm = i64s_attr(op, "permutation");
  const Shape& in = op.operand_type(0).shape();
  if (perm.size() != in.size()) return std::nullopt;
  return strided_kernel(0, permuted_strides(in, perm), op.result(0)->type.shape(),
                        dtype_size(op.result(0)->type.dtype()));
}

std::optional<Compiled> compile_slice(const hlo::Op& op) {
  const Shape& in = op.operand_type(0).shape();
  I64s start = i64s_attr(op, "start_indices"), step = i64s_attr(op, "strides");
  if (step.empty()) step.assign(in.size(), 1);
  if (start.size() != in.size() || step.size() != in.size()) return std::nullopt;
  std::vector<int64_t> rs = row_major_strides(in), st(in.size());
  int64_t base = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    base += start[d] * rs[d];
    st[d] = step[d] * rs[d];
  }
  return strided_kernel(base, st, op.result(0)->type.shape(),
                        dtype_size(op.result(0)->type.dtype()));
}

std::optional<Compiled> compile_reverse(const hlo::Op& op) {
  const Shape& in = op.operand_type(0).shape();
  I64s dims = i64s_attr(op, "dimensions");
  std::vector<int64_t> rs = row_major_strides(in), st = rs;
  int64_t base = 0;
  for (int64_t d : dims) {
    size_t u = static_cast<size_t>(d);
    if (in[u] == 0) return std::nullopt;
    base += (in[u] - 1) * rs[u];
    st[u] = -rs[u];
  }
  return strided_kernel(base, st, in, dtype_size(op.result(0)->type.dtype()));
}

std::optional<Compiled> compile_concatenate(const hlo::Op& op) {
  const Shape& out = op.result(0)->type.shape();
  int64_t axis = op.attrs.get_int_or("dimension", -1);
  if (axis < 0 || axis >= static_cast<int64_t>(out.size())) return std::nullopt;
  size_t elem = dtype_size(op.result(0)->type.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < out.size(); ++d) inner *= out[d];
  std::vector<size_t> chunk;  // bytes per outer index for each input
  for (size_t i = 0; i < op.operands.size(); ++i)
    chunk.push_back(static_cast<size_t>(op.operand_type(i).dim(axis) * inner) * elem);
  size_t row = static_cast<size_t>(out[static_cast<size_t>(axis)] * inner) * elem;
  Compiled c;
  c.run = [=](const RunArgs& a) {
    uint8_t* dst = static_cast<uint8_t*>(a.out[0]->raw());
    int64_t grain =
        std::max<int64_t>(1, static_cast<int64_t>(kGrainCheap * 4 / std::max<size_t>(row, 1)));
    parallel_for(outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        uint8_t* d = dst + static_cast<size_t>(o) * row;
        for (size_t i = 0; i < chunk.size(); ++i) {
          if (!chunk[i]) continue;
          std::memcpy(
              d, static_cast<const uint8_t*>(a.in[i]->raw()) + static_cast<size_t>(o) * chunk[i],
              chunk[i]);
          d += chunk[i];
        }
      }
    });
  };
  return c;
}

// pad with non-negative edge padding: without interior padding, each output row is written once
// (its operand row between filled edges, or all fill); with it, fill with the pad value, then
// copy each operand row to its place (dst stride interior + 1 along every dim). Negative padding
// stays on ref.
std::optional<Compiled> compile_pad(const hlo::Op& op) {
  const Shape& in = op.operand_type(0).shape();
  const Shape& out = op.result(0)->type.shape();
  const size_t r = in.size();
  I64s lo = i64s_attr(op, "edge_padding_low"), hi = i64s_attr(op, "edge_padding_high");
  I64s interior = i64s_attr(op, "interior_padding");
  if (interior.empty()) interior.assign(r, 0);
  if (r == 0 || lo.size() != r || hi.size() != r || interior.size() != r) return std::nullopt;
  for (size_t d = 0; d < r; ++d)
    if (lo[d] < 0 || hi[d] < 0 || interior[d] < 0) return std::nullopt;
  const size_t elem = dtype_size(op.result(0)->type.dtype());
  if (elem != 4 && elem != 8 && elem != 1) return std::nullopt;
  std::vector<int64_t> os = row_major_strides(out);
  int64_t base = 0;
  std::vector<int64_t> dst_st(r);
  for (size_t d = 0; d < r; ++d) {
    base += lo[d] * os[d];
    dst_st[d] = os[d] * (interior[d] + 1);
  }
  const int64_t inner = in[r - 1], rows = num_elements(in) / std::max<int64_t>(inner, 1);
  // No interior padding and a non-empty operand: write each output element once (mamba's causal
  // shifts pad [32, 125, 256] to [32, 128, 256]; filling all first wrote the output twice).
  const bool dense_rows = inner > 0 && num_elements(in) > 0 &&
                          std::all_of(interior.begin(), interior.end(), [](int64_t v) { return v == 0; });
  const int64_t out_inner = out[r - 1], out_rows = num_elements(out) / std::max<int64_t>(out_inner, 1);
  Compiled c;
  c.run = [=](const RunArgs& a) {
    auto run_typed = [&](auto z) {
      using T = decltype(z);
      const T* x = a.in[0]->data<T>();
      const T pv = a.in[1]->data<T>()[0];
      T* o = a.out[0]->data<T>();
      const int64_t n_out = a.out[0]->numel();
      if (dense_rows) {  // each output row once: its input row with the edges filled, or all fill
        parallel_for(out_rows, std::max<int64_t>(1, kGrainCheap / out_inner), [&](int64_t b, int64_t e) {
          for (int64_t row = b; row < e; ++row) {
            T* dst = o + row * out_inner;
            int64_t rem = row, src_row = 0, scale = 1;
            bool inside = true;
            for (size_t d = r - 1; d-- > 0;) {
              const int64_t i = rem % out[d] - lo[d];
              rem /= out[d];
              inside = inside && i >= 0 && i < in[d];
              src_row += i * scale;
              scale *= in[d];
            }
            if (!inside) {
              std::fill(dst, dst + out_inner, pv);
              continue;
            }
            std::fill(dst, dst + lo[r - 1], pv);
            std::memcpy(dst + lo[r - 1], x + src_row * inner, static_cast<size_t>(inner) * sizeof(T));
            std::fill(dst + lo[r - 1] + inner, dst + out_inner, pv);
          }
        });
        return;
      }
      parallel_for(n_out, kGrainCheap, [&](int64_t b, int64_t e) { std::fill(o + b, o + e, pv); });
      if (inner == 0) return;
      parallel_for(rows, std::max<int64_t>(1, kGrainCheap / inner), [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          int64_t rem = row, off = base;
          for (size_t d = r - 1; d-- > 0;) {
            off += (rem % in[d]) * dst_st[d];
            rem /= in[d];
          }
          const T* src = x + row * inner;
          T* dst = o + off;
          const int64_t s = dst_st[r - 1];
          if (s == 1)
            std::memcpy(dst, src, static_cast<size_t>(inner) * sizeof(T));
          else
            for (int64_t j = 0; j < inner; ++j) dst[j * s] = src[j];
        }
      });
    };
    if (elem == 4)
      run_typed(uint32_t{});
    else if (elem == 8)
      run_typed(uint64_t{});
    else
      run_typed(uint8_t{});
  };
  return c;
}

}  // namespace

void register_shape(Compiler* t) {
  hlo::FamilyTable<Compiler> ft(t, "shape_ops.cpp", {"shape"});
  using hlo::OpKind;
  ft.set(OpKind::kReshape, compile_reshape);
  ft.set(OpKind::kBroadcastInDim, compile_broadcast);
  ft.set(OpKind::kTranspose, compile_transpose);
  ft.set(OpKind::kSlice, compile_slice);
  ft.set(OpKind::kReverse, compile_reverse);
  ft.set(OpKind::kConcatenate, compile_concatenate);
  ft.set(OpKind::kPad, compile_pad);
}

}  // namespace netspec::exec::cpu
