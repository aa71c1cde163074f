// f32 <-> bf16 conversion against hand-computed bit patterns: ties to even, subnormals,
// overflow, infinities and NaNs (core/bf16.h).
#include "core/bf16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <vector>

namespace netspec {
namespace {

uint16_t round_bits(uint32_t f32_bits) { return f32_to_bf16(std::bit_cast<float>(f32_bits)); }

TEST(Bf16, RoundsToNearestTiesToEven) {
  EXPECT_EQ(round_bits(0x3F800000u), 0x3F80u);   // 1.0 exactly
  EXPECT_EQ(round_bits(0x3F808000u), 0x3F80u);   // 1 + 2^-8: a tie, kept lsb 0 stays (even)
  EXPECT_EQ(round_bits(0x3F818000u), 0x3F82u);   // 1 + 3·2^-8: a tie, kept lsb 1 rounds up
  EXPECT_EQ(round_bits(0x3F808001u), 0x3F81u);   // just above the tie: up
  EXPECT_EQ(round_bits(0x3F807FFFu), 0x3F80u);   // just below the tie: down
  EXPECT_EQ(round_bits(0xBF818000u), 0xBF82u);   // negative: the same on the magnitude
  EXPECT_EQ(round_bits(0x3FBFFFFFu), 0x3FC0u);   // rounding up carries through the mantissa
  EXPECT_EQ(round_bits(0x3FFFFFFFu), 0x4000u);   // 1.99999988 -> 2.0 (carry into the exponent)
  EXPECT_EQ(f32_to_bf16(3.14159265f), 0x4049u);  // pi -> 3.140625
  EXPECT_FLOAT_EQ(bf16_to_f32(0x4049u), 3.140625f);
}

TEST(Bf16, Subnormals) {
  EXPECT_EQ(round_bits(0x00000001u), 0x0000u);  // 2^-149 -> +0
  EXPECT_EQ(round_bits(0x00008000u), 0x0000u);  // a tie at 0: even
  EXPECT_EQ(round_bits(0x00018000u), 0x0002u);  // a tie at odd 1: up to 2
  EXPECT_EQ(round_bits(0x00010001u), 0x0001u);  // the bf16 subnormal 2^-133 (+ a bit)
  EXPECT_EQ(round_bits(0x807FFFFFu), 0x8080u);  // -largest subnormal -> -smallest normal
  EXPECT_EQ(round_bits(0x80000000u), 0x8000u);  // -0 keeps its sign
  EXPECT_EQ(bf16_to_f32(0x0001u), std::ldexp(1.0f, -133));
}

TEST(Bf16, OverflowInfinityAndNan) {
  EXPECT_EQ(round_bits(0x7F7FFFFFu), 0x7F80u);  // max f32 rounds past bf16's max: +inf
  EXPECT_EQ(round_bits(0x7F7F7FFFu), 0x7F7Fu);  // below the tie: bf16 max 3.3895e38
  EXPECT_EQ(round_bits(0x7F800000u), 0x7F80u);
  EXPECT_EQ(round_bits(0xFF800000u), 0xFF80u);
  EXPECT_EQ(round_bits(0x7FC00000u), 0x7FC0u);  // quiet NaN
  EXPECT_EQ(round_bits(0x7F800001u), 0x7FC0u);  // signalling NaN, payload only in the low
                                                // bits: stays NaN (truncation would give inf)
  EXPECT_EQ(round_bits(0xFFFFFFFFu), 0xFFFFu);  // -NaN, top payload kept
  EXPECT_TRUE(std::isnan(bf16_to_f32(round_bits(0x7F800001u))));
  EXPECT_TRUE(std::isinf(bf16_to_f32(0xFF80u)));
}

TEST(Bf16, ArrayFormsMatchTheScalarOnes) {
  std::vector<uint32_t> bits{0x3F808000u, 0x3F818000u, 0x00018000u, 0x7F7FFFFFu, 0x7F800001u,
                             0xC0490FDBu, 0x00000000u, 0x80000000u, 0x3EAAAAABu};
  std::vector<float> x, back(bits.size());
  for (uint32_t b : bits) x.push_back(std::bit_cast<float>(b));
  std::vector<uint16_t> h(bits.size());
  f32_to_bf16_n(x.data(), h.data(), static_cast<int64_t>(x.size()));
  bf16_to_f32_n(h.data(), back.data(), static_cast<int64_t>(h.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(h[i], f32_to_bf16(x[i])) << i;
    EXPECT_EQ(std::bit_cast<uint32_t>(back[i]), static_cast<uint32_t>(h[i]) << 16) << i;
  }
}

}  // namespace
}  // namespace netspec
