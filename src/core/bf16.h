// bfloat16 <-> f32 conversions (bf16 is the high half of an f32: 1 sign, 8 exponent, 7 mantissa
// bits). f32 -> bf16 rounds to nearest, ties to even (subnormals included, overflow to ±inf); a
// NaN stays a NaN (its sign and top payload bits kept, the quiet bit set, so the truncation can
// never turn it into an infinity). bf16 -> f32 is exact. What XLA, Eigen and oneDNN do.
#pragma once
#include <bit>
#include <cstdint>

namespace netspec {

inline uint16_t f32_to_bf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);  // ties to even: + half ulp, + 1 if the kept lsb is odd
  return static_cast<uint16_t>(u >> 16);
}

inline float bf16_to_f32(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

// The f32 value nearest to x that a bf16 holds (round trip through bf16).
inline float round_to_bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }

// Loops over n elements (plain enough for the compiler to vectorise).
void f32_to_bf16_n(const float* x, uint16_t* y, int64_t n);
void bf16_to_f32_n(const uint16_t* x, float* y, int64_t n);

}  // namespace netspec
