// Type rules: constant, iota, rng_bit_generator, all_reduce (spec constraints in comments).
#include <set>

#include "hlo/verify_internal.h"

namespace netspec::hlo {
namespace {
using namespace vr;

std::vector<Type> rule_constant(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 0);
  auto* v = op.attrs.get_if<DenseAttr>("value");
  if (!v) fail("constant", "missing dense attribute 'value'");
  // C1: type(value) = type(output).
  return check_given(op, given, {Type::tensor(v->value.dtype(), v->value.shape())});
}

std::vector<Type> rule_iota(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 0);
  require_given(op, given, 1);
  const Type& t = given[0];
  if (is_bool(t.dtype())) fail("iota", "output must be integer or float (got {})", t.str());
  int64_t d = op.attrs.get_int("iota_dimension");
  // C1: 0 <= iota_dimension < rank(output).
  if (d < 0 || d >= t.rank())
    fail("iota", "iota_dimension out of range (got {}, expected in [0, {}))", d, t.rank());
  return given;
}

std::vector<Type> rule_rng_bit_generator(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 1);
  const Type& st = tensor_operand(op, 0, "initial_state");
  const std::string& alg = op.attrs.get_enum("rng_algorithm");
  if (alg != "DEFAULT" && alg != "THREE_FRY" && alg != "PHILOX")
    fail("rng_bit_generator", "unknown rng_algorithm (got {}, expected DEFAULT|THREE_FRY|PHILOX)",
         alg);
  if (st.rank() != 1 || st.dtype() != DType::kUI64)
    fail("rng_bit_generator", "initial_state must be a 1-D ui64 tensor (got {})", st.str());
  // C2: THREE_FRY state has 2 u64 words; PHILOX 2 or 3.
  int64_t n = st.dim(0);
  if (alg == "THREE_FRY" && n != 2)
    fail("rng_bit_generator", "THREE_FRY state size (got {}, expected 2)", n);
  if (alg == "PHILOX" && n != 2 && n != 3)
    fail("rng_bit_generator", "PHILOX state size (got {}, expected 2 or 3)", n);
  require_given(op, given, 2);
  // C1: type(initial_state) = type(output_state).
  if (given[0] != st)
    fail("rng_bit_generator", "output_state type differs (got {}, expected {})", given[0].str(),
         st.str());
  if (is_bool(given[1].dtype()))
    fail("rng_bit_generator", "output must be integer or float (got {})", given[1].str());
  return given;
}

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

void register_misc_rules(InferRule* t) {
  t[static_cast<size_t>(OpKind::kConstant)] = rule_constant;
  t[static_cast<size_t>(OpKind::kIota)] = rule_iota;
  t[static_cast<size_t>(OpKind::kRngBitGenerator)] = rule_rng_bit_generator;
  t[static_cast<size_t>(OpKind::kAllReduce)] = rule_all_reduce;
}

}  // namespace netspec::hlo
