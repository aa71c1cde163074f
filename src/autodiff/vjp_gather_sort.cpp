// VJP rules of gather, scatter and sort. Sort: re-sort with an iota to get the permutation.
// Gather and scatter: gather's transpose is a scatter-add with the mirrored
// dimension numbers and scatter-add's update gradient a gather — never a dense one-hot.
// Caveat (as in XLA): gather clamps out-of-range start indices while scatter skips them, so the
// rules assume in-range indices.
#include <algorithm>

#include "autodiff/rules.h"
#include "hlo/dims_fields.h"
#include "hlo/op_family.h"

namespace netspec::autodiff {
namespace {

using hlo::GatherDims;
using hlo::I64s;
using hlo::OpKind;
using hlo::ScatterDims;
using hlo::Value;

// Gather and scatter dimension numbers mirror each other field by field (hlo/dims_fields.h).
template <typename To, typename From, size_t N>
To mirrored(const From& from, const std::array<hlo::DimsField<From>, N>& from_fields,
            const std::array<hlo::DimsField<To>, N>& to_fields) {
  To to;
  for (size_t i = 0; i < N; ++i) to.*to_fields[i].second = from.*from_fields[i].second;
  to.index_vector_dim = from.index_vector_dim;
  return to;
}

hlo::RegionFn add_body() {
  return [](hlo::Builder& rb, const std::vector<Value*>& a) {
    return std::vector<Value*>{rb.add(a[0], a[1])};
  };
}

// y = gather(x, idx): dx = scatter-add(0, idx, dy) with offset dims as update window dims.
std::vector<Value*> gather(VjpCtx& c) {
  const GatherDims& g = c.op.attrs.get<GatherDims>("dimension_numbers");
  ScatterDims s = mirrored(g, hlo::kGatherDimsFields, hlo::kScatterDimsFields);
  Value* x = c.x(0);
  bool sorted = c.op.attrs.get_bool_or("indices_are_sorted", false);
  auto r = c.b.scatter({zeros(c.b, x->type)}, c.x(1), {c.dy[0]}, s, add_body(), sorted, false);
  return {r[0], nullptr};
}

bool is_replace_body(const hlo::Block& r) {
  return r.args.size() == 2 && r.ops.size() == 1 && r.ops[0]->operands.size() == 1 &&
         r.ops[0]->operand(0) == r.arg(1);
}

// y = scatter(x, idx, u) with add: dx = dy, du = gather(dy, idx); with replace (return the
// update): dx = dy with the scattered positions zeroed, du = gather(dy, idx).
std::vector<Value*> scatter(VjpCtx& c) {
  if (c.op.operands.size() != 3)
    fail("vjp", "stablehlo.scatter with {} inputs is not differentiable (expected 1)",
         (c.op.operands.size() - 1) / 2);
  const hlo::Block& body = *c.op.region(0);
  auto comb = region_combiner(body);
  bool is_add = comb && *comb == OpKind::kAdd;
  bool replace = is_replace_body(body);
  if (!is_add && !replace)
    fail("vjp", "stablehlo.scatter body is neither add nor replace (use a custom VJP)");
  const ScatterDims& s = c.op.attrs.get<ScatterDims>("scatter_dimension_numbers");
  Value* x = c.x(0);
  Value* idx = c.x(1);
  Value* u = c.x(2);
  Value* dy = c.dy[0];
  bool sorted = c.op.attrs.get_bool_or("indices_are_sorted", false);
  std::vector<Value*> out(3, nullptr);
  if (c.wants[0]) {
    out[0] = dy;
    if (replace) {
      auto keep = [](hlo::Builder&, const std::vector<Value*>& a) {
        return std::vector<Value*>{a[1]};
      };
      out[0] = c.b.scatter({dy}, idx, {zeros(c.b, u->type)}, s, keep, sorted,
                           c.op.attrs.get_bool_or("unique_indices", false))[0];
    }
  }
  if (c.wants[2]) {
    GatherDims g = mirrored(s, hlo::kScatterDimsFields, hlo::kGatherDimsFields);
    I64s sizes;
    size_t w = 0;
    for (int64_t d = 0; d < x->type.rank(); ++d) {
      auto in = [&](const I64s& v) { return std::find(v.begin(), v.end(), d) != v.end(); };
      if (in(s.inserted_window_dims) || in(s.input_batching_dims)) {
        sizes.push_back(1);
      } else {
        sizes.push_back(u->type.dim(s.update_window_dims.at(w++)));
      }
    }
    out[2] = c.b.gather(dy, idx, g, sizes, sorted);
  }
  return out;
}

// y_i = sort(x_i) along d: re-sort with an extra iota operand to get the permutation p, then
// dx_i = the dy_i sorted back by p (a second sort keyed on p; no scatter, no one-hot).
std::vector<Value*> sort(VjpCtx& c) {
  hlo::Builder& b = c.b;
  int64_t dim = c.op.attrs.get_int("dimension");
  bool stable = c.op.attrs.get_bool_or("is_stable", false);
  const hlo::Type& t0 = c.x(0)->type;
  std::vector<Value*> ins(c.op.operands.begin(), c.op.operands.end());
  ins.push_back(b.iota(hlo::Type::tensor(DType::kI64, t0.shape()), dim));
  const hlo::Block& cmp = *c.op.region(0);
  // Same comparator; the two extra (iota) arguments are unused.
  auto comparator = [&](hlo::Builder& rb, const std::vector<Value*>& args) {
    hlo::ValueMap map;
    for (size_t i = 0; i < cmp.args.size(); ++i) map[cmp.arg(i)] = args[i];
    std::vector<Value*> out;
    for (const auto& op : cmp.ops) {
      if (op->kind == OpKind::kReturn) {
        for (Value* v : op->operands) out.push_back(hlo::lookup(map, v));
        break;
      }
      hlo::clone_op(rb.block(), *op, map);
    }
    return out;
  };
  std::vector<Value*> sorted = b.sort(ins, dim, stable, comparator);
  Value* perm = sorted.back();
  std::vector<Value*> keyed{perm};
  std::vector<size_t> which;
  for (size_t i = 0; i < c.op.operands.size(); ++i)
    if (c.wants[i]) {
      keyed.push_back(c.dy_or_zero(i));
      which.push_back(i);
    }
  std::vector<Value*> out(c.op.operands.size(), nullptr);
  if (which.empty()) return out;
  auto by_perm = [](hlo::Builder& rb, const std::vector<Value*>& args) {
    return std::vector<Value*>{rb.compare(args[0], args[1], "LT")};
  };
  std::vector<Value*> back = b.sort(keyed, dim, false, by_perm);
  for (size_t k = 0; k < which.size(); ++k) out[which[k]] = back[k + 1];
  return out;
}

}  // namespace

void register_gather_sort_vjps(VjpRule* t) {
  hlo::FamilyTable<VjpRule> ft(t, "vjp_gather_sort.cpp", {"gather", "sort"});
  ft.set(OpKind::kGather, gather);
  ft.set(OpKind::kScatter, scatter);
  ft.set(OpKind::kSort, sort);
}

}  // namespace netspec::autodiff
