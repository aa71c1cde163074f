// Row gather and row scatter-add: embedding lookups and their VJP, whole rows of operand dim 0
// picked by one index per row. Gather clamps the index into [0, V - 1] and scatter skips a row
// whose index is out of range, as the spec's clamping and out-of-bounds rules give for whole-row
// windows. Other gathers and scatters (windows, batching dims, non-add combiners) stay on ref.
#include <algorithm>
#include <cstring>
#include <optional>

#include "core/thread_pool.h"
#include "exec/cpu/kernels.h"
#include "hlo/op_family.h"

namespace netspec::exec::cpu {
namespace {

// Index k of an integer index tensor (i32 or i64; compile checks).
int64_t index_at(const Tensor& t, int64_t k) {
  return t.dtype() == DType::kI32 ? t.data<int32_t>()[k] : t.data<int64_t>()[k];
}

// The row pattern shared by gather and scatter: indices [..., 1] (or [...] with the index
// vector dim past the end) pick rows of operand dim 0, the per-row dims (window / offset dims)
// are the operand's other dims, trailing in the result / updates. Returns the row count.
std::optional<int64_t> row_pattern(const hlo::Type& operand, const hlo::Type& idx,
                                   int64_t index_vector_dim, const hlo::I64s& to_operand,
                                   const hlo::I64s& collapsed, const hlo::I64s& window_dims,
                                   const hlo::I64s& batching, const Shape& rows_shape) {
  if (idx.dtype() != DType::kI32 && idx.dtype() != DType::kI64) return std::nullopt;
  const Shape& is = idx.shape();
  const int64_t ir = static_cast<int64_t>(is.size());
  if (!batching.empty() || to_operand != hlo::I64s{0} || collapsed != hlo::I64s{0} ||
      operand.rank() < 1)
    return std::nullopt;
  if (!(index_vector_dim == ir || (index_vector_dim == ir - 1 && is.back() == 1)))
    return std::nullopt;
  Shape want(is.begin(), is.begin() + std::min(index_vector_dim, ir));
  const int64_t nb = static_cast<int64_t>(want.size());
  hlo::I64s wd;
  for (int64_t d = 1; d < operand.rank(); ++d) {
    want.push_back(operand.dim(d));
    wd.push_back(nb + d - 1);
  }
  if (want != rows_shape || window_dims != wd) return std::nullopt;
  return num_elements(Shape(want.begin(), want.begin() + nb));
}

// out row i = operand row clamp(idx_i, 0, V - 1).
std::optional<Compiled> compile_gather(const hlo::Op& op) {
  if (op.operands.size() != 2) return std::nullopt;
  const auto& g = op.attrs.get<hlo::GatherDims>("dimension_numbers");
  const hlo::Type& x = op.operand_type(0);
  hlo::I64s sizes = i64s_attr(op, "slice_sizes");
  hlo::I64s whole = x.shape();
  if (whole.empty()) return std::nullopt;
  whole[0] = 1;
  if (sizes != whole || !g.start_indices_batching_dims.empty()) return std::nullopt;
  auto rows = row_pattern(x, op.operand_type(1), g.index_vector_dim, g.start_index_map,
                          g.collapsed_slice_dims, g.offset_dims, g.operand_batching_dims,
                          op.result(0)->type.shape());
  if (!rows) return std::nullopt;
  const int64_t n = *rows, v = x.dim(0);
  const size_t row = static_cast<size_t>(num_elements(x.shape()) / std::max<int64_t>(v, 1)) *
                     dtype_size(x.dtype());
  Compiled c;
  c.run = [=](const RunArgs& a) {
    if (v == 0 || row == 0) return;
    const auto* src = static_cast<const uint8_t*>(a.in[0]->raw());
    auto* dst = static_cast<uint8_t*>(a.out[0]->raw());
    parallel_for(n, std::max<int64_t>(1, 16384 / static_cast<int64_t>(row)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t i = b; i < e; ++i) {
                     const int64_t k = std::clamp<int64_t>(index_at(*a.in[1], i), 0, v - 1);
                     std::memcpy(dst + i * int64_t(row), src + k * int64_t(row), row);
                   }
                 });
  };
  return c;
}

// out = operand; out row idx_i += updates row i (rows with idx_i outside [0, V) skipped).
// Threads split the columns, so rows sharing an index never race.
template <typename T>
void scatter_add_rows(const RunArgs& a, int64_t n, int64_t v, int64_t row) {
  T* out = a.out[0]->data<T>();
  if (a.out[0]->raw() != a.in[0]->raw()) std::memcpy(out, a.in[0]->raw(), a.out[0]->nbytes());
  const T* up = a.in[2]->data<T>();
  parallel_for(row, 64, [&](int64_t c0, int64_t c1) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = index_at(*a.in[1], i);
      if (k < 0 || k >= v) continue;
      T* o = out + k * row;
      const T* u = up + i * row;
      for (int64_t j = c0; j < c1; ++j) o[j] += u[j];
    }
  });
}

std::optional<Compiled> compile_scatter(const hlo::Op& op) {
  if (op.operands.size() != 3 || op.regions.size() != 1) return std::nullopt;
  if (combiner_of(*op.region(0)) != hlo::OpKind::kAdd) return std::nullopt;
  const auto& s = op.attrs.get<hlo::ScatterDims>("scatter_dimension_numbers");
  const hlo::Type& x = op.operand_type(0);
  const DType dt = x.dtype();
  if ((dt != DType::kF32 && dt != DType::kF64) || op.operand_type(2).dtype() != dt ||
      !s.scatter_indices_batching_dims.empty())
    return std::nullopt;
  auto rows = row_pattern(x, op.operand_type(1), s.index_vector_dim, s.scatter_dims_to_operand_dims,
                          s.inserted_window_dims, s.update_window_dims, s.input_batching_dims,
                          op.operand_type(2).shape());
  if (!rows) return std::nullopt;
  const int64_t n = *rows, v = x.dim(0);
  const int64_t row = v == 0 ? 0 : num_elements(x.shape()) / v;
  Compiled c;
  c.pointwise = true;  // only operand 0 has the result's size: in place on it when it dies
  c.no_alias = {1, 2};
  c.run = [=](const RunArgs& a) {
    if (dt == DType::kF32)
      scatter_add_rows<float>(a, n, v, row);
    else
      scatter_add_rows<double>(a, n, v, row);
  };
  return c;
}

}  // namespace

void register_gather(Compiler* table) {
  hlo::FamilyTable<Compiler> ft(table, "gather.cpp", {"gather"});
  ft.set(hlo::OpKind::kGather, compile_gather);
  ft.set(hlo::OpKind::kScatter, compile_scatter);
}

}  // namespace netspec::exec::cpu
