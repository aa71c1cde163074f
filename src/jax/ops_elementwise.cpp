// JAX forms of the unary and binary families: one jax.lax call each, StableHLO semantics kept
// (round's two modes, compare's direction, select with a scalar predicate broadcast first).
#include <map>

#include "hlo/op_family.h"
#include "jax/ops.h"

namespace netspec::jax {
namespace {

using hlo::OpKind;

struct LaxFn {
  OpKind kind;
  const char* fn;
};

// Ops that are one jax.lax function of their operands, in order.
constexpr LaxFn kUnary[] = {
    {OpKind::kNegate, "lax.neg"},
    {OpKind::kAbs, "lax.abs"},
    {OpKind::kSign, "lax.sign"},
    {OpKind::kExponential, "lax.exp"},
    {OpKind::kExponentialMinusOne, "lax.expm1"},
    {OpKind::kLog, "lax.log"},
    {OpKind::kLogPlusOne, "lax.log1p"},
    {OpKind::kLogistic, "lax.logistic"},
    {OpKind::kTanh, "lax.tanh"},
    {OpKind::kErf, "lax.erf"},
    {OpKind::kSqrt, "lax.sqrt"},
    {OpKind::kRsqrt, "lax.rsqrt"},
    {OpKind::kCbrt, "lax.cbrt"},
    {OpKind::kSine, "lax.sin"},
    {OpKind::kCosine, "lax.cos"},
    {OpKind::kTan, "lax.tan"},
    {OpKind::kFloor, "lax.floor"},
    {OpKind::kCeil, "lax.ceil"},
    {OpKind::kIsFinite, "lax.is_finite"},
    {OpKind::kNot, "lax.bitwise_not"},
    {OpKind::kPopcnt, "lax.population_count"},
    {OpKind::kCountLeadingZeros, "lax.clz"},
};
constexpr LaxFn kBinary[] = {
    {OpKind::kAdd, "lax.add"},
    {OpKind::kSubtract, "lax.sub"},
    {OpKind::kMultiply, "lax.mul"},
    {OpKind::kDivide, "lax.div"},
    {OpKind::kRemainder, "lax.rem"},
    {OpKind::kPower, "lax.pow"},
    {OpKind::kMaximum, "lax.max"},
    {OpKind::kMinimum, "lax.min"},
    {OpKind::kAtan2, "lax.atan2"},
    {OpKind::kAnd, "lax.bitwise_and"},
    {OpKind::kOr, "lax.bitwise_or"},
    {OpKind::kXor, "lax.bitwise_xor"},
    {OpKind::kShiftLeft, "lax.shift_left"},
    {OpKind::kShiftRightArithmetic, "lax.shift_right_arithmetic"},
    {OpKind::kShiftRightLogical, "lax.shift_right_logical"},
};

std::string result_dtype(const hlo::Op& op) { return py_dtype(op.result()->type.dtype()); }

std::string compare(Translator& t, const hlo::Op& op) {
  static const std::map<std::string, std::string> fns{{"EQ", "lax.eq"}, {"NE", "lax.ne"},
                                                      {"LT", "lax.lt"}, {"LE", "lax.le"},
                                                      {"GT", "lax.gt"}, {"GE", "lax.ge"}};
  return fmt::format("{}({}, {})", fns.at(op.attrs.get_enum("comparison_direction")),
                     t.name(op.operand(0)), t.name(op.operand(1)));
}

std::string select(Translator& t, const hlo::Op& op) {
  const hlo::Type& rt = op.result()->type;
  if (op.operand_type(0).shape().size() != rt.shape().size())  // scalar predicate
    return fmt::format("lax.select(jnp.broadcast_to({}, {}), {}, {})", t.name(op.operand(0)),
                       py_tuple(rt.shape()), t.name(op.operand(1)), t.name(op.operand(2)));
  return fmt::format("lax.select({})", t.operands(op));
}

}  // namespace

const char* lax_binary(OpKind k) {
  for (const LaxFn& f : kBinary)
    if (f.kind == k) return f.fn;
  return nullptr;
}

void register_elementwise_ops(OpRule* t) {
  hlo::FamilyTable<OpRule> ft(t, "jax/ops_elementwise.cpp", {"unary", "binary"});
  using K = OpKind;
  for (const LaxFn& f : kUnary)
    ft.set(f.kind, translated([fn = f.fn](Translator& t, const hlo::Op& op) {
             return fmt::format("{}({})", fn, t.name(op.operand(0)));
           }));
  for (const LaxFn& f : kBinary)
    ft.set(f.kind, translated([fn = f.fn](Translator& t, const hlo::Op& op) {
             return fmt::format("{}({}, {})", fn, t.name(op.operand(0)), t.name(op.operand(1)));
           }));
  ft.set(K::kRoundNearestAfz, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.round({}, lax.RoundingMethod.AWAY_FROM_ZERO)",
                              t.name(op.operand(0)));
         }));
  ft.set(K::kRoundNearestEven, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.round({}, lax.RoundingMethod.TO_NEAREST_EVEN)",
                              t.name(op.operand(0)));
         }));
  ft.set(K::kConvert, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.convert_element_type({}, {})", t.name(op.operand(0)),
                              result_dtype(op));
         }));
  ft.set(K::kBitcastConvert, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.bitcast_convert_type({}, {})", t.name(op.operand(0)),
                              result_dtype(op));
         }));
  ft.set(K::kReducePrecision, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.reduce_precision({}, exponent_bits={}, mantissa_bits={})",
                              t.name(op.operand(0)), op.attrs.get_int("exponent_bits"),
                              op.attrs.get_int("mantissa_bits"));
         }));
  ft.set(K::kCompare, translated(compare));
  ft.set(K::kClamp, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.clamp({})", t.operands(op));
         }));
  ft.set(K::kSelect, translated(select));
}

}  // namespace netspec::jax
