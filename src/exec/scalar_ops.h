// The scalar math of the elementwise ops, written once: the ref kernels, the cpu executor's
// elementwise, reduce and pooling kernels and its fused loops all instantiate Scalar<K>::apply
// (inline templates per OpKind, so the cpu loops still vectorise). Integers wrap modulo 2^N;
// where the spec is open we follow XLA: x / 0 = -1, x % 0 = x, INT_MIN / -1 = INT_MIN,
// INT_MIN % -1 = 0; maximum/minimum return the first NaN operand and order -0 < +0.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>

#include "core/dtype.h"
#include "exec/erf_f32.h"
#include "hlo/ir.h"

namespace netspec::exec {

// The element types an op's scalar math is defined on; kernels refuse the others by name.
enum class Domain : uint8_t { kFloat, kInt, kIntOrBool, kNotBool, kAny };

template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <Domain D, typename T>
constexpr bool in_domain() {
  if constexpr (D == Domain::kFloat) return std::is_floating_point_v<T>;
  if constexpr (D == Domain::kInt) return kIsInt<T>;
  if constexpr (D == Domain::kIntOrBool) return std::is_integral_v<T>;
  if constexpr (D == Domain::kNotBool) return !std::is_same_v<T, bool>;
  return true;
}
inline bool in_domain(Domain d, DType t) {
  switch (d) {
    case Domain::kFloat:
      return is_float(t);
    case Domain::kInt:
      return is_integer(t);
    case Domain::kIntOrBool:
      return is_integer(t) || is_bool(t);
    case Domain::kNotBool:
      return !is_bool(t);
    case Domain::kAny:
      return true;
  }
  return false;
}

template <typename T>
using Unsigned = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;

// Scalar<K>: kDomain and `static R apply(T...)` for each op below; undefined for other kinds.
template <hlo::OpKind K>
struct Scalar;

// An op whose math is one expression of x (unary) or a, b (binary) in the element type T.
#define NETSPEC_SCALAR_UNARY(KIND, DOMAIN, EXPR)      \
  template <>                                         \
  struct Scalar<hlo::OpKind::KIND> {                  \
    static constexpr Domain kDomain = Domain::DOMAIN; \
    template <typename T>                             \
    static auto apply(T x) {                          \
      return EXPR;                                    \
    }                                                 \
  }
#define NETSPEC_SCALAR_BINARY(KIND, DOMAIN, EXPR)     \
  template <>                                         \
  struct Scalar<hlo::OpKind::KIND> {                  \
    static constexpr Domain kDomain = Domain::DOMAIN; \
    template <typename T>                             \
    static T apply(T a, T b) {                        \
      return EXPR;                                    \
    }                                                 \
  }
#define NETSPEC_FLOAT_UNARY(KIND, EXPR) NETSPEC_SCALAR_UNARY(KIND, kFloat, static_cast<T>(EXPR))

NETSPEC_FLOAT_UNARY(kExponential, std::exp(x));
NETSPEC_FLOAT_UNARY(kExponentialMinusOne, std::expm1(x));
NETSPEC_FLOAT_UNARY(kLog, std::log(x));
NETSPEC_FLOAT_UNARY(kLogPlusOne, std::log1p(x));
NETSPEC_FLOAT_UNARY(kLogistic, T(1) / (T(1) + std::exp(-x)));  // 1 / (1 + e^-x)
NETSPEC_FLOAT_UNARY(kTanh, std::tanh(x));
NETSPEC_FLOAT_UNARY(kSqrt, std::sqrt(x));
NETSPEC_FLOAT_UNARY(kRsqrt, T(1) / std::sqrt(x));
NETSPEC_FLOAT_UNARY(kCbrt, std::cbrt(x));

// erf: f32 (and narrower) XLA's rational form (exec/erf_f32.h), Horner steps as fma so every
// build rounds alike (vmath_impl.h's vector erf is the same sequence); f64: std::erf.
template <>
struct Scalar<hlo::OpKind::kErf> {
  static constexpr Domain kDomain = Domain::kFloat;
  template <typename T>
  static T apply(T x) {
    if constexpr (std::is_same_v<T, double>) {
      return std::erf(x);
    } else {
      const float v = static_cast<float>(x);
      const float c = v < -4.f ? -4.f : (v > 4.f ? 4.f : v);  // NaN stays NaN
      const float z = c * c;
      float p = kErfP[0], q = kErfQ[0];
      for (int i = 1; i < kErfPLen; ++i) p = __builtin_fmaf(p, z, kErfP[i]);
      for (int i = 1; i < kErfQLen; ++i) q = __builtin_fmaf(q, z, kErfQ[i]);
      return static_cast<T>(c * p / q);
    }
  }
};
NETSPEC_FLOAT_UNARY(kSine, std::sin(x));
NETSPEC_FLOAT_UNARY(kCosine, std::cos(x));
NETSPEC_FLOAT_UNARY(kTan, std::tan(x));
NETSPEC_FLOAT_UNARY(kFloor, std::floor(x));
NETSPEC_FLOAT_UNARY(kCeil, std::ceil(x));
NETSPEC_FLOAT_UNARY(kRoundNearestAfz, std::round(x));       // ties away from zero: 2.5 -> 3
NETSPEC_FLOAT_UNARY(kRoundNearestEven, std::nearbyint(x));  // default FE_TONEAREST: 2.5 -> 2

// negate: integers wrap (-INT_MIN = INT_MIN); unsigned is 2^N - x.
template <>
struct Scalar<hlo::OpKind::kNegate> {
  static constexpr Domain kDomain = Domain::kNotBool;
  template <typename T>
  static T apply(T x) {
    if constexpr (kIsInt<T>)
      return static_cast<T>(Unsigned<T>(0) - static_cast<Unsigned<T>>(x));
    else
      return -x;
  }
};
// abs: |x|; abs(INT_MIN) wraps to INT_MIN; abs(-0.0) = +0.0, abs(NaN) = NaN.
template <>
struct Scalar<hlo::OpKind::kAbs> {
  static constexpr Domain kDomain = Domain::kNotBool;
  template <typename T>
  static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<T>)
      return x < 0 ? static_cast<T>(Unsigned<T>(0) - static_cast<Unsigned<T>>(x)) : x;
    else
      return x;
  }
};
// sign: -1, 0, 1; floats keep the sign of zero and NaN stays NaN.
template <>
struct Scalar<hlo::OpKind::kSign> {
  static constexpr Domain kDomain = Domain::kNotBool;
  template <typename T>
  static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x) || x == T(0)) return x;
      return x < 0 ? T(-1) : T(1);
    } else {
      return x < T(0) ? static_cast<T>(-1) : (x == T(0) ? T(0) : T(1));
    }
  }
};
// is_finite: true unless inf or NaN.
NETSPEC_SCALAR_UNARY(kIsFinite, kFloat, static_cast<bool>(std::isfinite(x)));
// not: logical not for i1, bitwise not for integers.
template <>
struct Scalar<hlo::OpKind::kNot> {
  static constexpr Domain kDomain = Domain::kIntOrBool;
  template <typename T>
  static T apply(T x) {
    if constexpr (std::is_same_v<T, bool>)
      return !x;
    else
      return static_cast<T>(~x);
  }
};
// popcnt: number of set bits of the two's complement pattern.
NETSPEC_SCALAR_UNARY(kPopcnt, kInt, static_cast<T>(std::popcount(static_cast<Unsigned<T>>(x))));
// count_leading_zeros: leading zero bits (the bit width for 0).
NETSPEC_SCALAR_UNARY(kCountLeadingZeros, kInt,
                     static_cast<T>(std::countl_zero(static_cast<Unsigned<T>>(x))));

// ---- binary ----
template <>
struct Scalar<hlo::OpKind::kAdd> {
  static constexpr Domain kDomain = Domain::kAny;
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a || b;  // i1 add is logical or
    else if constexpr (kIsInt<T>)
      return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
    else
      return a + b;
  }
};
template <>
struct Scalar<hlo::OpKind::kSubtract> {
  static constexpr Domain kDomain = Domain::kNotBool;
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (kIsInt<T>)
      return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
    else
      return static_cast<T>(a - b);
  }
};
template <>
struct Scalar<hlo::OpKind::kMultiply> {
  static constexpr Domain kDomain = Domain::kAny;
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) {
      return a && b;  // i1 multiply is logical and
    } else if constexpr (kIsInt<T>) {
      // Promote narrow types to unsigned int first so the product cannot overflow a signed int.
      using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, Unsigned<T>>;
      return static_cast<T>(static_cast<U>(static_cast<Unsigned<T>>(a)) *
                            static_cast<U>(static_cast<Unsigned<T>>(b)));
    } else {
      return a * b;
    }
  }
};
// x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN (XLA semantics).
template <>
struct Scalar<hlo::OpKind::kDivide> {
  static constexpr Domain kDomain = Domain::kNotBool;
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (kIsInt<T>) {
      if (b == 0) return static_cast<T>(-1);
      if constexpr (std::is_signed_v<T>)
        if (a == std::numeric_limits<T>::min() && b == -1) return a;
      return static_cast<T>(a / b);
    } else {
      return static_cast<T>(a / b);
    }
  }
};
// x % 0 = x, INT_MIN % -1 = 0; floats: fmod (sign of the dividend).
template <>
struct Scalar<hlo::OpKind::kRemainder> {
  static constexpr Domain kDomain = Domain::kNotBool;
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(a, b);
    } else {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<T>)
        if (a == std::numeric_limits<T>::min() && b == -1) return 0;
      return static_cast<T>(a % b);
    }
  }
};
// Integer power by squaring (wrapping). Negative exponents: 1^e = 1, (-1)^e = ±1, else 0 (XLA).
template <>
struct Scalar<hlo::OpKind::kPower> {
  static constexpr Domain kDomain = Domain::kNotBool;
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) {
          if (a == 1) return 1;
          if (a == -1) return (b & 1) ? T(-1) : T(1);
          return 0;
        }
      }
      T r = 1;
      T base = a;
      auto e = static_cast<Unsigned<T>>(b);
      while (e) {
        if (e & 1) r = Scalar<hlo::OpKind::kMultiply>::apply(r, base);
        base = Scalar<hlo::OpKind::kMultiply>::apply(base, base);
        e >>= 1;
      }
      return r;
    }
  }
};
// IEEE maximum (kMax) / minimum: the first NaN operand propagates, -0 < +0. Written as selects
// (no early returns) so the cpu loops vectorise them.
template <bool kMax, typename T>
T extremum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = (kMax ? a > b : a < b) ? a : b;
    r = a == b ? (std::signbit(a) == kMax ? b : a) : r;
    r = std::isnan(b) ? b : r;
    return std::isnan(a) ? a : r;
  } else {
    return (kMax ? a > b : a < b) ? a : b;
  }
}
NETSPEC_SCALAR_BINARY(kMaximum, kAny, extremum<true>(a, b));
NETSPEC_SCALAR_BINARY(kMinimum, kAny, extremum<false>(a, b));
NETSPEC_SCALAR_BINARY(kAtan2, kFloat, std::atan2(a, b));
// and / or / xor: bitwise; on i1 (0 or 1) the same as logical and, or, !=.
// clang-format off
NETSPEC_SCALAR_BINARY(kAnd, kIntOrBool, static_cast<T>(a & b));
NETSPEC_SCALAR_BINARY(kOr, kIntOrBool, static_cast<T>(a | b));
NETSPEC_SCALAR_BINARY(kXor, kIntOrBool, static_cast<T>(a ^ b));
// clang-format on
// Shift amounts are read as unsigned; amounts >= the bit width give 0 (left, logical) or the
// sign fill (arithmetic), as XLA does.
template <>
struct Scalar<hlo::OpKind::kShiftLeft> {
  static constexpr Domain kDomain = Domain::kInt;
  template <typename T>
  static T apply(T a, T b) {
    using U = Unsigned<T>;
    U s = static_cast<U>(b);
    if (s >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) << s));
  }
};
template <>
struct Scalar<hlo::OpKind::kShiftRightLogical> {
  static constexpr Domain kDomain = Domain::kInt;
  template <typename T>
  static T apply(T a, T b) {
    using U = Unsigned<T>;
    U s = static_cast<U>(b);
    if (s >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<U>(a) >> s);
  }
};
template <>
struct Scalar<hlo::OpKind::kShiftRightArithmetic> {
  static constexpr Domain kDomain = Domain::kInt;
  template <typename T>
  static T apply(T a, T b) {
    using U = Unsigned<T>;
    using S = std::make_signed_t<T>;
    U s = static_cast<U>(b);
    S v = static_cast<S>(a);
    if (s >= sizeof(T) * 8) return static_cast<T>(v < 0 ? S(-1) : S(0));
    return static_cast<T>(static_cast<S>(v >> s));  // C++20: >> on negatives is arithmetic
  }
};
// clamp(min, x, max) = minimum(maximum(x, min), max).
template <>
struct Scalar<hlo::OpKind::kClamp> {
  static constexpr Domain kDomain = Domain::kAny;
  template <typename T>
  static T apply(T lo, T x, T hi) {
    return Scalar<hlo::OpKind::kMinimum>::apply(Scalar<hlo::OpKind::kMaximum>::apply(x, lo), hi);
  }
};

#undef NETSPEC_FLOAT_UNARY
#undef NETSPEC_SCALAR_UNARY
#undef NETSPEC_SCALAR_BINARY

// compare's comparison_direction; FLOAT compares are IEEE (NaN unordered: only NE is true).
enum class CmpDir : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
inline std::optional<CmpDir> cmp_dir(std::string_view s) {
  if (s == "EQ") return CmpDir::kEq;
  if (s == "NE") return CmpDir::kNe;
  if (s == "LT") return CmpDir::kLt;
  if (s == "LE") return CmpDir::kLe;
  if (s == "GT") return CmpDir::kGt;
  if (s == "GE") return CmpDir::kGe;
  return std::nullopt;
}
template <CmpDir D, typename T>
bool compare(T a, T b) {
  if constexpr (D == CmpDir::kEq) return a == b;
  if constexpr (D == CmpDir::kNe) return a != b;
  if constexpr (D == CmpDir::kLt) return a < b;
  if constexpr (D == CmpDir::kLe) return a <= b;
  if constexpr (D == CmpDir::kGt) return a > b;
  return a >= b;
}
// f(std::integral_constant<CmpDir, D>{}) for the direction d (hoists the switch out of loops).
template <typename F>
decltype(auto) with_cmp_dir(CmpDir d, F&& f) {
  switch (d) {
    case CmpDir::kEq:
      return f(std::integral_constant<CmpDir, CmpDir::kEq>{});
    case CmpDir::kNe:
      return f(std::integral_constant<CmpDir, CmpDir::kNe>{});
    case CmpDir::kLt:
      return f(std::integral_constant<CmpDir, CmpDir::kLt>{});
    case CmpDir::kLe:
      return f(std::integral_constant<CmpDir, CmpDir::kLe>{});
    case CmpDir::kGt:
      return f(std::integral_constant<CmpDir, CmpDir::kGt>{});
    default:
      return f(std::integral_constant<CmpDir, CmpDir::kGe>{});
  }
}

// One element conversion. Float -> integer truncates toward zero; the spec leaves out-of-range
// results undefined (TBD), so we follow XLA CPU: saturate to the destination range, NaN -> 0.
// Integer -> integer wraps modulo 2^N; anything -> i1 is (x != 0); i1 -> anything is 0 or 1.
template <typename To, typename From>
To convert_scalar(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(x)) return To(0);
    From t = std::trunc(x);
    // Bounds as From (2^63 is exact in float/double).
    if (t <= static_cast<From>(std::numeric_limits<To>::min()))
      return std::numeric_limits<To>::min();
    if (t >= static_cast<From>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(t);
  } else {
    return static_cast<To>(x);  // C++20 integral conversion is modular
  }
}

// The elementwise kinds that have a Scalar<K> (ref, cpu and the coverage test walk these).
// clang-format off
#define NETSPEC_SCALAR_UNARY_KINDS(X)                                                            \
  X(kNegate) X(kAbs) X(kSign) X(kExponential) X(kExponentialMinusOne) X(kLog) X(kLogPlusOne)     \
  X(kLogistic) X(kTanh) X(kErf) X(kSqrt) X(kRsqrt) X(kCbrt) X(kSine) X(kCosine) X(kTan)         \
  X(kFloor) X(kCeil) X(kRoundNearestAfz) X(kRoundNearestEven) X(kIsFinite) X(kNot) X(kPopcnt)   \
  X(kCountLeadingZeros)
#define NETSPEC_SCALAR_BINARY_KINDS(X)                                                           \
  X(kAdd) X(kSubtract) X(kMultiply) X(kDivide) X(kRemainder) X(kPower) X(kMaximum) X(kMinimum)   \
  X(kAtan2) X(kAnd) X(kOr) X(kXor) X(kShiftLeft) X(kShiftRightArithmetic) X(kShiftRightLogical)
// clang-format on

// The domain of a binary op of the table; nullopt for every other kind.
inline std::optional<Domain> binary_domain(hlo::OpKind k) {
  switch (k) {
#define NETSPEC_CASE(KIND) \
  case hlo::OpKind::KIND:  \
    return Scalar<hlo::OpKind::KIND>::kDomain;
    NETSPEC_SCALAR_BINARY_KINDS(NETSPEC_CASE)
#undef NETSPEC_CASE
    default:
      return std::nullopt;
  }
}
// Scalar<k>::apply(a, b) for a binary kind whose domain holds T (binary_domain says which);
// the switch is per call, so this is for per-element region bodies, not vector loops.
template <typename T>
T apply_binary(hlo::OpKind k, T a, T b) {
  switch (k) {
#define NETSPEC_CASE(KIND)                                            \
  case hlo::OpKind::KIND:                                             \
    if constexpr (in_domain<Scalar<hlo::OpKind::KIND>::kDomain, T>()) \
      return Scalar<hlo::OpKind::KIND>::apply(a, b);                  \
    break;
    NETSPEC_SCALAR_BINARY_KINDS(NETSPEC_CASE)
#undef NETSPEC_CASE
    default:
      break;
  }
  fail("apply_binary", "{} is not a binary op of the scalar table for this type", op_name(k));
}

}  // namespace netspec::exec
