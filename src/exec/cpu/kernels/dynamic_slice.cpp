// dynamic_slice and dynamic_update_slice: start indices read at run time and clamped to
// [0, dim - size] as the spec says; the slice is a view when contiguous, else one strided copy;
// the update copies contiguous rows into the result (in place when the planner gives the result
// the operand's buffer).
#include <algorithm>
#include <cstring>

#include "exec/cpu/kernels.h"
#include "hlo/op_family.h"

namespace netspec::exec::cpu {
namespace {

// Element offset of the clamped start (indices are operands first.. of a.in) in `shape`.
int64_t start_offset(const RunArgs& a, size_t first, const Shape& shape, const Shape& sizes,
                     const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t s = a.in[first + d]->as_int64(0);
    off += std::clamp<int64_t>(s, 0, std::max<int64_t>(0, shape[d] - sizes[d])) * strides[d];
  }
  return off;
}

bool scalar_indices(const hlo::Op& op, size_t first) {
  for (size_t i = first; i < op.operands.size(); ++i)
    if (op.operand_type(i).numel() != 1 || !is_integer(op.operand_type(i).dtype())) return false;
  return op.operands.size() == first + op.operand_type(0).shape().size();
}

std::optional<Compiled> compile_dynamic_slice(const hlo::Op& op) {
  if (!scalar_indices(op, 1)) return std::nullopt;
  const Shape in = op.operand_type(0).shape(), out = op.result(0)->type.shape();
  const size_t elem = dtype_size(op.result(0)->type.dtype());
  const std::vector<int64_t> strides = row_major_strides(in);
  Compiled c;
  c.run = [=](const RunArgs& a) {
    const int64_t off = start_offset(a, 1, in, out, strides);
    const auto* src = static_cast<const uint8_t*>(a.in[0]->raw()) + off * int64_t(elem);
    strided_copy(a.out[0]->raw(), src, out, strides, elem);
  };
  // A contiguous block (a step [1, ...] of stacked states: Mamba's backward scan reads one per
  // iteration) is a view at the run-time offset; the planner keeps `run` where it cannot be one.
  if (num_elements(out) > 0 && contiguous_block(in, out)) {
    c.view = true;
    c.view_offset = [=](const RunArgs& a) { return start_offset(a, 1, in, out, strides); };
  }
  return c;
}

// out = operand with the update written at the clamped start. A row is the update's trailing dims
// that are contiguous in both (the last dim, extended while the dims after it are whole: a step
// [1, B, C] of [T, B, C] is one row).
std::optional<Compiled> compile_dynamic_update_slice(const hlo::Op& op) {
  if (!scalar_indices(op, 2)) return std::nullopt;
  const Shape in = op.operand_type(0).shape(), up = op.operand_type(1).shape();
  const size_t elem = dtype_size(op.result(0)->type.dtype());
  const std::vector<int64_t> strides = row_major_strides(in);
  size_t lead = up.size();  // dims [lead, rank) form one contiguous row
  int64_t row = 1;
  while (lead > 0) {
    row *= up[lead - 1];
    --lead;
    if (up[lead] != in[lead]) break;
  }
  const int64_t rows = row == 0 ? 0 : num_elements(up) / row;
  Compiled c;
  c.pointwise = true;  // only operand 0 has the result's size: run in place on it when it dies
  for (size_t i = 1; i < op.operands.size(); ++i) c.no_alias.push_back(static_cast<int>(i));
  c.run = [=](const RunArgs& a) {
    auto* dst = static_cast<uint8_t*>(a.out[0]->raw());
    if (a.out[0]->raw() != a.in[0]->raw()) std::memcpy(dst, a.in[0]->raw(), a.out[0]->nbytes());
    const int64_t base = start_offset(a, 2, in, up, strides);
    const auto* src = static_cast<const uint8_t*>(a.in[1]->raw());
    const size_t run = static_cast<size_t>(row) * elem;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t off = base, rest = r;  // row r's offset: its index over up's dims before `lead`
      for (size_t d = lead; d-- > 0;) {
        off += (rest % up[d]) * strides[d];
        rest /= up[d];
      }
      std::memcpy(dst + off * int64_t(elem), src + r * row * int64_t(elem), run);
    }
  };
  return c;
}

}  // namespace

void register_dynamic_slice(Compiler* table) {
  hlo::FamilyTable<Compiler> ft(table, "dynamic_slice.cpp", {"shape"});
  ft.set(hlo::OpKind::kDynamicSlice, compile_dynamic_slice);
  ft.set(hlo::OpKind::kDynamicUpdateSlice, compile_dynamic_update_slice);
}

}  // namespace netspec::exec::cpu
