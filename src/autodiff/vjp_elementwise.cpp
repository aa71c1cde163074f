// VJP rules of the elementwise families (unary, binary, logic, select/clamp, convert). Each rule
// states its formula; y is the op's result, dy its cotangent.
#include "autodiff/rules.h"
#include "hlo/op_family.h"

namespace netspec::autodiff {
namespace {

using hlo::OpKind;
using hlo::Value;
using V = std::vector<Value*>;

// Shorthands for the rules below.
struct E {
  VjpCtx& c;
  hlo::Builder& b;
  explicit E(VjpCtx& ctx) : c(ctx), b(ctx.b) {}
  Value* x(size_t i = 0) const { return c.x(i); }
  Value* y() const { return c.y(); }
  Value* dy() const { return c.dy[0]; }
  Value* k(double v) const { return splat_like(b, v, c.y()); }
  Value* mul(Value* a, Value* z) { return b.multiply(a, z); }
  Value* div(Value* a, Value* z) { return b.divide(a, z); }
  Value* neg(Value* a) { return b.negate(a); }
  Value* zero_where_not(Value* pred, Value* v) { return b.select(pred, v, k(0)); }
};

// --- unary ---
V negate(VjpCtx& c) {
  E e(c);
  return {e.neg(e.dy())};
}  // dx = -dy
V abs(VjpCtx& c) {
  E e(c);
  return {e.mul(e.dy(), e.b.sign(e.x()))};
}  // dx = dy·sign(x)
V exponential(VjpCtx& c) {
  E e(c);
  return {e.mul(e.dy(), e.y())};
}  // dx = dy·y
V expm1(VjpCtx& c) {
  E e(c);
  return {e.mul(e.dy(), e.b.add(e.y(), e.k(1)))};
}  // dx = dy·(y+1)
V log(VjpCtx& c) {
  E e(c);
  return {e.div(e.dy(), e.x())};
}  // dx = dy/x
V log1p(VjpCtx& c) {
  E e(c);
  return {e.div(e.dy(), e.b.add(e.x(), e.k(1)))};
}  // dx = dy/(1+x)
V logistic(VjpCtx& c) {  // dx = dy·y·(1-y)
  E e(c);
  return {e.mul(e.dy(), e.mul(e.y(), e.b.subtract(e.k(1), e.y())))};
}
V tanh(VjpCtx& c) {  // dx = dy·(1-y²)
  E e(c);
  return {e.mul(e.dy(), e.b.subtract(e.k(1), e.mul(e.y(), e.y())))};
}
V erf(VjpCtx& c) {  // dx = dy·(2/√π)·e^(−x²)
  E e(c);
  Value* x = e.x();
  Value* t = e.b.exponential(e.b.negate(e.mul(x, x)));
  if (c.y()->type.dtype() != DType::kF32) return {e.mul(e.dy(), e.mul(e.k(M_2_SQRTPI), t))};
  // In f32, 2/√π as hi + lo (hi its f32 rounding): an f32 module widened to f64 (emit --dtype
  // f64, gradcheck) keeps the constant to f64 precision, as JAX's own f64 gradient has it.
  const double hi = static_cast<float>(M_2_SQRTPI);
  return {e.mul(e.dy(), e.b.add(e.mul(e.k(hi), t), e.mul(e.k(M_2_SQRTPI - hi), t)))};
}
V sqrt(VjpCtx& c) {
  E e(c);
  return {e.div(e.mul(e.dy(), e.k(0.5)), e.y())};
}  // dx = dy·0.5/y
V rsqrt(VjpCtx& c) {  // y = x^-1/2: dx = dy·(-0.5)·y/x
  E e(c);
  return {e.mul(e.mul(e.dy(), e.k(-0.5)), e.div(e.y(), e.x()))};
}
V cbrt(VjpCtx& c) {  // y = x^1/3: dx = dy·y/(3x)
  E e(c);
  return {e.div(e.mul(e.dy(), e.y()), e.mul(e.x(), e.k(3)))};
}
V sine(VjpCtx& c) {
  E e(c);
  return {e.mul(e.dy(), e.b.cosine(e.x()))};
}  // dx = dy·cos x
V cosine(VjpCtx& c) {
  E e(c);
  return {e.neg(e.mul(e.dy(), e.b.sine(e.x())))};
}  // dx = -dy·sin x
V tan(VjpCtx& c) {  // dx = dy·(1+y²)
  E e(c);
  return {e.mul(e.dy(), e.b.add(e.k(1), e.mul(e.y(), e.y())))};
}
V identity(VjpCtx& c) { return {c.dy[0]}; }  // reduce_precision: dx = dy (straight through)
V convert(VjpCtx& c) {                       // float -> float: dx = convert(dy) back to x's type
  if (!c.wants[0]) return {nullptr};
  return {c.b.convert(c.dy[0], c.x(0)->type.dtype())};
}

// --- binary ---
V add(VjpCtx& c) { return {c.dy[0], c.dy[0]}; }  // da = db = dy
V subtract(VjpCtx& c) {
  E e(c);
  return {e.dy(), c.wants[1] ? e.neg(e.dy()) : nullptr};
}  // db = -dy
V multiply(VjpCtx& c) {  // da = dy·b, db = dy·a
  E e(c);
  return {c.wants[0] ? e.mul(e.dy(), e.x(1)) : nullptr,
          c.wants[1] ? e.mul(e.dy(), e.x(0)) : nullptr};
}
V divide(VjpCtx& c) {  // da = dy/b, db = -dy·y/b
  E e(c);
  Value* da = e.div(e.dy(), e.x(1));
  return {c.wants[0] ? da : nullptr, c.wants[1] ? e.neg(e.mul(da, e.y())) : nullptr};
}
V remainder(VjpCtx& c) {  // y = a - b·trunc(a/b): da = dy, db = -dy·(a-y)/b
  E e(c);
  Value* db =
      c.wants[1] ? e.neg(e.mul(e.dy(), e.div(e.b.subtract(e.x(0), e.y()), e.x(1)))) : nullptr;
  return {e.dy(), db};
}
V power(VjpCtx& c) {  // da = dy·b·a^(b-1), db = dy·y·log(a)
  E e(c);
  Value* da = nullptr;
  Value* db = nullptr;
  if (c.wants[0])
    da = e.mul(e.dy(), e.mul(e.x(1), e.b.power(e.x(0), e.b.subtract(e.x(1), e.k(1)))));
  if (c.wants[1]) db = e.mul(e.dy(), e.mul(e.y(), e.b.log(e.x(0))));
  return {da, db};
}
// Ties go to b, so that relu = max(x, 0) has relu'(0) = 0 and relu6's min(·, 6) has 0 at 6, as
// PyTorch's threshold/hardtanh backward (JAX splits a tie 0.5/0.5). The mask reads the result:
// a > b <=> max(a, b) > b (NaNs too: both false), so relu's backward keeps its output (which the
// next layer's weight gradient keeps anyway), not its input.
V maximum(VjpCtx& c) {  // da = dy·[a > b] = dy·[y > b], db = dy·[y <= b]
  E e(c);
  Value* gt = e.b.compare(e.y(), e.x(1), "GT");
  return {c.wants[0] ? e.zero_where_not(gt, e.dy()) : nullptr,
          c.wants[1] ? e.b.select(gt, e.k(0), e.dy()) : nullptr};
}
V minimum(VjpCtx& c) {  // da = dy·[a < b] = dy·[y < b], db = dy·[y >= b]
  E e(c);
  Value* lt = e.b.compare(e.y(), e.x(1), "LT");
  return {c.wants[0] ? e.zero_where_not(lt, e.dy()) : nullptr,
          c.wants[1] ? e.b.select(lt, e.k(0), e.dy()) : nullptr};
}
V atan2(VjpCtx& c) {  // y = atan(a/b): da = dy·b/(a²+b²), db = -dy·a/(a²+b²)
  E e(c);
  Value* r = e.div(e.dy(), e.b.add(e.mul(e.x(0), e.x(0)), e.mul(e.x(1), e.x(1))));
  return {c.wants[0] ? e.mul(r, e.x(1)) : nullptr, c.wants[1] ? e.neg(e.mul(r, e.x(0))) : nullptr};
}
V select(VjpCtx& c) {  // dt = dy·[p], df = dy·[!p]
  E e(c);
  Value* p = e.x(0);
  return {nullptr, c.wants[1] ? e.b.select(p, e.dy(), e.k(0)) : nullptr,
          c.wants[2] ? e.b.select(p, e.k(0), e.dy()) : nullptr};
}
// clamp(lo, x, hi): dx = dy·[lo <= x <= hi], dlo = dy·[x < lo], dhi = dy·[x > hi]; a scalar
// bound's cotangent is summed over all elements.
V clamp(VjpCtx& c) {
  E e(c);
  Value* x = e.x(1);
  auto full = [&](Value* v) {
    return v->type.rank() == 0 && x->type.rank() > 0 ? e.b.broadcast_in_dim(v, x->type.shape(), {})
                                                     : v;
  };
  Value* lo = full(e.x(0));
  Value* hi = full(e.x(2));
  Value* below = e.b.compare(x, lo, "LT");
  Value* above = e.b.compare(x, hi, "GT");
  auto bound = [&](Value* mask, size_t i) -> Value* {
    if (!c.wants[i]) return nullptr;
    Value* g = e.zero_where_not(mask, e.dy());
    return e.x(i)->type.rank() == 0 && x->type.rank() > 0 ? sum_all(e.b, g) : g;
  };
  Value* dx = nullptr;
  if (c.wants[1]) dx = e.b.select(e.b.or_(below, above), e.k(0), e.dy());
  return {bound(below, 0), dx, bound(above, 2)};
}

}  // namespace

void register_elementwise_vjps(VjpRule* t) {
  hlo::FamilyTable<VjpRule> ft(t, "vjp_elementwise.cpp", {"unary", "binary"});
  ft.set(OpKind::kNegate, negate);
  ft.set(OpKind::kAbs, abs);
  ft.set(OpKind::kExponential, exponential);
  ft.set(OpKind::kExponentialMinusOne, expm1);
  ft.set(OpKind::kLog, log);
  ft.set(OpKind::kLogPlusOne, log1p);
  ft.set(OpKind::kLogistic, logistic);
  ft.set(OpKind::kTanh, tanh);
  ft.set(OpKind::kErf, erf);
  ft.set(OpKind::kSqrt, sqrt);
  ft.set(OpKind::kRsqrt, rsqrt);
  ft.set(OpKind::kCbrt, cbrt);
  ft.set(OpKind::kSine, sine);
  ft.set(OpKind::kCosine, cosine);
  ft.set(OpKind::kTan, tan);
  ft.set(OpKind::kReducePrecision, identity);
  ft.set(OpKind::kConvert, convert);
  // Piecewise constant or non-float: zero cotangent (dy does not reach the operands).
  for (OpKind k : {OpKind::kSign, OpKind::kFloor, OpKind::kCeil, OpKind::kRoundNearestAfz,
                   OpKind::kRoundNearestEven, OpKind::kIsFinite, OpKind::kNot, OpKind::kPopcnt,
                   OpKind::kCountLeadingZeros, OpKind::kBitcastConvert, OpKind::kAnd, OpKind::kOr,
                   OpKind::kXor, OpKind::kShiftLeft, OpKind::kShiftRightArithmetic,
                   OpKind::kShiftRightLogical, OpKind::kCompare})
    ft.set(k, no_grad);
  ft.set(OpKind::kAdd, add);
  ft.set(OpKind::kSubtract, subtract);
  ft.set(OpKind::kMultiply, multiply);
  ft.set(OpKind::kDivide, divide);
  ft.set(OpKind::kRemainder, remainder);
  ft.set(OpKind::kPower, power);
  ft.set(OpKind::kMaximum, maximum);
  ft.set(OpKind::kMinimum, minimum);
  ft.set(OpKind::kAtan2, atan2);
  ft.set(OpKind::kSelect, select);
  ft.set(OpKind::kClamp, clamp);
}

}  // namespace netspec::autodiff
