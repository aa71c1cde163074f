// Reference kernels: shape and data movement. They copy element bytes, so they serve every
// element type. Index maps follow the spec's definitions per op.
#include <algorithm>

#include "exec/ref/kernel_util.h"
#include "hlo/op_families.h"
#include "hlo/op_family.h"

namespace netspec::exec::ref {
namespace {

// reshape: same row-major element order, new shape.
std::vector<Tensor> eval_reshape(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  Tensor out = result_tensor(op);
  if (out.numel() != in[0].numel())
    fail("reshape", "element count differs (got {}, expected {})", out.numel(), in[0].numel());
  if (out.nbytes()) std::memcpy(out.raw(), in[0].raw(), out.nbytes());
  return {out};
}

// broadcast_in_dim: result[i] = operand[j] with j[d] = dim(operand, d) == 1 ? 0 : i[bd[d]].
std::vector<Tensor> eval_broadcast_in_dim(const hlo::Op& op, const std::vector<Tensor>& in,
                                          RunContext&) {
  const Tensor& x = in[0];
  Tensor out = result_tensor(op);
  const I64s& bd = op.attrs.get_i64s("broadcast_dimensions");
  if (static_cast<int64_t>(bd.size()) != x.rank())
    fail("broadcast_in_dim", "broadcast_dimensions has {} entries (expected {})", bd.size(),
         x.rank());
  auto xs = row_major_strides(x.shape());
  int64_t k = 0;
  for_each_index(out.shape(), [&](const I64s& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < bd.size(); ++d)
      if (x.shape()[d] != 1) off += idx[static_cast<size_t>(bd[d])] * xs[d];
    copy_elem(out, k++, x, off);
  });
  return {out};
}

// transpose: result[i] = operand[j] with j[permutation[d]] = i[d].
std::vector<Tensor> eval_transpose(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  const Tensor& x = in[0];
  Tensor out = result_tensor(op);
  const I64s& perm = op.attrs.get_i64s("permutation");
  auto xs = row_major_strides(x.shape());
  int64_t k = 0;
  for_each_index(out.shape(), [&](const I64s& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < perm.size(); ++d) off += idx[d] * xs[static_cast<size_t>(perm[d])];
    copy_elem(out, k++, x, off);
  });
  return {out};
}

// slice: result[i] = operand[start + i * strides].
std::vector<Tensor> eval_slice(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  const Tensor& x = in[0];
  Tensor out = result_tensor(op);
  size_t r = static_cast<size_t>(x.rank());
  const I64s& start = op.attrs.get_i64s("start_indices");
  I64s strides = i64s_or(op, "strides", r, 1);
  auto xs = row_major_strides(x.shape());
  int64_t k = 0;
  for_each_index(out.shape(), [&](const I64s& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < r; ++d) off += (start[d] + idx[d] * strides[d]) * xs[d];
    copy_elem(out, k++, x, off);
  });
  return {out};
}

// Start indices of dynamic_slice / dynamic_update_slice, clamped to [0, dim - size].
I64s clamped_starts(const std::vector<Tensor>& in, size_t first, const Shape& shape,
                    const Shape& sizes) {
  I64s s(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    s[d] = std::clamp<int64_t>(int_at(in[first + d]), 0, std::max<int64_t>(0, shape[d] - sizes[d]));
  return s;
}

// The window of shape `window` at the start indices in[first..] (clamped as above) in a tensor of
// shape `shape`: fn(k, off) per element, k its row-major index in the window, off its flat
// index in the tensor.
template <typename F>
void for_each_in_window(const std::vector<Tensor>& in, size_t first, const Shape& shape,
                        const Shape& window, F&& fn) {
  const I64s start = clamped_starts(in, first, shape, window);
  const auto xs = row_major_strides(shape);
  int64_t k = 0;
  for_each_index(window, [&](const I64s& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (start[d] + idx[d]) * xs[d];
    fn(k++, off);
  });
}

std::vector<Tensor> eval_dynamic_slice(const hlo::Op& op, const std::vector<Tensor>& in,
                                       RunContext&) {
  const Tensor& x = in[0];
  Tensor out = result_tensor(op);
  if (in.size() != 1 + x.shape().size())
    fail("dynamic_slice", "expects {} start indices (got {})", x.rank(), in.size() - 1);
  for_each_in_window(in, 1, x.shape(), out.shape(),
                     [&](int64_t k, int64_t off) { copy_elem(out, k, x, off); });
  return {out};
}

std::vector<Tensor> eval_dynamic_update_slice(const hlo::Op&, const std::vector<Tensor>& in,
                                              RunContext&) {
  const Tensor &x = in[0], &u = in[1];
  if (in.size() != 2 + x.shape().size())
    fail("dynamic_update_slice", "expects {} start indices (got {})", x.rank(), in.size() - 2);
  Tensor out = x.clone();
  for_each_in_window(in, 2, x.shape(), u.shape(),
                     [&](int64_t k, int64_t off) { copy_elem(out, off, u, k); });
  return {out};
}

// concatenate along `dimension`: operands placed one after another.
std::vector<Tensor> eval_concatenate(const hlo::Op& op, const std::vector<Tensor>& in,
                                     RunContext&) {
  Tensor out = result_tensor(op);
  size_t dim = static_cast<size_t>(op.attrs.get_int("dimension"));
  auto os = row_major_strides(out.shape());
  int64_t base = 0;
  for (const Tensor& x : in) {
    int64_t k = 0;
    for_each_index(x.shape(), [&](const I64s& idx) {
      int64_t off = 0;
      for (size_t d = 0; d < idx.size(); ++d) off += (idx[d] + (d == dim ? base : 0)) * os[d];
      copy_elem(out, off, x, k++);
    });
    base += x.shape()[dim];
  }
  return {out};
}

// pad: operand element i lands at low + i * (interior + 1); negative low/high drop elements.
std::vector<Tensor> eval_pad(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  const Tensor &x = in[0], &pv = in[1];
  Tensor out = result_tensor(op);
  size_t r = static_cast<size_t>(x.rank());
  const I64s& lo = op.attrs.get_i64s("edge_padding_low");
  I64s interior = i64s_or(op, "interior_padding", r, 0);
  for (int64_t i = 0; i < out.numel(); ++i) copy_elem(out, i, pv, 0);
  auto os = row_major_strides(out.shape());
  int64_t k = 0;
  for_each_index(x.shape(), [&](const I64s& idx) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < r; ++d) {
      int64_t p = lo[d] + idx[d] * (interior[d] + 1);
      if (p < 0 || p >= out.shape()[d]) inside = false;
      off += p * os[d];
    }
    if (inside) copy_elem(out, off, x, k);
    ++k;
  });
  return {out};
}

// reverse: result[i] = operand[j], j[d] = dim - 1 - i[d] for d in dimensions.
std::vector<Tensor> eval_reverse(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  const Tensor& x = in[0];
  Tensor out = result_tensor(op);
  const I64s& dims = op.attrs.get_i64s("dimensions");
  std::vector<bool> rev(x.shape().size(), false);
  for (int64_t d : dims) rev.at(static_cast<size_t>(d)) = true;
  auto xs = row_major_strides(x.shape());
  int64_t k = 0;
  for_each_index(out.shape(), [&](const I64s& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      off += (rev[d] ? x.shape()[d] - 1 - idx[d] : idx[d]) * xs[d];
    copy_elem(out, k++, x, off);
  });
  return {out};
}

}  // namespace

void register_shape_kernels(Kernel* t) {
  hlo::FamilyTable<Kernel> ft(t, "shape.cpp", {"shape"});
#define NETSPEC_SET_KERNEL(kind, name) ft.set(hlo::OpKind::kind, eval_##name);
  NETSPEC_SHAPE_FAMILY(NETSPEC_SET_KERNEL)
#undef NETSPEC_SET_KERNEL
}

}  // namespace netspec::exec::ref
