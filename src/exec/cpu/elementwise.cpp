// Fast elementwise kernels: the element type is dispatched once at plan time, then a tight loop
// (one functor, no per-element switch) runs on the thread pool. Float math uses the same C
// library calls as the ref kernels so both executors agree bit for bit; integer + - * wrap
// through unsigned arithmetic. Cases with subtle semantics (integer division, shifts, power,
// float->int convert, TOTALORDER compare, ...) stay on the ref kernels.
#include <cmath>
#include <type_traits>

#include "core/thread_pool.h"
#include "exec/cpu/kernels.h"

namespace netspec::exec::cpu {
namespace {

using hlo::OpKind;

template <typename T, typename R, typename F>
Compiled make_unary(F f, int64_t grain) {
  Compiled c;
  c.pointwise = sizeof(T) == sizeof(R);
  c.run = [f, grain](const RunArgs& a) {
    const T* x = a.in[0]->data<T>();
    R* o = a.out[0]->data<R>();
    parallel_for(a.out[0]->numel(), grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = f(x[i]);
    });
  };
  return c;
}

template <typename T, typename R, typename F>
Compiled make_binary(F f, int64_t grain) {
  Compiled c;
  c.pointwise = sizeof(T) == sizeof(R);
  c.run = [f, grain](const RunArgs& a) {
    const T* x = a.in[0]->data<T>();
    const T* y = a.in[1]->data<T>();
    R* o = a.out[0]->data<R>();
    parallel_for(a.out[0]->numel(), grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = f(x[i], y[i]);
    });
  };
  return c;
}

// ---- unary float functors (same expressions as ref/unary.cpp) ----
#define UNARY_F(NAME, EXPR)        \
  struct NAME {                    \
    template <typename T>          \
    T operator()(T x) const {      \
      return static_cast<T>(EXPR); \
    }                              \
  };
UNARY_F(FNeg, -x)
UNARY_F(FAbs, std::fabs(x))
UNARY_F(FExp, std::exp(x))
UNARY_F(FExpm1, std::expm1(x))
UNARY_F(FLog, std::log(x))
UNARY_F(FLog1p, std::log1p(x))
UNARY_F(FLogistic, T(1) / (T(1) + std::exp(-x)))
UNARY_F(FTanh, std::tanh(x))
UNARY_F(FSqrt, std::sqrt(x))
UNARY_F(FRsqrt, T(1) / std::sqrt(x))
UNARY_F(FCbrt, std::cbrt(x))
UNARY_F(FSin, std::sin(x))
UNARY_F(FCos, std::cos(x))
UNARY_F(FTan, std::tan(x))
UNARY_F(FFloor, std::floor(x))
UNARY_F(FCeil, std::ceil(x))
UNARY_F(FRoundAfz, std::round(x))
UNARY_F(FRoundEven, std::nearbyint(x))
#undef UNARY_F

template <typename F, bool kCheap>
std::optional<Compiled> compile_float_unary(const hlo::Op& op) {
  const int64_t g = kCheap ? kGrainCheap : kGrainHeavy;
  DType t = op.operand_type(0).dtype();
  if (op.result(0)->type.dtype() != t) return std::nullopt;
  if (t == DType::kF32) return make_unary<float, float>(F{}, g);
  if (t == DType::kF64) return make_unary<double, double>(F{}, g);
  return std::nullopt;
}

std::optional<Compiled> compile_is_finite(const hlo::Op& op) {
  DType t = op.operand_type(0).dtype();
  auto f = [](auto x) -> bool { return std::isfinite(x); };
  if (t == DType::kF32) return make_unary<float, bool>(f, kGrainCheap);
  if (t == DType::kF64) return make_unary<double, bool>(f, kGrainCheap);
  return std::nullopt;
}

std::optional<Compiled> compile_not(const hlo::Op& op) {
  DType t = op.operand_type(0).dtype();
  if (t == DType::kI1) return make_unary<bool, bool>([](bool x) { return !x; }, kGrainCheap);
  auto bit_not = [](auto x) -> decltype(x) { return static_cast<decltype(x)>(~x); };
  switch (t) {
    case DType::kI32:
      return make_unary<int32_t, int32_t>(bit_not, kGrainCheap);
    case DType::kI64:
      return make_unary<int64_t, int64_t>(bit_not, kGrainCheap);
    case DType::kUI32:
      return make_unary<uint32_t, uint32_t>(bit_not, kGrainCheap);
    case DType::kUI64:
      return make_unary<uint64_t, uint64_t>(bit_not, kGrainCheap);
    default:
      return std::nullopt;
  }
}

// convert: float<->float, integer/bool -> float, float/integer -> i1 (x != 0).
template <typename From>
std::optional<Compiled> convert_from(DType to) {
  auto cast_f = [](From x) { return static_cast<float>(x); };
  auto cast_d = [](From x) { return static_cast<double>(x); };
  auto to_bool = [](From x) -> bool { return x != From(0); };
  switch (to) {
    case DType::kF32:
      return make_unary<From, float>(cast_f, kGrainCheap);
    case DType::kF64:
      return make_unary<From, double>(cast_d, kGrainCheap);
    case DType::kI1:
      return make_unary<From, bool>(to_bool, kGrainCheap);
    default:
      return std::nullopt;
  }
}

std::optional<Compiled> compile_convert(const hlo::Op& op) {
  DType from = op.operand_type(0).dtype(), to = op.result(0)->type.dtype();
  switch (from) {
    case DType::kF32:
      return convert_from<float>(to);
    case DType::kF64:
      return convert_from<double>(to);
    case DType::kI32:
      return convert_from<int32_t>(to);
    case DType::kI64:
      return convert_from<int64_t>(to);
    case DType::kUI32:
      return convert_from<uint32_t>(to);
    case DType::kUI8:
      return convert_from<uint8_t>(to);
    case DType::kI1: {
      if (to == DType::kI1) return std::nullopt;
      return convert_from<bool>(to);
    }
    default:
      return std::nullopt;
  }
}

// ---- binary ----
// IEEE maximum/minimum: NaN if either is NaN, and -0 < +0.
struct FMax {
  template <typename T>
  T operator()(T a, T b) const {
    if (std::isnan(a) || std::isnan(b)) return a + b;
    if (a == b) return std::signbit(a) ? b : a;
    return a > b ? a : b;
  }
};
struct FMin {
  template <typename T>
  T operator()(T a, T b) const {
    if (std::isnan(a) || std::isnan(b)) return a + b;
    if (a == b) return std::signbit(a) ? a : b;
    return a < b ? a : b;
  }
};

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

template <OpKind K>
std::optional<Compiled> compile_binary(const hlo::Op& op) {
  DType t = op.operand_type(0).dtype();
  if (op.operand_type(1).dtype() != t || op.result(0)->type.dtype() != t) return std::nullopt;
  constexpr int64_t g = kGrainCheap;
  auto for_float = [&](auto z) -> std::optional<Compiled> {
    using T = decltype(z);
    if constexpr (K == OpKind::kAdd) return make_binary<T, T>([](T a, T b) { return a + b; }, g);
    if constexpr (K == OpKind::kSubtract)
      return make_binary<T, T>([](T a, T b) { return a - b; }, g);
    if constexpr (K == OpKind::kMultiply)
      return make_binary<T, T>([](T a, T b) { return a * b; }, g);
    if constexpr (K == OpKind::kDivide) return make_binary<T, T>([](T a, T b) { return a / b; }, g);
    if constexpr (K == OpKind::kMaximum) return make_binary<T, T>(FMax{}, g);
    if constexpr (K == OpKind::kMinimum) return make_binary<T, T>(FMin{}, g);
    return std::nullopt;
  };
  auto for_int = [&](auto z) -> std::optional<Compiled> {
    using T = decltype(z);
    using U = Unsigned<T>;
    if constexpr (K == OpKind::kAdd)
      return make_binary<T, T>([](T a, T b) { return T(U(a) + U(b)); }, g);
    if constexpr (K == OpKind::kSubtract)
      return make_binary<T, T>([](T a, T b) { return T(U(a) - U(b)); }, g);
    if constexpr (K == OpKind::kMultiply)
      return make_binary<T, T>([](T a, T b) { return T(U(a) * U(b)); }, g);
    if constexpr (K == OpKind::kMaximum)
      return make_binary<T, T>([](T a, T b) { return a > b ? a : b; }, g);
    if constexpr (K == OpKind::kMinimum)
      return make_binary<T, T>([](T a, T b) { return a < b ? a : b; }, g);
    if constexpr (K == OpKind::kAnd) return make_binary<T, T>([](T a, T b) { return T(a & b); }, g);
    if constexpr (K == OpKind::kOr) return make_binary<T, T>([](T a, T b) { return T(a | b); }, g);
    if constexpr (K == OpKind::kXor) return make_binary<T, T>([](T a, T b) { return T(a ^ b); }, g);
    return std::nullopt;
  };
  switch (t) {
    case DType::kF32:
      return for_float(float{});
    case DType::kF64:
      return for_float(double{});
    case DType::kI32:
      return for_int(int32_t{});
    case DType::kI64:
      return for_int(int64_t{});
    case DType::kUI32:
      return for_int(uint32_t{});
    case DType::kUI64:
      return for_int(uint64_t{});
    case DType::kI1:
      if constexpr (K == OpKind::kAnd)
        return make_binary<bool, bool>([](bool a, bool b) { return a && b; }, g);
      if constexpr (K == OpKind::kOr)
        return make_binary<bool, bool>([](bool a, bool b) { return a || b; }, g);
      if constexpr (K == OpKind::kXor)
        return make_binary<bool, bool>([](bool a, bool b) { return a != b; }, g);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

template <typename T>
std::optional<Compiled> compare_typed(const std::string& dir) {
  constexpr int64_t g = kGrainCheap;
  if (dir == "EQ") return make_binary<T, bool>([](T a, T b) { return a == b; }, g);
  if (dir == "NE") return make_binary<T, bool>([](T a, T b) { return a != b; }, g);
  if (dir == "LT") return make_binary<T, bool>([](T a, T b) { return a < b; }, g);
  if (dir == "LE") return make_binary<T, bool>([](T a, T b) { return a <= b; }, g);
  if (dir == "GT") return make_binary<T, bool>([](T a, T b) { return a > b; }, g);
  if (dir == "GE") return make_binary<T, bool>([](T a, T b) { return a >= b; }, g);
  return std::nullopt;
}

// compare with the element type's natural compare_type (FLOAT, SIGNED, UNSIGNED).
std::optional<Compiled> compile_compare(const hlo::Op& op) {
  auto* dir = op.attrs.get_if<hlo::EnumAttr>("comparison_direction");
  if (!dir) return std::nullopt;
  std::string ct;
  if (auto* c = op.attrs.get_if<hlo::EnumAttr>("compare_type")) ct = c->value;
  DType t = op.operand_type(0).dtype();
  if (is_float(t) && !(ct.empty() || ct == "FLOAT")) return std::nullopt;
  if (is_signed_integer(t) && !(ct.empty() || ct == "SIGNED")) return std::nullopt;
  if (is_unsigned_integer(t) && !(ct.empty() || ct == "UNSIGNED")) return std::nullopt;
  switch (t) {
    case DType::kF32:
      return compare_typed<float>(dir->value);
    case DType::kF64:
      return compare_typed<double>(dir->value);
    case DType::kI32:
      return compare_typed<int32_t>(dir->value);
    case DType::kI64:
      return compare_typed<int64_t>(dir->value);
    case DType::kUI32:
      return compare_typed<uint32_t>(dir->value);
    case DType::kUI64:
      return compare_typed<uint64_t>(dir->value);
    default:
      return std::nullopt;
  }
}

// select(pred, a, b): pred is a scalar or has the result's shape.
template <typename T>
Compiled make_select(bool scalar_pred) {
  Compiled c;
  c.run = [scalar_pred](const RunArgs& a) {
    const bool* p = a.in[0]->data<bool>();
    const T* x = a.in[1]->data<T>();
    const T* y = a.in[2]->data<T>();
    T* o = a.out[0]->data<T>();
    if (scalar_pred) {
      const T* src = p[0] ? x : y;
      if (src != o) std::memcpy(o, src, static_cast<size_t>(a.out[0]->numel()) * sizeof(T));
      return;
    }
    parallel_for(a.out[0]->numel(), kGrainCheap, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = p[i] ? x[i] : y[i];
    });
  };
  c.pointwise = true;
  return c;
}

std::optional<Compiled> compile_select(const hlo::Op& op) {
  bool scalar_pred = op.operand_type(0).rank() == 0 && op.result(0)->type.rank() != 0;
  if (op.operand_type(0).dtype() != DType::kI1) return std::nullopt;
  switch (dtype_size(op.result(0)->type.dtype())) {
    case 1:
      return make_select<uint8_t>(scalar_pred);
    case 2:
      return make_select<uint16_t>(scalar_pred);
    case 4:
      return make_select<uint32_t>(scalar_pred);
    case 8:
      return make_select<uint64_t>(scalar_pred);
    default:
      return std::nullopt;
  }
}

// clamp(min, x, max) = minimum(maximum(x, min), max) on f32; min / max may be 0-d.
std::optional<Compiled> compile_clamp(const hlo::Op& op) {
  const hlo::Type& r = op.result(0)->type;
  if (r.dtype() != DType::kF32) return std::nullopt;
  bool scalar[3] = {false, false, false};
  for (size_t i = 0; i < 3; ++i) {
    const hlo::Type& t = op.operand_type(i);
    if (t.dtype() != DType::kF32) return std::nullopt;
    scalar[i] = t.rank() == 0 && r.rank() != 0;
    if (!scalar[i] && t.shape() != r.shape()) return std::nullopt;
  }
  if (scalar[1]) return std::nullopt;
  Compiled c;
  c.pointwise = true;
  const bool sl = scalar[0], sh = scalar[2];
  c.run = [sl, sh](const RunArgs& a) {
    const float* lo = a.in[0]->data<float>();
    const float* x = a.in[1]->data<float>();
    const float* hi = a.in[2]->data<float>();
    float* o = a.out[0]->data<float>();
    parallel_for(a.out[0]->numel(), kGrainCheap, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = FMin{}(FMax{}(x[i], lo[sl ? 0 : i]), hi[sh ? 0 : i]);
    });
  };
  return c;
}

}  // namespace

void register_elementwise(Compiler* t) {
  auto set = [&](OpKind k, Compiler c) { t[static_cast<size_t>(k)] = c; };
  set(OpKind::kNegate, compile_float_unary<FNeg, true>);
  set(OpKind::kAbs, compile_float_unary<FAbs, true>);
  set(OpKind::kExponential, compile_float_unary<FExp, false>);
  set(OpKind::kExponentialMinusOne, compile_float_unary<FExpm1, false>);
  set(OpKind::kLog, compile_float_unary<FLog, false>);
  set(OpKind::kLogPlusOne, compile_float_unary<FLog1p, false>);
  set(OpKind::kLogistic, compile_float_unary<FLogistic, false>);
  set(OpKind::kTanh, compile_float_unary<FTanh, false>);
  set(OpKind::kSqrt, compile_float_unary<FSqrt, true>);
  set(OpKind::kRsqrt, compile_float_unary<FRsqrt, true>);
  set(OpKind::kCbrt, compile_float_unary<FCbrt, false>);
  set(OpKind::kSine, compile_float_unary<FSin, false>);
  set(OpKind::kCosine, compile_float_unary<FCos, false>);
  set(OpKind::kTan, compile_float_unary<FTan, false>);
  set(OpKind::kFloor, compile_float_unary<FFloor, true>);
  set(OpKind::kCeil, compile_float_unary<FCeil, true>);
  set(OpKind::kRoundNearestAfz, compile_float_unary<FRoundAfz, true>);
  set(OpKind::kRoundNearestEven, compile_float_unary<FRoundEven, true>);
  set(OpKind::kIsFinite, compile_is_finite);
  set(OpKind::kNot, compile_not);
  set(OpKind::kConvert, compile_convert);
  set(OpKind::kAdd, compile_binary<OpKind::kAdd>);
  set(OpKind::kSubtract, compile_binary<OpKind::kSubtract>);
  set(OpKind::kMultiply, compile_binary<OpKind::kMultiply>);
  set(OpKind::kDivide, compile_binary<OpKind::kDivide>);
  set(OpKind::kMaximum, compile_binary<OpKind::kMaximum>);
  set(OpKind::kMinimum, compile_binary<OpKind::kMinimum>);
  set(OpKind::kAnd, compile_binary<OpKind::kAnd>);
  set(OpKind::kOr, compile_binary<OpKind::kOr>);
  set(OpKind::kXor, compile_binary<OpKind::kXor>);
  set(OpKind::kCompare, compile_compare);
  set(OpKind::kSelect, compile_select);
  set(OpKind::kClamp, compile_clamp);
}

}  // namespace netspec::exec::cpu
