// Type rules of the collective family: all_reduce (spec constraints in comments).
#include <set>

#include "hlo/op_family.h"
#include "hlo/verify_internal.h"

namespace netspec::hlo {
namespace {
using namespace vr;

std::vector<Type> rule_all_reduce(const Op& op, const std::vector<Type>& given) {
  expect_min_operands(op, 1);
  expect_num_regions(op, 1);
  std::vector<Type> res;
  for (size_t i = 0; i < op.operands.size(); ++i) res.push_back(tensor_operand(op, i));
  if (auto* g = op.attrs.get_if<DenseAttr>("replica_groups")) {
    const Tensor& t = g->value;
    if (t.rank() != 2) fail("all_reduce", "replica_groups must be 2-D (got {})", t.type_str());
    // C1: ids are unique across groups; C3: ids >= 0 (-1 marks padding).
    std::set<int64_t> seen;
    for (int64_t i = 0; i < t.numel(); ++i) {
      int64_t id = t.as_int64(i);
      if (id == -1) continue;
      if (id < 0) fail("all_reduce", "negative replica id (got {})", id);
      if (!seen.insert(id).second) fail("all_reduce", "replica id {} appears twice", id);
    }
  } else if (op.attrs.has("replica_groups")) {
    fail("all_reduce", "replica_groups must be a dense i64 tensor");
  }
  // C4: use_global_device_ids requires a channel handle with handle > 0.
  auto* ch = optional_attr<ChannelHandle>(op, "channel_handle", "a channel handle");
  if (op.attrs.has("use_global_device_ids")) {
    if (!ch || ch->handle <= 0)
      fail("all_reduce", "use_global_device_ids needs channel_handle with handle > 0");
  }
  // C5: computation : (tensor<E>, tensor<E>) -> tensor<E> with is_promotable(element_type(operand),
  // E); one computation serves every operand, so their element types agree. C6/C7: results keep
  // the operands' shapes with element type E.
  DType e0 = res[0].dtype();
  for (const auto& t : res)
    if (t.dtype() != e0)
      fail("all_reduce", "operands must share an element type (got {} and {})", res[0].str(),
           t.str());
  DType e = check_accumulator_region(op, 0, {e0}, "computation")[0];
  for (auto& t : res) t = t.with_dtype(e);
  return check_given(op, given, res);
}

}  // namespace

void register_collective_rules(InferRule* t) {
  FamilyTable<InferRule> ft(t, "verify_collective.cpp", {"collective"});
  ft.set(OpKind::kAllReduce, rule_all_reduce);
}

}  // namespace netspec::hlo
