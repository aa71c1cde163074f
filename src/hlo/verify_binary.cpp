// Type rules: elementwise binary ops, compare, clamp, select.
#include "hlo/op_family.h"
#include "hlo/verify_internal.h"

namespace netspec::hlo {
namespace {
using namespace vr;

unsigned binary_mask(OpKind k) {
  switch (k) {
    case OpKind::kAdd:
    case OpKind::kMultiply:
    case OpKind::kMaximum:
    case OpKind::kMinimum:
      return kAny;
    case OpKind::kAtan2:
      return kFloat;
    case OpKind::kAnd:
    case OpKind::kOr:
    case OpKind::kXor:
      return kInt | kBool;
    case OpKind::kShiftLeft:
    case OpKind::kShiftRightArithmetic:
    case OpKind::kShiftRightLogical:
      return kInt;
    default:
      return kNum;  // subtract, divide, remainder, power
  }
}

std::vector<Type> rule_binary(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 2);
  const Type& a = tensor_operand(op, 0, "lhs");
  const Type& b = tensor_operand(op, 1, "rhs");
  // C1: type(lhs) = type(rhs) = type(result).
  if (a != b) fail(mn(op), "operand types differ (got {} vs {})", a.str(), b.str());
  unsigned m = binary_mask(op.kind);
  if (!allowed(a.dtype(), m)) fail(mn(op), "operands must be {} (got {})", mask_str(m), a.str());
  return check_given(op, given, {a});
}

std::vector<Type> rule_compare(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 2);
  const Type& a = tensor_operand(op, 0, "lhs");
  const Type& b = tensor_operand(op, 1, "rhs");
  // C1: same element type; C2: same shape.
  if (a != b) fail("compare", "operand types differ (got {} vs {})", a.str(), b.str());
  const std::string& dir = op.attrs.get_enum("comparison_direction");
  if (dir != "EQ" && dir != "NE" && dir != "GE" && dir != "GT" && dir != "LE" && dir != "LT")
    fail("compare", "unknown comparison_direction (got {}, expected EQ|NE|GE|GT|LE|LT)", dir);
  if (auto* ct = op.attrs.get_if<EnumAttr>("compare_type")) {
    // C3: SIGNED for signed ints, UNSIGNED for unsigned ints and i1, FLOAT/TOTALORDER for floats.
    const std::string& c = ct->value;
    DType t = a.dtype();
    bool ok = is_float(t)            ? (c == "FLOAT" || c == "TOTALORDER")
              : is_signed_integer(t) ? c == "SIGNED"
                                     : c == "UNSIGNED";
    if (!ok) {
      const char* want = is_float(t)            ? "FLOAT or TOTALORDER"
                         : is_signed_integer(t) ? "SIGNED"
                                                : "UNSIGNED";
      fail("compare", "compare_type does not fit {} (got {}, expected {})", dtype_name(t), c, want);
    }
  } else if (op.attrs.has("compare_type")) {
    fail("compare", "compare_type must be a comparison_type enum");
  }
  return check_given(op, given, {a.with_dtype(DType::kI1)});
}

std::vector<Type> rule_clamp(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 3);
  const Type& lo = tensor_operand(op, 0, "min");
  const Type& x = tensor_operand(op, 1, "operand");
  const Type& hi = tensor_operand(op, 2, "max");
  // C1: rank(min) = 0 or shape(min) = shape(operand); C2 likewise for max; C3: same element type.
  for (const Type* t : {&lo, &hi}) {
    if (t->dtype() != x.dtype())
      fail("clamp", "element types differ (got {} vs operand {})", t->str(), x.str());
    if (t->rank() != 0 && t->shape() != x.shape())
      fail("clamp", "min/max must be scalars or match the operand (got {}, expected {})", t->str(),
           x.str());
  }
  return check_given(op, given, {x});
}

std::vector<Type> rule_select(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 3);
  const Type& p = tensor_operand(op, 0, "pred");
  const Type& t = tensor_operand(op, 1, "on_true");
  const Type& f = tensor_operand(op, 2, "on_false");
  if (p.dtype() != DType::kI1) fail("select", "pred must be i1 (got {})", p.str());
  // C1: rank(pred) = 0 or shape(pred) = shape(on_true); C2: type(on_true) = type(on_false).
  if (p.rank() != 0 && p.shape() != t.shape())
    fail("select", "pred shape must be scalar or match on_true (got {}, expected {})", p.str(),
         t.with_dtype(DType::kI1).str());
  if (t != f) fail("select", "on_true and on_false types differ (got {} vs {})", t.str(), f.str());
  return check_given(op, given, {t});
}

}  // namespace

void register_binary_rules(InferRule* t) {
  FamilyTable<InferRule> ft(t, "verify_binary.cpp", {"binary"});
  for (OpKind k : {OpKind::kAdd, OpKind::kSubtract, OpKind::kMultiply, OpKind::kDivide,
                   OpKind::kRemainder, OpKind::kPower, OpKind::kMaximum, OpKind::kMinimum,
                   OpKind::kAtan2, OpKind::kAnd, OpKind::kOr, OpKind::kXor, OpKind::kShiftLeft,
                   OpKind::kShiftRightArithmetic, OpKind::kShiftRightLogical})
    ft.set(k, rule_binary);
  ft.set(OpKind::kCompare, rule_compare);
  ft.set(OpKind::kClamp, rule_clamp);
  ft.set(OpKind::kSelect, rule_select);
}

}  // namespace netspec::hlo
