// JAX forms of the gather and sort families: lax.gather / lax.scatter_<monoid> with the index
// vector moved last (JAX keeps it there), and lax.sort for comparators compare(a0, a1, LT|GT).
#include "core/error.h"
#include "hlo/op_family.h"
#include "jax/ops.h"

namespace netspec::jax {
namespace {

using hlo::OpKind;

const char* py_bool(bool b) { return b ? "True" : "False"; }

// The indices with their index vector in the last dimension.
std::string indices_last(Translator& t, const hlo::Value* idx, int64_t index_vector_dim) {
  int64_t rank = static_cast<int64_t>(idx->type.shape().size());
  std::string ix = t.name(idx);
  if (index_vector_dim == rank) return fmt::format("lax.expand_dims({}, ({},))", ix, rank);
  if (index_vector_dim != rank - 1)
    return fmt::format("jnp.moveaxis({}, {}, -1)", ix, index_vector_dim);
  return ix;
}

std::string gather(Translator& t, const hlo::Op& op) {
  const auto& d = op.attrs.get<hlo::GatherDims>("dimension_numbers");
  return fmt::format(
      "lax.gather({}, {}, lax.GatherDimensionNumbers(offset_dims={}, collapsed_slice_dims={}, "
      "start_index_map={}, operand_batching_dims={}, start_indices_batching_dims={}), "
      "slice_sizes={}, indices_are_sorted={}, mode=lax.GatherScatterMode.CLIP)",
      t.name(op.operand(0)), indices_last(t, op.operand(1), d.index_vector_dim),
      py_tuple(d.offset_dims), py_tuple(d.collapsed_slice_dims), py_tuple(d.start_index_map),
      py_tuple(d.operand_batching_dims), py_tuple(d.start_indices_batching_dims),
      py_tuple(op.attrs.get_i64s("slice_sizes")),
      py_bool(op.attrs.get_bool_or("indices_are_sorted", false)));
}

std::string scatter(Translator& t, const hlo::Op& op) {
  const auto& d = op.attrs.get<hlo::ScatterDims>("scatter_dimension_numbers");
  std::string ix = indices_last(t, op.operand(1), d.index_vector_dim);
  if (op.operands.size() != 3)
    fail("emit jax", "stablehlo.scatter: one operand only has a JAX form");
  const hlo::Block& r = *op.region(0);
  std::string fn;
  auto k = monoid_body(r);
  if (k == OpKind::kAdd)
    fn = "lax.scatter_add";
  else if (k == OpKind::kMaximum)
    fn = "lax.scatter_max";
  else if (k == OpKind::kMinimum)
    fn = "lax.scatter_min";
  else if (k == OpKind::kMultiply)
    fn = "lax.scatter_mul";
  else if (r.ops.size() == 1 && r.ops[0]->operand(0) == r.arg(1))
    fn = "lax.scatter";
  else
    fail("emit jax", "stablehlo.scatter: only add/max/min/mul/replace bodies have a JAX form");
  return fmt::format(
      "{}({}, {}, {}, lax.ScatterDimensionNumbers(update_window_dims={}, inserted_window_dims={}, "
      "scatter_dims_to_operand_dims={}, operand_batching_dims={}, "
      "scatter_indices_batching_dims={}), indices_are_sorted={}, unique_indices={}, "
      "mode=lax.GatherScatterMode.FILL_OR_DROP)",
      fn, t.name(op.operand(0)), ix, t.name(op.operand(2)), py_tuple(d.update_window_dims),
      py_tuple(d.inserted_window_dims), py_tuple(d.scatter_dims_to_operand_dims),
      py_tuple(d.input_batching_dims), py_tuple(d.scatter_indices_batching_dims),
      py_bool(op.attrs.get_bool_or("indices_are_sorted", false)),
      py_bool(op.attrs.get_bool_or("unique_indices", false)));
}

// Comparators `compare(arg0, arg1, LT|GT)` only: JAX sorts ascending by the first operand, so
// a descending sort sorts the negated key and negates it back.
std::string sort(Translator& t, const hlo::Op& op) {
  const hlo::Block& r = *op.region(0);
  const hlo::Op& c = *r.ops[0];
  bool ok = r.ops.size() == 2 && c.kind == OpKind::kCompare && c.operand(0) == r.arg(0) &&
            c.operand(1) == r.arg(1);
  std::string dir = ok ? c.attrs.get_enum("comparison_direction") : "";
  if (dir != "LT" && dir != "GT")
    fail("emit jax", "stablehlo.sort: only comparators compare(a0, a1, LT|GT) have a JAX form");
  std::string dim =
      fmt::format("dimension={}, is_stable={}, num_keys=1", op.attrs.get_int("dimension"),
                  py_bool(op.attrs.get_bool_or("is_stable", false)));
  std::string key = t.name(op.operand(0));
  if (dir == "LT") return fmt::format("lax.sort(({},), {})", t.operands(op), dim);
  std::string tmp = t.fresh("t");
  t.line(fmt::format("{} = lax.sort((lax.neg({}),{}), {})", tmp, key,
                     op.operands.size() > 1 ? " " + t.operands(op, 1) + "," : "", dim));
  std::vector<std::string> rs{fmt::format("lax.neg({}[0])", tmp)};
  for (size_t i = 1; i < op.operands.size(); ++i) rs.push_back(fmt::format("{}[{}]", tmp, i));
  return fmt::format("({},)", fmt::join(rs, ", "));
}

}  // namespace

void register_gather_sort_ops(OpRule* t) {
  hlo::FamilyTable<OpRule> ft(t, "jax/ops_gather_sort.cpp", {"gather", "sort"});
  ft.set(OpKind::kGather, translated(gather));
  ft.set(OpKind::kScatter, translated(scatter));
  ft.set(OpKind::kSort, translated_tuple(sort));
}

}  // namespace netspec::jax
