// Reference kernels: elementwise unary ops, convert, bitcast_convert, reduce_precision.
// Integer arithmetic wraps (two's complement); float math is the C library's in the element type.
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "exec/ref/kernel_util.h"

namespace netspec::exec::ref {
namespace {

template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Applies f to every element; f receives the element (typed) and returns the result element.
template <typename F>
Tensor map_same(const hlo::Op& op, const Tensor& x, F&& f) {
  Tensor out = result_tensor(op);
  std::string where(op_mnemonic(op.kind));
  visit_dtype(x.dtype(), where.c_str(), [&](auto z) {
    using T = decltype(z);
    const T* a = x.data<T>();
    T* o = out.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = f(a[i]);
  });
  return out;
}

[[noreturn]] void bad_type(const hlo::Op& op, DType t) {
  fail(op_mnemonic(op.kind), "element type {} is not supported", dtype_name(t));
}

// Float-only op: f(double-or-float) in the element type.
#define FLOAT_UNARY(NAME, EXPR)                                                                    \
  std::vector<Tensor> eval_##NAME(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) { \
    if (!is_float(in[0].dtype())) bad_type(op, in[0].dtype());                                     \
    return {map_same(op, in[0], [](auto x) -> decltype(x) {                                        \
      using T = decltype(x);                                                                       \
      if constexpr (std::is_floating_point_v<T>) {                                                 \
        return static_cast<T>(EXPR);                                                               \
      } else {                                                                                     \
        return x;                                                                                  \
      }                                                                                            \
    })};                                                                                           \
  }

FLOAT_UNARY(exponential, std::exp(x))
FLOAT_UNARY(exponential_minus_one, std::expm1(x))
FLOAT_UNARY(log, std::log(x))
FLOAT_UNARY(log_plus_one, std::log1p(x))
FLOAT_UNARY(logistic, T(1) / (T(1) + std::exp(-x)))  // 1 / (1 + e^-x)
FLOAT_UNARY(tanh, std::tanh(x))
FLOAT_UNARY(sqrt, std::sqrt(x))
FLOAT_UNARY(rsqrt, T(1) / std::sqrt(x))
FLOAT_UNARY(cbrt, std::cbrt(x))
FLOAT_UNARY(sine, std::sin(x))
FLOAT_UNARY(cosine, std::cos(x))
FLOAT_UNARY(tan, std::tan(x))
FLOAT_UNARY(floor, std::floor(x))
FLOAT_UNARY(ceil, std::ceil(x))
FLOAT_UNARY(round_nearest_afz, std::round(x))       // ties away from zero: 2.5 -> 3, -2.5 -> -3
FLOAT_UNARY(round_nearest_even, std::nearbyint(x))  // default FE_TONEAREST: 2.5 -> 2
#undef FLOAT_UNARY

// negate: integers wrap (-INT_MIN = INT_MIN); unsigned is 2^N - x.
std::vector<Tensor> eval_negate(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  if (is_bool(in[0].dtype())) bad_type(op, in[0].dtype());
  return {map_same(op, in[0], [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (kIsInt<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(U(0) - static_cast<U>(x));
    } else {
      return -x;
    }
  })};
}

// abs: |x|; abs(INT_MIN) wraps to INT_MIN; abs(-0.0) = +0.0, abs(NaN) = NaN.
std::vector<Tensor> eval_abs(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  if (is_bool(in[0].dtype())) bad_type(op, in[0].dtype());
  return {map_same(op, in[0], [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      return std::fabs(x);
    } else if constexpr (std::is_signed_v<T>) {
      using U = std::make_unsigned_t<T>;
      return x < 0 ? static_cast<T>(U(0) - static_cast<U>(x)) : x;
    } else {
      return x;
    }
  })};
}

// sign: -1, 0, 1; floats keep the sign of zero and NaN stays NaN.
std::vector<Tensor> eval_sign(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  if (is_bool(in[0].dtype())) bad_type(op, in[0].dtype());
  return {map_same(op, in[0], [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x) || x == T(0)) return x;
      return x < 0 ? T(-1) : T(1);
    } else {
      return x < T(0) ? static_cast<T>(-1) : (x == T(0) ? T(0) : T(1));
    }
  })};
}

// is_finite: true unless inf or NaN (float operands only).
std::vector<Tensor> eval_is_finite(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  if (!is_float(in[0].dtype())) bad_type(op, in[0].dtype());
  Tensor out = result_tensor(op);
  uint8_t* o = static_cast<uint8_t*>(out.raw());
  visit_dtype(in[0].dtype(), "is_finite", [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_floating_point_v<T>) {
      const T* a = in[0].data<T>();
      for (int64_t i = 0; i < in[0].numel(); ++i) o[i] = std::isfinite(a[i]) ? 1 : 0;
    }
  });
  return {out};
}

// not: logical not for i1, bitwise not for integers.
std::vector<Tensor> eval_not(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  if (is_float(in[0].dtype())) bad_type(op, in[0].dtype());
  return {map_same(op, in[0], [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>) {
      return !x;
    } else if constexpr (kIsInt<T>) {
      return static_cast<T>(~x);
    } else {
      return x;
    }
  })};
}

// popcnt: number of set bits of the two's complement pattern.
std::vector<Tensor> eval_popcnt(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  if (!is_integer(in[0].dtype())) bad_type(op, in[0].dtype());
  return {map_same(op, in[0], [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (kIsInt<T>) {
      return static_cast<T>(std::popcount(static_cast<std::make_unsigned_t<T>>(x)));
    } else {
      return x;
    }
  })};
}

// count_leading_zeros: leading zero bits (the bit width for 0).
std::vector<Tensor> eval_count_leading_zeros(const hlo::Op& op, const std::vector<Tensor>& in,
                                             RunContext&) {
  if (!is_integer(in[0].dtype())) bad_type(op, in[0].dtype());
  return {map_same(op, in[0], [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (kIsInt<T>) {
      return static_cast<T>(std::countl_zero(static_cast<std::make_unsigned_t<T>>(x)));
    } else {
      return x;
    }
  })};
}

// One element conversion. Float -> integer truncates toward zero; the spec leaves out-of-range
// results undefined (TBD), so we follow XLA CPU: saturate to the destination range, NaN -> 0.
// Integer -> integer wraps modulo 2^N; anything -> i1 is (x != 0); i1 -> anything is 0 or 1.
template <typename To, typename From>
To convert_one(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(x)) return To(0);
    From t = std::trunc(x);
    // Compare in long double-free form: bounds as From (2^63 is exact in float/double).
    if (t <= static_cast<From>(std::numeric_limits<To>::min()))
      return std::numeric_limits<To>::min();
    if (t >= static_cast<From>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(t);
  } else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>) {
    // C++20 integral conversion is modular.
    return static_cast<To>(x);
  } else {
    return static_cast<To>(x);
  }
}

std::vector<Tensor> eval_convert(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  Tensor out = result_tensor(op);
  visit_dtype(in[0].dtype(), "convert", [&](auto zf) {
    using From = decltype(zf);
    visit_dtype(out.dtype(), "convert", [&](auto zt) {
      using To = decltype(zt);
      const From* a = in[0].data<From>();
      To* o = out.data<To>();
      for (int64_t i = 0; i < in[0].numel(); ++i) o[i] = convert_one<To>(a[i]);
    });
  });
  return {out};
}

// bitcast_convert: same bytes, reinterpreted. A narrower result gains a trailing dim of
// ratio elements (little-endian order); a wider one drops the operand's trailing dim.
// i1 is one bit: i1 element k is bit k of the other side's little-endian bytes (LSB first, as
// StableHLO's interpreter does: 0x..EF -> [1, 1, 1, 1, 0, 1, 1, 1, ...]).
std::vector<Tensor> eval_bitcast_convert(const hlo::Op& op, const std::vector<Tensor>& in,
                                         RunContext&) {
  Tensor out = result_tensor(op);
  bool bits_in = is_bool(in[0].dtype()), bits_out = is_bool(out.dtype());
  if (bits_in != bits_out) {
    const Tensor& bits = bits_in ? in[0] : out;
    const Tensor& bytes = bits_in ? out : in[0];
    if (bits.numel() != static_cast<int64_t>(bytes.nbytes()) * 8)
      fail("bitcast_convert", "bit counts differ (got {} -> {})", in[0].type_str(), out.type_str());
    const auto* b = static_cast<const uint8_t*>(in[0].raw());
    auto* o = static_cast<uint8_t*>(out.raw());
    if (bits_in) {
      std::memset(o, 0, out.nbytes());
      for (int64_t k = 0; k < bits.numel(); ++k)
        o[k / 8] |= static_cast<uint8_t>((b[k] != 0) << (k % 8));
    } else {
      for (int64_t k = 0; k < bits.numel(); ++k) o[k] = (b[k / 8] >> (k % 8)) & 1;
    }
    return {out};
  }
  if (out.nbytes() != in[0].nbytes())
    fail("bitcast_convert", "byte sizes differ (got {} -> {})", in[0].type_str(), out.type_str());
  if (out.nbytes()) std::memcpy(out.raw(), in[0].raw(), out.nbytes());
  return {out};
}

// reduce_precision: rounds the mantissa to `mantissa_bits` (round to nearest even) and clamps
// the exponent range to `exponent_bits` (overflow -> ±inf, underflow -> ±0), as XLA does.
// NaN stays NaN unless mantissa_bits is 0 (then +inf, the spec). Checked against XLA CPU (jaxlib
// 0.10) on the values in unary_test.
template <typename F, typename U>
F reduce_precision_one(F x, int exp_bits, int man_bits) {
  constexpr int kBits = sizeof(F) * 8;
  constexpr int kMan = std::numeric_limits<F>::digits - 1;
  constexpr int kExp = kBits - kMan - 1;
  U b = std::bit_cast<U>(x);
  if (man_bits < kMan) {
    U last = U(1) << (kMan - man_bits);
    U base_bias = (last >> 1) - 1;
    U last_bit = (b & last) >> (kMan - man_bits);
    U trunc_mask = ~(last - 1);
    b = (b + last_bit + base_bias) & trunc_mask;
  }
  if (exp_bits < kExp) {
    U sign = U(1) << (kBits - 1);
    U exp_mask = ((U(1) << kExp) - 1) << kMan;
    U bias = (U(1) << (kExp - 1)) - 1;
    U red_bias = (U(1) << (exp_bits - 1)) - 1;
    U max_e = bias + red_bias, min_e = bias - red_bias;
    U e = b & exp_mask;
    if (e > (max_e << kMan))
      b = (b & sign) | exp_mask;
    else if (e <= (min_e << kMan))
      b = b & sign;
  }
  // NaN stays NaN while a mantissa bit is left to hold it; with none it becomes +inf, as the
  // StableHLO spec's interpreter gives (XLA CPU keeps the NaN there).
  if (std::isnan(x)) return man_bits > 0 ? x : std::numeric_limits<F>::infinity();
  return std::bit_cast<F>(b);
}

std::vector<Tensor> eval_reduce_precision(const hlo::Op& op, const std::vector<Tensor>& in,
                                          RunContext&) {
  int eb = static_cast<int>(op.attrs.get_int("exponent_bits"));
  int mb = static_cast<int>(op.attrs.get_int("mantissa_bits"));
  if (eb < 1 || mb < 0)
    fail("reduce_precision", "bad bit counts (got exponent {}, mantissa {})", eb, mb);
  if (in[0].dtype() == DType::kF32)
    return {map_same(op, in[0], [&](auto x) -> decltype(x) {
      if constexpr (std::is_same_v<decltype(x), float>)
        return reduce_precision_one<float, uint32_t>(x, eb, mb);
      else
        return x;
    })};
  if (in[0].dtype() == DType::kF64)
    return {map_same(op, in[0], [&](auto x) -> decltype(x) {
      if constexpr (std::is_same_v<decltype(x), double>)
        return reduce_precision_one<double, uint64_t>(x, eb, mb);
      else
        return x;
    })};
  bad_type(op, in[0].dtype());
}

}  // namespace

void register_unary_kernels(Kernel* t) {
  using K = hlo::OpKind;
  auto set = [&](K k, Kernel f) { t[static_cast<size_t>(k)] = f; };
  set(K::kNegate, eval_negate);
  set(K::kAbs, eval_abs);
  set(K::kSign, eval_sign);
  set(K::kExponential, eval_exponential);
  set(K::kExponentialMinusOne, eval_exponential_minus_one);
  set(K::kLog, eval_log);
  set(K::kLogPlusOne, eval_log_plus_one);
  set(K::kLogistic, eval_logistic);
  set(K::kTanh, eval_tanh);
  set(K::kSqrt, eval_sqrt);
  set(K::kRsqrt, eval_rsqrt);
  set(K::kCbrt, eval_cbrt);
  set(K::kSine, eval_sine);
  set(K::kCosine, eval_cosine);
  set(K::kTan, eval_tan);
  set(K::kFloor, eval_floor);
  set(K::kCeil, eval_ceil);
  set(K::kRoundNearestAfz, eval_round_nearest_afz);
  set(K::kRoundNearestEven, eval_round_nearest_even);
  set(K::kIsFinite, eval_is_finite);
  set(K::kNot, eval_not);
  set(K::kPopcnt, eval_popcnt);
  set(K::kCountLeadingZeros, eval_count_leading_zeros);
  set(K::kConvert, eval_convert);
  set(K::kBitcastConvert, eval_bitcast_convert);
  set(K::kReducePrecision, eval_reduce_precision);
}

}  // namespace netspec::exec::ref
