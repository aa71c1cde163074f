// VJP rules of the collective family.
#include "autodiff/rules.h"
#include "hlo/op_family.h"

namespace netspec::autodiff {
namespace {

using hlo::OpKind;
using V = std::vector<hlo::Value*>;

// all_reduce(sum): the transpose of a cross-replica sum is a cross-replica sum of dy.
V all_reduce(VjpCtx& c) {
  auto comb = region_combiner(*c.op.region(0));
  if (!comb || *comb != OpKind::kAdd)
    fail("vjp", "stablehlo.all_reduce is differentiable only with an add body");
  std::vector<hlo::I64s> groups;
  if (auto* g = c.op.attrs.get_if<hlo::DenseAttr>("replica_groups"); g && g->value.rank() == 2) {
    int64_t rows = g->value.shape()[0], cols = g->value.shape()[1];
    for (int64_t i = 0; i < rows; ++i) {
      hlo::I64s row;
      for (int64_t j = 0; j < cols; ++j)
        if (int64_t v = g->value.as_int64(i * cols + j); v >= 0) row.push_back(v);
      groups.push_back(row);
    }
  }
  V dys;
  for (size_t i = 0; i < c.op.results.size(); ++i) dys.push_back(c.dy_or_zero(i));
  return c.b.all_reduce(dys, groups, OpKind::kAdd);
}

}  // namespace

void register_collective_vjps(VjpRule* t) {
  hlo::FamilyTable<VjpRule> ft(t, "vjp_collective.cpp", {"collective"});
  ft.set(OpKind::kAllReduce, all_reduce);
}

}  // namespace netspec::autodiff
