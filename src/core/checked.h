// Overflow-checked int64 arithmetic for shapes, parameter counts and FLOPs: a spec with
// k = 2e9 must be refused with a clear error, not printed as a wrapped negative count.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "core/error.h"

namespace netspec {

inline int64_t checked_mul(int64_t a, int64_t b, std::string_view where) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    fail(where, "size overflows 64-bit integers ({} * {}; the spec's sizes are too large)", a, b);
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, std::string_view where) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    fail(where, "size overflows 64-bit integers ({} + {}; the spec's sizes are too large)", a, b);
  return r;
}

// The product of all `xs`, checked (FLOP counts: 2 * h * w * oc * ic * k * k).
inline int64_t checked_product(std::initializer_list<int64_t> xs, std::string_view where) {
  int64_t r = 1;
  for (int64_t x : xs) r = checked_mul(r, x, where);
  return r;
}

}  // namespace netspec
