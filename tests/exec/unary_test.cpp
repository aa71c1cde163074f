// Elementwise unary ops, convert, bitcast_convert, reduce_precision on every backend, with
// hand-computed expectations including NaN, ±0, ±inf, integer wrap and zero-size tensors.
#include <climits>
#include <cmath>

#include "exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::OpKind;

class UnaryTest : public BackendTest {
 protected:
  Tensor un(OpKind k, const Tensor& x) {
    return run1({x}, [&](Builder& b, const Values& a) { return Values{b.unary(k, a[0])}; });
  }
};

TEST_P(UnaryTest, NegateFloatAndWrappingInt) {
  expect_equal(un(OpKind::kNegate, f32({5}, {1, -0.0, 0.0, kInf, kNaN})),
               f32({5}, {-1, 0.0, -0.0, -kInf, kNaN}));
  expect_equal(un(OpKind::kNegate, i32({3}, {INT_MIN, 5, 0})), i32({3}, {INT_MIN, -5, 0}));
  expect_equal(un(OpKind::kNegate, i8({2}, {-128, 127})), i8({2}, {-128, -127}));
}

TEST_P(UnaryTest, AbsAndSign) {
  expect_equal(un(OpKind::kAbs, f32({4}, {-2, -0.0, kNaN, -kInf})), f32({4}, {2, 0.0, kNaN, kInf}));
  expect_equal(un(OpKind::kAbs, i32({3}, {INT_MIN, -3, 4})), i32({3}, {INT_MIN, 3, 4}));
  expect_equal(un(OpKind::kSign, f32({6}, {-2.5, -0.0, 0.0, 3, kNaN, -kInf})),
               f32({6}, {-1, -0.0, 0.0, 1, kNaN, -1}));
  expect_equal(un(OpKind::kSign, i32({3}, {-7, 0, 9})), i32({3}, {-1, 0, 1}));
}

TEST_P(UnaryTest, Transcendentals) {
  const double e = std::exp(1.0);
  expect_near(un(OpKind::kExponential, f32({4}, {0, 1, -kInf, kInf})), f32({4}, {1, e, 0, kInf}));
  expect_near(un(OpKind::kLog, f32({4}, {1, e, 0, -1})), f32({4}, {0, 1, -kInf, kNaN}));
  expect_near(un(OpKind::kLogPlusOne, f32({2}, {-1, 1e-7})), f32({2}, {-kInf, 1e-7}), 1e-12);
  expect_equal(un(OpKind::kExponentialMinusOne, f32({2}, {-0.0, 0.0})), f32({2}, {-0.0, 0.0}));
  expect_near(un(OpKind::kExponentialMinusOne, f64({1}, {1e-10})), f64({1}, {1e-10}), 1e-20);
  expect_near(un(OpKind::kLogistic, f32({3}, {0, kInf, -kInf})), f32({3}, {0.5, 1, 0}));
  expect_near(un(OpKind::kTanh, f32({3}, {0, kInf, -kInf})), f32({3}, {0, 1, -1}));
  expect_equal(un(OpKind::kSqrt, f32({4}, {4, -0.0, kInf, -1})), f32({4}, {2, -0.0, kInf, kNaN}));
  expect_equal(un(OpKind::kRsqrt, f32({3}, {4, 0.0, kInf})), f32({3}, {0.5, kInf, 0}));
  expect_near(un(OpKind::kCbrt, f64({2}, {-8, 27})), f64({2}, {-2, 3}), 1e-15);
  expect_near(un(OpKind::kSine, f64({2}, {0, M_PI / 2})), f64({2}, {0, 1}), 1e-15);
  expect_near(un(OpKind::kCosine, f64({2}, {0, M_PI})), f64({2}, {1, -1}), 1e-15);
  expect_near(un(OpKind::kTan, f64({2}, {0, M_PI / 4})), f64({2}, {0, 1}), 1e-15);
}

TEST_P(UnaryTest, ErfMatchesLibmWithinTheF32ApproximationsError) {
  // f32: XLA's rational form, |error| < 2e-7 against libm's erf (double); ±inf -> ±1; NaN stays.
  std::vector<double> xs, want;
  for (int i = -600; i <= 600; ++i) xs.push_back(i / 100.0 + 0.003);
  for (double x : {0.0, -0.0, 1e-30, 3.999, 4.0, 4.001, 1e30, -1e30}) xs.push_back(x);
  for (double x : xs) want.push_back(std::erf(double(float(x))));
  const int64_t n = static_cast<int64_t>(xs.size());
  expect_near(un(OpKind::kErf, f32({n}, xs)), f32({n}, want), 3e-7, 0);
  expect_equal(un(OpKind::kErf, f32({3}, {kNaN, kInf, -kInf})), f32({3}, {kNaN, 1, -1}));
  expect_equal(un(OpKind::kErf, f32({2}, {0.0, -0.0})), f32({2}, {0.0, -0.0}));
  // f64: libm's erf itself.
  expect_near(un(OpKind::kErf, f64({3}, {0.5, -2, 6})),
              f64({3}, {std::erf(0.5), std::erf(-2.0), 1}), 1e-16, 0);
}

TEST_P(UnaryTest, Rounding) {
  Tensor x = f32({7}, {-1.5, 1.5, -0.0, -0.5, 2.5, -2.5, 0.5});
  expect_equal(un(OpKind::kFloor, x), f32({7}, {-2, 1, -0.0, -1, 2, -3, 0}));
  expect_equal(un(OpKind::kCeil, x), f32({7}, {-1, 2, -0.0, -0.0, 3, -2, 1}));
  // Ties away from zero vs ties to even; the sign of zero survives.
  expect_equal(un(OpKind::kRoundNearestAfz, x), f32({7}, {-2, 2, -0.0, -1, 3, -3, 1}));
  expect_equal(un(OpKind::kRoundNearestEven, x), f32({7}, {-2, 2, -0.0, -0.0, 2, -2, 0}));
  expect_equal(un(OpKind::kRoundNearestAfz, f32({2}, {kNaN, -kInf})), f32({2}, {kNaN, -kInf}));
}

TEST_P(UnaryTest, IsFinite) {
  expect_equal(un(OpKind::kIsFinite, f32({5}, {1, kInf, -kInf, kNaN, -0.0})),
               i1({5}, {1, 0, 0, 0, 1}));
}

TEST_P(UnaryTest, BitOps) {
  expect_equal(un(OpKind::kNot, i1({2}, {0, 1})), i1({2}, {1, 0}));
  expect_equal(un(OpKind::kNot, i32({3}, {0, -1, 5})), i32({3}, {-1, 0, -6}));
  expect_equal(un(OpKind::kNot, ui8({2}, {0, 15})), ui8({2}, {255, 240}));
  expect_equal(un(OpKind::kPopcnt, i32({4}, {0, -1, 7, INT_MIN})), i32({4}, {0, 32, 3, 1}));
  expect_equal(un(OpKind::kPopcnt, ui8({2}, {255, 128})), ui8({2}, {8, 1}));
  expect_equal(un(OpKind::kCountLeadingZeros, i32({4}, {0, 1, -1, 0x10000})),
               i32({4}, {32, 31, 0, 15}));
  expect_equal(un(OpKind::kCountLeadingZeros, i64({2}, {1, 0})), i64({2}, {63, 64}));
}

TEST_P(UnaryTest, ConvertFloatToIntTruncatesAndSaturates) {
  auto cv = [&](const Tensor& x, DType to) {
    return run1({x}, [&](Builder& b, const Values& a) { return Values{b.convert(a[0], to)}; });
  };
  expect_equal(cv(f32({6}, {1.9, -1.9, kNaN, 3e9, -3e9, kInf}), DType::kI32),
               i32({6}, {1, -1, 0, INT_MAX, INT_MIN, INT_MAX}));
  expect_equal(cv(f32({3}, {-3.5, 300, 7.9}), DType::kUI8), ui8({3}, {0, 255, 7}));
  expect_equal(cv(f64({2}, {9.3e18, -9.3e18}), DType::kI64), i64({2}, {LLONG_MAX, LLONG_MIN}));
  // Integer narrowing wraps modulo 2^N.
  expect_equal(cv(i32({3}, {300, -129, -1}), DType::kI8), i8({3}, {44, 127, -1}));
  expect_equal(cv(i32({1}, {-1}), DType::kUI32), ui32({1}, {0xFFFFFFFFu}));
  // To and from i1.
  expect_equal(cv(f32({4}, {0, -0.0, 2, kNaN}), DType::kI1), i1({4}, {0, 0, 1, 1}));
  expect_equal(cv(i1({2}, {1, 0}), DType::kF32), f32({2}, {1, 0}));
  // Rounding to the nearest float; overflow to inf.
  expect_equal(cv(i64({1}, {16777217}), DType::kF32), f32({1}, {16777216}));
  expect_equal(cv(f64({2}, {1e40, -1e40}), DType::kF32), f32({2}, {kInf, -kInf}));
  expect_equal(cv(f32({0, 2}, {}), DType::kI32), i32({0, 2}, {}));
}

TEST_P(UnaryTest, BitcastConvert) {
  auto bc = [&](const Tensor& x, const Type& to) {
    return run1({x},
                [&](Builder& b, const Values& a) { return Values{b.bitcast_convert(a[0], to)}; });
  };
  expect_equal(bc(f32({2}, {1.0, -0.0}), Type::tensor(DType::kI32, {2})),
               i32({2}, {0x3f800000, INT_MIN}));
  // Narrowing adds a trailing dim in little-endian order; widening removes it.
  expect_equal(bc(i32({2}, {0x01020304, -1}), Type::tensor(DType::kI8, {2, 4})),
               i8({2, 4}, {4, 3, 2, 1, -1, -1, -1, -1}));
  expect_equal(bc(i8({1, 4}, {4, 3, 2, 1}), Type::tensor(DType::kI32, {1})),
               i32({1}, {0x01020304}));
  expect_equal(bc(f64({}, {1.0}), Type::tensor(DType::kUI32, {2})), ui32({2}, {0, 0x3FF00000u}));
  // i1 is one bit, least significant first (the StableHLO interpreter's i64 <-> 64xi1 cases):
  // 0xC5 = 0b11000101 and 0x01.
  expect_equal(bc(i8({2}, {-59, 1}), Type::tensor(DType::kI1, {2, 8})),
               i1({2, 8}, {1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}));
  expect_equal(
      bc(i1({16}, {1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}), Type::tensor(DType::kI16, {})),
      make<int64_t>(DType::kI16, {}, {0x01C5}));
  expect_equal(bc(i1({2}, {1, 0}), Type::tensor(DType::kI1, {2})), i1({2}, {1, 0}));
}

TEST_P(UnaryTest, ReducePrecision) {
  auto rp = [&](const Tensor& x, int64_t e, int64_t m) {
    return run1(
        {x}, [&](Builder& b, const Values& a) { return Values{b.reduce_precision(a[0], e, m)}; });
  };
  // bf16-like (8, 7): 1 + 2^-8 is a tie -> even (1.0); 1 + 3*2^-8 is a tie -> 1 + 2^-6.
  expect_equal(rp(f32({4}, {1.00390625, 1.01171875, -3.0, kNaN}), 8, 7),
               f32({4}, {1.0, 1.015625, -3.0, kNaN}));
  // f16-like (5, 10): overflow -> inf, values below the smallest normal flush to ±0.
  expect_equal(rp(f32({5}, {70000, -70000, 65504, 1e-8, -1e-5}), 5, 10),
               f32({5}, {kInf, -kInf, 65504, 0.0, -0.0}));
  // With no mantissa bits left NaN becomes +inf: the StableHLO interpreter's result (its test
  // reduce_precision_op_test_f64_zero_mantissa_bits; XLA CPU keeps NaN). Other values round.
  expect_equal(rp(f32({3}, {kNaN, -kNaN, 1.5}), 5, 0), f32({3}, {kInf, kInf, 2.0}));
  expect_equal(rp(f64({3}, {kNaN, -kInf, 1.25}), 5, 0), f64({3}, {kInf, -kInf, 1.0}));
  expect_equal(rp(f64({1}, {kNaN}), 11, 1), f64({1}, {kNaN}));
}

TEST_P(UnaryTest, ZeroSize) {
  expect_equal(un(OpKind::kNegate, f32({0, 3}, {})), f32({0, 3}, {}));
  expect_equal(un(OpKind::kIsFinite, f32({0}, {})), i1({0}, {}));
}

NETSPEC_ON_BACKENDS(UnaryTest);

}  // namespace
}  // namespace netspec::testing
