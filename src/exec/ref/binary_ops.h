// Scalar semantics of the elementwise binary ops (private to src/exec/ref), shared by the
// binary kernels and by the reduction fast path (a region that is one binary op on its
// arguments). Integers wrap modulo 2^N; see binary.cpp for division edge cases.
#pragma once
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "hlo/ir.h"

namespace netspec::exec::ref {

template <typename T>
using Unsigned = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;

template <typename T>
T bin_add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;  // i1 add is logical or
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
  else
    return a + b;
}
template <typename T>
T bin_subtract(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
  else
    return static_cast<T>(a - b);
}
template <typename T>
T bin_multiply(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a && b;  // i1 multiply is logical and
  else if constexpr (std::is_integral_v<T>) {
    // Promote narrow types to unsigned int first so the product cannot overflow a signed int.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, Unsigned<T>>;
    return static_cast<T>(static_cast<U>(static_cast<Unsigned<T>>(a)) *
                          static_cast<U>(static_cast<Unsigned<T>>(b)));
  } else
    return a * b;
}
// x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN (XLA semantics).
template <typename T>
T bin_divide(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (b == 0) return static_cast<T>(-1);
    if constexpr (std::is_signed_v<T>)
      if (a == std::numeric_limits<T>::min() && b == -1) return a;
    return static_cast<T>(a / b);
  } else
    return static_cast<T>(a / b);
}
// x % 0 = x, INT_MIN % -1 = 0; floats: fmod (sign of the dividend).
template <typename T>
T bin_remainder(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return std::fmod(a, b);
  else if constexpr (std::is_same_v<T, bool>)
    return a;
  else {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>)
      if (a == std::numeric_limits<T>::min() && b == -1) return 0;
    return static_cast<T>(a % b);
  }
}
// Integer power by squaring (wrapping). Negative exponents: 1^e = 1, (-1)^e = ±1, else 0 (XLA).
template <typename T>
T bin_power(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return std::pow(a, b);
  else if constexpr (std::is_same_v<T, bool>)
    return a || !b;
  else {
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
      if (e & 1) r = bin_multiply(r, base);
      base = bin_multiply(base, base);
      e >>= 1;
    }
    return r;
  }
}
// IEEE maximum/minimum: NaN propagates, -0 < +0.
template <typename T>
T bin_maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) return std::signbit(a) ? b : a;
    return a > b ? a : b;
  } else
    return a > b ? a : b;
}
template <typename T>
T bin_minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) return std::signbit(a) ? a : b;
    return a < b ? a : b;
  } else
    return a < b ? a : b;
}
template <typename T>
T bin_atan2(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return std::atan2(a, b);
  else
    return a;
}
template <typename T>
T bin_and(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a && b;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(a & b);
  else
    return a;
}
template <typename T>
T bin_or(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(a | b);
  else
    return a;
}
template <typename T>
T bin_xor(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a != b;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(a ^ b);
  else
    return a;
}
// Shift amounts are read as unsigned; amounts >= the bit width give 0 (left, logical) or the
// sign fill (arithmetic), as XLA does.
template <typename T>
T bin_shift_left(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = Unsigned<T>;
    U s = static_cast<U>(b);
    if (s >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) << s));
  } else
    return a;
}
template <typename T>
T bin_shift_right_logical(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = Unsigned<T>;
    U s = static_cast<U>(b);
    if (s >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<U>(a) >> s);
  } else
    return a;
}
template <typename T>
T bin_shift_right_arithmetic(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = Unsigned<T>;
    using S = std::make_signed_t<T>;
    U s = static_cast<U>(b);
    S v = static_cast<S>(a);
    if (s >= sizeof(T) * 8) return static_cast<T>(v < 0 ? S(-1) : S(0));
    return static_cast<T>(static_cast<S>(v >> s));  // C++20: >> on negatives is arithmetic
  } else
    return a;
}

// Scalar a `kind` b for a binary op of the list above; false if kind is not one of them.
template <typename T>
bool apply_binary(hlo::OpKind kind, T a, T b, T& out) {
  using K = hlo::OpKind;
  switch (kind) {
    case K::kAdd:
      out = bin_add(a, b);
      return true;
    case K::kSubtract:
      out = bin_subtract(a, b);
      return true;
    case K::kMultiply:
      out = bin_multiply(a, b);
      return true;
    case K::kDivide:
      out = bin_divide(a, b);
      return true;
    case K::kMaximum:
      out = bin_maximum(a, b);
      return true;
    case K::kMinimum:
      out = bin_minimum(a, b);
      return true;
    case K::kAnd:
      out = bin_and(a, b);
      return true;
    case K::kOr:
      out = bin_or(a, b);
      return true;
    case K::kXor:
      out = bin_xor(a, b);
      return true;
    default:
      return false;
  }
}

}  // namespace netspec::exec::ref
