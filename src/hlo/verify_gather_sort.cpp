// Type rules: gather, scatter (incl. operand/input batching dims), sort.
#include "hlo/op_family.h"
#include "hlo/verify_internal.h"

namespace netspec::hlo {
namespace {
using namespace vr;

// Shared index checks of gather and scatter. `obd` are the operand batching dims, `ibd` the
// index batching dims, `to_operand` the start_index_map / scatter_dims_to_operand_dims.
void check_index_dims(const Op& op, const Type& operand, const Type& idx, int64_t ivd,
                      const I64s& collapsed, const I64s& obd, const I64s& ibd,
                      const I64s& to_operand, const char* collapsed_name, const char* map_name) {
  int64_t r = operand.rank();
  // index_vector_dim in [0, rank(indices)].
  if (ivd < 0 || ivd > idx.rank())
    fail(mn(op), "index_vector_dim out of range (got {}, expected in [0, {}])", ivd, idx.rank());
  if (!is_integer(idx.dtype())) fail(mn(op), "indices must be integer (got {})", idx.str());
  check_sorted(op, collapsed, collapsed_name);
  check_sorted(op, obd, "operand batching dims");
  I64s all = collapsed;
  all.insert(all.end(), obd.begin(), obd.end());
  check_dims(op, all, r, fmt::format("{} + operand batching dims", collapsed_name));
  // Index batching dims: unique, in range, not the index vector dim, sizes match the operand's.
  check_dims(op, ibd, idx.rank(), "indices batching dims");
  if (contains(ibd, ivd))
    fail(mn(op), "indices batching dims contain index_vector_dim {} (got {})", ivd, i64s_str(ibd));
  if (ibd.size() != obd.size())
    fail(mn(op), "batching dim counts differ (got {} operand vs {} indices)", obd.size(),
         ibd.size());
  for (size_t i = 0; i < obd.size(); ++i)
    if (operand.dim(obd[i]) != idx.dim(ibd[i]))
      fail(mn(op), "batching dim sizes differ (got operand {} vs indices {})", operand.dim(obd[i]),
           idx.dim(ibd[i]));
  // Index vector size = dim(indices, ivd) (1 when ivd = rank).
  int64_t nvec = ivd < idx.rank() ? idx.dim(ivd) : 1;
  if (static_cast<int64_t>(to_operand.size()) != nvec)
    fail(mn(op), "{} size differs from the index vector (got {}, expected {})", map_name,
         to_operand.size(), nvec);
  check_dims(op, to_operand, r, map_name);
  for (int64_t d : to_operand)
    if (contains(obd, d)) fail(mn(op), "{} contains operand batching dim {}", map_name, d);
}

std::vector<Type> rule_gather(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 2);
  const Type& x = tensor_operand(op, 0, "operand");
  const Type& idx = tensor_operand(op, 1, "start_indices");
  const GatherDims& g = op.attrs.get<GatherDims>("dimension_numbers");
  const I64s& ss = op.attrs.get_i64s("slice_sizes");
  optional_attr<bool>(op, "indices_are_sorted", "a boolean");
  check_index_dims(op, x, idx, g.index_vector_dim, g.collapsed_slice_dims, g.operand_batching_dims,
                   g.start_indices_batching_dims, g.start_index_map, "collapsed_slice_dims",
                   "start_index_map");
  // C1: rank(operand) = size(offset_dims) + size(collapsed_slice_dims) +
  // size(operand_batching_dims).
  int64_t r = x.rank();
  if (static_cast<int64_t>(g.offset_dims.size() + g.collapsed_slice_dims.size() +
                           g.operand_batching_dims.size()) != r)
    fail("gather",
         "offset + collapsed + batching dims must cover the operand rank (got {} + {} + {}, "
         "expected {})",
         g.offset_dims.size(), g.collapsed_slice_dims.size(), g.operand_batching_dims.size(), r);
  // slice_sizes: one per operand dim, in [0, dim]; collapsed/batching dims have size <= 1.
  check_size(op, ss.size(), static_cast<size_t>(r), "slice_sizes");
  for (int64_t i = 0; i < r; ++i) {
    if (ss[static_cast<size_t>(i)] < 0 || ss[static_cast<size_t>(i)] > x.dim(i))
      fail("gather", "slice_sizes out of range on dim {} (got {}, expected in [0, {}])", i,
           ss[static_cast<size_t>(i)], x.dim(i));
    if ((contains(g.collapsed_slice_dims, i) || contains(g.operand_batching_dims, i)) &&
        ss[static_cast<size_t>(i)] > 1)
      fail("gather", "slice size of collapsed/batching dim {} must be <= 1 (got {})", i,
           ss[static_cast<size_t>(i)]);
  }
  // Result: batch dims = indices' shape without index_vector_dim; offset dims = slice sizes
  // without collapsed/batching dims, placed at offset_dims.
  Shape batch, offs;
  for (int64_t i = 0; i < idx.rank(); ++i)
    if (i != g.index_vector_dim) batch.push_back(idx.dim(i));
  for (int64_t i = 0; i < r; ++i)
    if (!contains(g.collapsed_slice_dims, i) && !contains(g.operand_batching_dims, i))
      offs.push_back(ss[static_cast<size_t>(i)]);
  int64_t rr = static_cast<int64_t>(batch.size() + offs.size());
  check_sorted(op, g.offset_dims, "offset_dims");
  check_dims(op, g.offset_dims, rr, "offset_dims");
  Shape s;
  size_t bi = 0, oi = 0;
  for (int64_t i = 0; i < rr; ++i)
    s.push_back(contains(g.offset_dims, i) ? offs[oi++] : batch[bi++]);
  return check_given(op, given, {x.with_shape(s)});
}

std::vector<Type> rule_scatter(const Op& op, const std::vector<Type>& given) {
  size_t nops = op.operands.size();
  if (nops < 3 || nops % 2 == 0)
    fail("scatter", "expected N inputs, indices and N updates (got {} operands)", nops);
  size_t n = (nops - 1) / 2;
  expect_num_regions(op, 1);
  const Type& x = tensor_operand(op, 0, "input");
  const Type& idx = tensor_operand(op, n, "scatter_indices");
  const ScatterDims& d = op.attrs.get<ScatterDims>("scatter_dimension_numbers");
  optional_attr<bool>(op, "indices_are_sorted", "a boolean");
  optional_attr<bool>(op, "unique_indices", "a boolean");
  check_index_dims(op, x, idx, d.index_vector_dim, d.inserted_window_dims, d.input_batching_dims,
                   d.scatter_indices_batching_dims, d.scatter_dims_to_operand_dims,
                   "inserted_window_dims", "scatter_dims_to_operand_dims");
  int64_t r = x.rank();
  // C7: rank(inputs) = size(update_window_dims) + size(inserted_window_dims) +
  // size(input_batching_dims).
  if (static_cast<int64_t>(d.update_window_dims.size() + d.inserted_window_dims.size() +
                           d.input_batching_dims.size()) != r)
    fail("scatter",
         "update_window + inserted_window + batching dims must cover the input rank "
         "(got {} + {} + {}, expected {})",
         d.update_window_dims.size(), d.inserted_window_dims.size(), d.input_batching_dims.size(),
         r);
  Shape scatter_sizes, window_bounds;
  for (int64_t i = 0; i < idx.rank(); ++i)
    if (i != d.index_vector_dim) scatter_sizes.push_back(idx.dim(i));
  for (int64_t i = 0; i < r; ++i)
    if (!contains(d.inserted_window_dims, i) && !contains(d.input_batching_dims, i))
      window_bounds.push_back(x.dim(i));
  int64_t ur = static_cast<int64_t>(scatter_sizes.size() + window_bounds.size());
  check_sorted(op, d.update_window_dims, "update_window_dims");
  check_dims(op, d.update_window_dims, ur, "update_window_dims");
  std::vector<DType> in_types;
  for (size_t i = 0; i < n; ++i) {
    const Type& in = tensor_operand(op, i, "input");
    const Type& up = tensor_operand(op, n + 1 + i, "update");
    // C1: inputs share a shape; C4: updates' shape = scatter dims ++ window dims (<= input's).
    if (in.shape() != x.shape())
      fail("scatter", "inputs must share a shape (got {} vs {})", x.str(), in.str());
    if (up.dtype() != in.dtype())
      fail("scatter", "update #{} element type differs (got {}, expected {})", i, up.str(),
           dtype_name(in.dtype()));
    if (up.rank() != ur)
      fail("scatter", "update #{} rank differs (got {}, expected {})", i, up.rank(), ur);
    size_t si = 0, wi = 0;
    for (int64_t k = 0; k < ur; ++k) {
      if (contains(d.update_window_dims, k)) {
        if (up.dim(k) > window_bounds[wi])
          fail("scatter", "update #{} window dim {} too large (got {}, expected <= {})", i, k,
               up.dim(k), window_bounds[wi]);
        ++wi;
      } else {
        if (up.dim(k) != scatter_sizes[si])
          fail("scatter",
               "update #{} scatter dim {} differs from the indices (got {}, expected {})", i, k,
               up.dim(k), scatter_sizes[si]);
        ++si;
      }
    }
    in_types.push_back(in.dtype());
  }
  // C23: update_computation : (tensor<E0>..., tensor<E0>...) -> (tensor<E0>...) with
  // is_promotable(element_type(inputs[i]), Ei); C24/C25: results = inputs' shapes with Ei.
  auto es = check_accumulator_region(op, 0, in_types, "update_computation");
  std::vector<Type> res;
  for (size_t i = 0; i < n; ++i) res.push_back(x.with_dtype(es[i]));
  return check_given(op, given, res);
}

std::vector<Type> rule_sort(const Op& op, const std::vector<Type>& given) {
  expect_min_operands(op, 1);
  expect_num_regions(op, 1);
  const Type& a = tensor_operand(op, 0, "input");
  std::vector<Type> res, args;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Type& x = tensor_operand(op, i, "input");
    // C3: inputs share a shape.
    if (x.shape() != a.shape())
      fail("sort", "inputs must share a shape (got {} vs {})", a.str(), x.str());
    res.push_back(x);
    args.push_back(scalar(x.dtype()));
    args.push_back(scalar(x.dtype()));
  }
  // C4: -R <= dimension < R.
  int64_t d = op.attrs.get_int("dimension");
  optional_attr<bool>(op, "is_stable", "a boolean");
  if (d < -a.rank() || d >= a.rank())
    fail("sort", "dimension out of range (got {}, expected in [{}, {}))", d, -a.rank(), a.rank());
  // C5: comparator : (tensor<E0>, tensor<E0>, ..., tensor<EN-1>, tensor<EN-1>) -> tensor<i1>.
  expect_region_args(op, 0, args, "comparator");
  expect_region_results(op, 0, {scalar(DType::kI1)}, "comparator");
  return check_given(op, given, res);
}

}  // namespace

void register_gather_sort_rules(InferRule* t) {
  FamilyTable<InferRule> ft(t, "verify_gather_sort.cpp", {"gather", "sort"});
  ft.set(OpKind::kGather, rule_gather);
  ft.set(OpKind::kScatter, rule_scatter);
  ft.set(OpKind::kSort, rule_sort);
}

}  // namespace netspec::hlo
