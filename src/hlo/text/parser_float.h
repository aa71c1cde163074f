// Internal: f16/bf16 <-> f32 bit conversions (round to nearest even) shared by the parser and
// printer for dense literals of 16-bit float types. Not a public header.
#pragma once
#include <bit>
#include <cstdint>

#include "core/bf16.h"

namespace netspec::hlo {

inline float bf16_to_float(uint16_t h) { return bf16_to_f32(h); }
inline uint16_t float_to_bf16(float f) { return f32_to_bf16(f); }  // core/bf16.h

inline float f16_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (man << 13));
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    float v = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}
inline uint16_t float_to_f16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow -> inf
  if (a < 0x38800000u) {  // subnormal in f16: round(|f| * 2^24)
    float v = std::bit_cast<float>(a) * 16777216.0f;
    uint32_t m = static_cast<uint32_t>(v);
    float frac = v - static_cast<float>(m);
    if (frac > 0.5f || (frac == 0.5f && (m & 1u))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t r = a + 0xFFFu + ((a >> 13) & 1u) - (112u << 23);
  return static_cast<uint16_t>(sign | (r >> 13));
}

}  // namespace netspec::hlo
