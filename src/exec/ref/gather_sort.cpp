// Reference kernels: gather, scatter, sort. Index maps transcribe the spec's definitions
// (batching dims included): gather clamps its start indices into range, scatter skips updates
// whose result index is out of bounds, element by element as the spec says (XLA CPU instead
// drops a whole update window when any of it falls outside; in-bounds windows agree).
#include <algorithm>
#include <numeric>

#include "exec/ref/kernel_util.h"
#include "hlo/op_family.h"

namespace netspec::exec::ref {
namespace {

bool contains(const I64s& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// start_indices[bi...] with `:` at index_vector_dim (or the single element when
// index_vector_dim == rank): the index vector for batch position `batch`.
I64s index_vector(const Tensor& idx, const I64s& batch, int64_t ivd) {
  auto st = row_major_strides(idx.shape());
  I64s full;
  size_t b = 0;
  for (int64_t d = 0; d < idx.rank(); ++d) full.push_back(d == ivd ? 0 : batch[b++]);
  int64_t base = linear_index(full, st);
  if (ivd >= idx.rank()) return {int_at(idx, base)};
  I64s v;
  for (int64_t k = 0; k < idx.shape()[static_cast<size_t>(ivd)]; ++k)
    v.push_back(int_at(idx, base + k * st[static_cast<size_t>(ivd)]));
  return v;
}

std::vector<Tensor> eval_gather(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  const Tensor &x = in[0], &idx = in[1];
  const auto& dn = op.attrs.get<hlo::GatherDims>("dimension_numbers");
  const I64s& sizes = op.attrs.get_i64s("slice_sizes");
  Tensor out = result_tensor(op);
  int64_t r = x.rank();
  auto xs = row_major_strides(x.shape());
  I64s batch_dims;
  for (int64_t d = 0; d < out.rank(); ++d)
    if (!contains(dn.offset_dims, d)) batch_dims.push_back(d);
  int64_t k = 0;
  for_each_index(out.shape(), [&](const I64s& ri) {
    I64s batch;
    for (int64_t d : batch_dims) batch.push_back(ri[static_cast<size_t>(d)]);
    I64s start = index_vector(idx, batch, dn.index_vector_dim);
    I64s operand_index(static_cast<size_t>(r), 0);
    // full_start_index: clamp(start[d_start], 0, dim - slice_size) at start_index_map[d_start].
    for (size_t ds = 0; ds < dn.start_index_map.size(); ++ds) {
      size_t d = static_cast<size_t>(dn.start_index_map[ds]);
      operand_index[d] +=
          std::clamp<int64_t>(start.at(ds), 0, std::max<int64_t>(0, x.shape()[d] - sizes[d]));
    }
    // full_batching_index: batch[d_start - (d_start < index_vector_dim ? 0 : 1)].
    for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
      int64_t ds = dn.start_indices_batching_dims[i];
      operand_index[static_cast<size_t>(dn.operand_batching_dims[i])] +=
          batch[static_cast<size_t>(ds - (ds < dn.index_vector_dim ? 0 : 1))];
    }
    // full_offset_index: offset values at operand dims not collapsed and not batching.
    size_t o = 0;
    for (int64_t d = 0; d < r; ++d) {
      if (contains(dn.collapsed_slice_dims, d) || contains(dn.operand_batching_dims, d)) continue;
      operand_index[static_cast<size_t>(d)] += ri[static_cast<size_t>(dn.offset_dims.at(o++))];
    }
    copy_elem(out, k++, x, linear_index(operand_index, xs));
  });
  return {out};
}

std::vector<Tensor> eval_scatter(const hlo::Op& op, const std::vector<Tensor>& in,
                                 RunContext& ctx) {
  size_t n = (in.size() - 1) / 2;
  std::vector<Tensor> outs;
  for (size_t k = 0; k < n; ++k) outs.push_back(in[k].clone());
  const Tensor& idx = in[n];
  std::vector<Tensor> ups(in.begin() + static_cast<long>(n + 1), in.end());
  const auto& dn = op.attrs.get<hlo::ScatterDims>("scatter_dimension_numbers");
  const Shape& shape = outs[0].shape();
  int64_t r = static_cast<int64_t>(shape.size());
  auto os = row_major_strides(shape);
  I64s scatter_dims;
  for (int64_t d = 0; d < ups[0].rank(); ++d)
    if (!contains(dn.update_window_dims, d)) scatter_dims.push_back(d);
  ScalarRegion body(*op.region(0), ctx);
  int64_t u = 0;
  for_each_index(ups[0].shape(), [&](const I64s& ui) {
    I64s usi;
    for (int64_t d : scatter_dims) usi.push_back(ui[static_cast<size_t>(d)]);
    I64s start = index_vector(idx, usi, dn.index_vector_dim);
    I64s ri(static_cast<size_t>(r), 0);
    for (size_t ds = 0; ds < dn.scatter_dims_to_operand_dims.size(); ++ds)
      ri[static_cast<size_t>(dn.scatter_dims_to_operand_dims[ds])] += start.at(ds);
    for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
      int64_t ds = dn.scatter_indices_batching_dims[i];
      ri[static_cast<size_t>(dn.input_batching_dims[i])] +=
          usi[static_cast<size_t>(ds - (ds < dn.index_vector_dim ? 0 : 1))];
    }
    size_t w = 0;
    for (int64_t d = 0; d < r; ++d) {
      if (contains(dn.inserted_window_dims, d) || contains(dn.input_batching_dims, d)) continue;
      ri[static_cast<size_t>(d)] += ui[static_cast<size_t>(dn.update_window_dims.at(w++))];
    }
    bool in_bounds = true;
    for (int64_t d = 0; d < r; ++d)
      if (ri[static_cast<size_t>(d)] < 0 ||
          ri[static_cast<size_t>(d)] >= shape[static_cast<size_t>(d)])
        in_bounds = false;
    if (in_bounds) {
      int64_t dst = linear_index(ri, os);
      if (body.fast() && n == 1) {
        body.apply_fast(outs[0], dst, ups[0], u, outs[0], dst);
      } else {
        std::vector<Tensor> args;
        for (const Tensor& t : outs) args.push_back(scalar_at(t, dst));
        for (const Tensor& t : ups) args.push_back(scalar_at(t, u));
        std::vector<Tensor> res = body(args);
        for (size_t k = 0; k < n; ++k) copy_elem(outs[k], dst, res.at(k), 0);
      }
    }
    ++u;
  });
  return outs;
}

// sort along `dimension`: each 1-D slice is permuted by a stable sort whose "less" is the
// comparator region called as (in0[a], in0[b], in1[a], in1[b], ...).
std::vector<Tensor> eval_sort(const hlo::Op& op, const std::vector<Tensor>& in, RunContext& ctx) {
  int64_t dim = op.attrs.get_int("dimension");
  const Shape& shape = in[0].shape();
  if (dim < 0) dim += static_cast<int64_t>(shape.size());
  std::vector<Tensor> outs;
  for (size_t k = 0; k < in.size(); ++k) outs.push_back(result_tensor(op, k));
  if (in[0].numel() == 0) return outs;
  auto st = row_major_strides(shape);
  int64_t len = shape[static_cast<size_t>(dim)], step = st[static_cast<size_t>(dim)];
  Shape outer = shape;
  outer[static_cast<size_t>(dim)] = 1;
  const hlo::Block& cmp = *op.region(0);
  for_each_index(outer, [&](const I64s& oi) {
    int64_t base = linear_index(oi, st);
    std::vector<int64_t> perm(static_cast<size_t>(len));
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
      std::vector<Tensor> args;
      for (const Tensor& t : in) {
        args.push_back(scalar_at(t, base + a * step));
        args.push_back(scalar_at(t, base + b * step));
      }
      return pred_at(run_block(cmp, args, ctx).at(0));
    });
    for (int64_t j = 0; j < len; ++j)
      for (size_t k = 0; k < in.size(); ++k)
        copy_elem(outs[k], base + j * step, in[k], base + perm[static_cast<size_t>(j)] * step);
  });
  return outs;
}

}  // namespace

void register_gather_sort_kernels(Kernel* t) {
  hlo::FamilyTable<Kernel> ft(t, "gather_sort.cpp", {"gather", "sort"});
  using K = hlo::OpKind;
  ft.set(K::kGather, eval_gather);
  ft.set(K::kScatter, eval_scatter);
  ft.set(K::kSort, eval_sort);
}

}  // namespace netspec::exec::ref
