// Type rules of the misc family: constant, iota, rng_bit_generator (spec constraints in comments).
#include <set>

#include "hlo/op_family.h"
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

}  // namespace

void register_misc_rules(InferRule* t) {
  FamilyTable<InferRule> ft(t, "verify_misc.cpp", {"misc"});
  ft.set(OpKind::kConstant, rule_constant);
  ft.set(OpKind::kIota, rule_iota);
  ft.set(OpKind::kRngBitGenerator, rule_rng_bit_generator);
}

}  // namespace netspec::hlo
