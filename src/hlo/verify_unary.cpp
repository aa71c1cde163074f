// Type rules: elementwise unary ops, convert, bitcast_convert, reduce_precision.
// All share the operand's shape; element-type classes follow each op's spec "Inputs" table.
#include "hlo/op_family.h"
#include "hlo/verify_internal.h"

namespace netspec::hlo {
namespace {
using namespace vr;

unsigned unary_mask(OpKind k) {
  switch (k) {
    case OpKind::kNegate:
      return kNum;
    case OpKind::kAbs:
    case OpKind::kSign:
      return kFloat | kSInt;
    case OpKind::kNot:
      return kInt | kBool;
    case OpKind::kPopcnt:
    case OpKind::kCountLeadingZeros:
      return kInt;
    default:
      return kFloat;  // exponential .. round_nearest_even, is_finite
  }
}

std::vector<Type> rule_unary(const Op& op, const std::vector<Type>& given) {
  const Type& x = sole_tensor_operand(op);
  unsigned m = unary_mask(op.kind);
  if (!allowed(x.dtype(), m)) fail(mn(op), "operand must be {} (got {})", mask_str(m), x.str());
  // is_finite: C1 shape(x) = shape(y), y is i1.
  if (op.kind == OpKind::kIsFinite) return check_given(op, given, {x.with_dtype(DType::kI1)});
  return check_given(op, given, {x});
}

std::vector<Type> rule_convert(const Op& op, const std::vector<Type>& given) {
  const Type& x = sole_tensor_operand(op);
  require_given(op, given, 1);
  // C1: shape(operand) = shape(result).
  if (given[0].shape() != x.shape())
    fail("convert", "shape differs (got {}, expected {})", given[0].str(),
         x.with_dtype(given[0].dtype()).str());
  return given;
}

std::vector<Type> rule_bitcast_convert(const Op& op, const std::vector<Type>& given) {
  const Type& x = sole_tensor_operand(op);
  require_given(op, given, 1);
  const Type& r = given[0];
  int eb = dtype_bits(x.dtype()), rb = dtype_bits(r.dtype());
  // C1: equal bit widths keep the shape; a narrower result adds a minor dim of eb/rb; a wider
  // result drops a minor dim of rb/eb.
  Shape expect = x.shape();
  if (rb < eb) {
    expect.push_back(eb / rb);
  } else if (rb > eb) {
    if (expect.empty() || expect.back() != rb / eb)
      fail("bitcast_convert", "operand's last dim must be {} to widen {} to {} (got {})", rb / eb,
           dtype_name(x.dtype()), dtype_name(r.dtype()), x.str());
    expect.pop_back();
  }
  if (r.shape() != expect)
    fail("bitcast_convert", "result shape differs (got {}, expected {})", r.str(),
         r.with_shape(expect).str());
  return given;
}

std::vector<Type> rule_reduce_precision(const Op& op, const std::vector<Type>& given) {
  const Type& x = sole_tensor_operand(op);
  if (!is_float(x.dtype()))
    fail("reduce_precision", "operand must be floating-point (got {})", x.str());
  int64_t e = op.attrs.get_int("exponent_bits"), m = op.attrs.get_int("mantissa_bits");
  // C2: exponent_bits >= 1; C3: mantissa_bits >= 0.
  if (e < 1) fail("reduce_precision", "exponent_bits must be >= 1 (got {})", e);
  if (m < 0) fail("reduce_precision", "mantissa_bits must be >= 0 (got {})", m);
  return check_given(op, given, {x});
}

}  // namespace

void register_unary_rules(InferRule* t) {
  FamilyTable<InferRule> ft(t, "verify_unary.cpp", {"unary"});
  ft.set_family("unary", rule_unary);
  ft.set(OpKind::kConvert, rule_convert);
  ft.set(OpKind::kBitcastConvert, rule_bitcast_convert);
  ft.set(OpKind::kReducePrecision, rule_reduce_precision);
}

}  // namespace netspec::hlo
