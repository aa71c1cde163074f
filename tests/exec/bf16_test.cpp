// bf16 on both executors: convert f32 -> bf16 -> f32 on hand-computed edge values (ties to
// even, subnormals, overflow, NaN), and dot_general / convolution with bf16 operands and an f32
// result, whose sums are the hand-computed sums of the rounded operands (f32 accumulation).
#include <bit>
#include <cmath>
#include <limits>

#include "exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::ConvOptions;
using hlo::DotDims;

class Bf16Test : public BackendTest {};

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }

TEST_P(Bf16Test, ConvertRoundTripRoundsToNearestEven) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // x -> bf16 -> f32, the expected values worked out by hand from the bits.
  std::vector<double> x{1.0,
                        1.00390625,              // 1 + 2^-8: a tie, to even (1)
                        1.01171875,              // 1 + 3·2^-8: a tie, to even (1 + 2^-6)
                        from_bits(0x3F808001u),  // just above the tie: 1 + 2^-7
                        -3.14159265,             // -> -3.140625
                        from_bits(0x00018000u),  // subnormal tie at odd: 2·2^-133
                        from_bits(0x7F7FFFFFu),  // f32 max: rounds up to inf
                        -inf,
                        nan,
                        0.0,
                        -0.0};
  std::vector<double> want{1.0, 1.0,  1.015625, 1.0078125, -3.140625, std::ldexp(1.0, -132),
                           inf, -inf, nan,      0.0,       -0.0};
  Tensor in = f32({static_cast<int64_t>(x.size())}, x);
  Tensor got = run1({in}, [](Builder& b, const Values& a) {
    return Values{b.convert(b.convert(a[0], DType::kBF16), DType::kF32)};
  });
  expect_equal(got, f32({static_cast<int64_t>(want.size())}, want));
}

TEST_P(Bf16Test, DotAndConvSumRoundedOperandsInF32) {
  // x = [1 + 2^-8 (-> 1), 3.01 (-> 3.015625)], w = [[1, 1], [2, -0.333 (-> -0.33203125)]]
  Tensor x = f32({1, 2}, {1.00390625, 3.01});
  Tensor w = f32({2, 2}, {1, 1, 2, -0.333});
  DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {1};  // x · wᵀ
  Tensor y = run1({x, w}, [&](Builder& b, const Values& a) {
    return Values{b.dot_general(b.convert(a[0], DType::kBF16), b.convert(a[1], DType::kBF16), d, {},
                                DType::kF32)};
  });
  expect_equal(y, f32({1, 2}, {1 + 3.015625, 2 - 3.015625 * 0.33203125}));
  // A 1-D convolution, 2 taps, the same operands as [N=1, C=1, W=2] * [O=2, I=1, K=2].
  ConvOptions o;
  o.dims = ConvOptions::nchw(1);
  Tensor c = run1({x.reshaped({1, 1, 2}), w.reshaped({2, 1, 2})}, [&](Builder& b, const Values& a) {
    return Values{b.convolution(b.convert(a[0], DType::kBF16), b.convert(a[1], DType::kBF16), o,
                                DType::kF32)};
  });
  expect_equal(c, f32({1, 2, 1}, {1 + 3.015625, 2 - 3.015625 * 0.33203125}));
}

NETSPEC_ON_BACKENDS(Bf16Test);

}  // namespace
}  // namespace netspec::testing
