// Elementwise binary ops, compare, clamp and select on every backend: integer wrap, division
// and remainder by zero and INT_MIN / -1 (XLA's defined results), shifts by >= the bit width,
// IEEE NaN and signed-zero rules, TOTALORDER compare, scalar broadcast in clamp and select.
#include <climits>
#include <cmath>

#include "exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::OpKind;

class BinaryTest : public BackendTest {
 protected:
  Tensor bin(OpKind k, const Tensor& x, const Tensor& y) {
    return run1({x, y},
                [&](Builder& b, const Values& a) { return Values{b.binary(k, a[0], a[1])}; });
  }
  Tensor cmp(const Tensor& x, const Tensor& y, const char* dir, const char* type = "") {
    return run1({x, y}, [&](Builder& b, const Values& a) {
      return Values{b.compare(a[0], a[1], dir, type)};
    });
  }
};

TEST_P(BinaryTest, AddSubtractMultiplyWrap) {
  expect_equal(bin(OpKind::kAdd, i32({2}, {INT_MAX, -5}), i32({2}, {1, 3})),
               i32({2}, {INT_MIN, -2}));
  expect_equal(bin(OpKind::kSubtract, i32({1}, {INT_MIN}), i32({1}, {1})), i32({1}, {INT_MAX}));
  expect_equal(bin(OpKind::kMultiply, i32({1}, {65536}), i32({1}, {65536})), i32({1}, {0}));
  expect_equal(bin(OpKind::kMultiply, i8({2}, {100, -128}), i8({2}, {3, -1})), i8({2}, {44, -128}));
  expect_equal(bin(OpKind::kAdd, f32({3}, {kInf, 1, -0.0}), f32({3}, {-kInf, kNaN, -0.0})),
               f32({3}, {kNaN, kNaN, -0.0}));
  // i1 add is or, multiply is and.
  expect_equal(bin(OpKind::kAdd, i1({4}, {0, 0, 1, 1}), i1({4}, {0, 1, 0, 1})),
               i1({4}, {0, 1, 1, 1}));
  expect_equal(bin(OpKind::kMultiply, i1({4}, {0, 0, 1, 1}), i1({4}, {0, 1, 0, 1})),
               i1({4}, {0, 0, 0, 1}));
  expect_equal(bin(OpKind::kAdd, ui32({1}, {0xFFFFFFFFu}), ui32({1}, {2})), ui32({1}, {1}));
}

TEST_P(BinaryTest, IntegerDivideAndRemainderEdgeCases) {
  Tensor x = i32({7}, {7, -7, 7, -7, INT_MIN, 5, 0});
  Tensor y = i32({7}, {2, 2, -2, -2, -1, 0, 0});
  // Truncating division; x / 0 = -1; INT_MIN / -1 = INT_MIN.
  expect_equal(bin(OpKind::kDivide, x, y), i32({7}, {3, -3, -3, 3, INT_MIN, -1, -1}));
  // Remainder has the dividend's sign; x % 0 = x; INT_MIN % -1 = 0.
  expect_equal(bin(OpKind::kRemainder, x, y), i32({7}, {1, -1, 1, -1, 0, 5, 0}));
  expect_equal(bin(OpKind::kDivide, ui32({2}, {5, 7}), ui32({2}, {0, 2})),
               ui32({2}, {0xFFFFFFFFu, 3}));
  expect_equal(bin(OpKind::kRemainder, ui32({2}, {5, 7}), ui32({2}, {0, 4})), ui32({2}, {5, 3}));
}

TEST_P(BinaryTest, FloatDivideAndRemainder) {
  expect_equal(bin(OpKind::kDivide, f32({4}, {1, -1, 0, 1}), f32({4}, {0.0, 0.0, 0.0, -0.0})),
               f32({4}, {kInf, -kInf, kNaN, -kInf}));
  expect_equal(
      bin(OpKind::kRemainder, f32({5}, {5.5, -5.5, 1, kInf, 3}), f32({5}, {2, 2, 0, 2, kInf})),
      f32({5}, {1.5, -1.5, kNaN, kNaN, 3}));
  expect_equal(bin(OpKind::kRemainder, f32({1}, {-4}), f32({1}, {2})), f32({1}, {-0.0}));
}

TEST_P(BinaryTest, Power) {
  // Negative exponents: 1 -> 1, -1 -> ±1, else 0. 3^21 wraps modulo 2^32.
  expect_equal(bin(OpKind::kPower, i32({9}, {2, 2, -2, 1, -1, -1, 3, 0, 3}),
                   i32({9}, {10, -1, 3, -5, -3, -4, 0, 0, 21})),
               i32({9}, {1024, 0, -8, 1, -1, 1, 1, 1, 1870418611}));
  expect_near(bin(OpKind::kPower, f64({4}, {2, -8, 0, 4}), f64({4}, {0.5, 1.0 / 3, -1, 0.5})),
              f64({4}, {std::sqrt(2.0), kNaN, kInf, 2}), 1e-15);
}

TEST_P(BinaryTest, MaximumMinimumPropagateNaNAndOrderZeros) {
  Tensor x = f32({5}, {kNaN, 1, -0.0, 0.0, 1});
  Tensor y = f32({5}, {1, kNaN, 0.0, -0.0, 2});
  expect_equal(bin(OpKind::kMaximum, x, y), f32({5}, {kNaN, kNaN, 0.0, 0.0, 2}));
  expect_equal(bin(OpKind::kMinimum, x, y), f32({5}, {kNaN, kNaN, -0.0, -0.0, 1}));
  expect_equal(bin(OpKind::kMaximum, i32({2}, {INT_MIN, 3}), i32({2}, {-1, 2})), i32({2}, {-1, 3}));
  expect_equal(bin(OpKind::kMinimum, ui32({1}, {0xFFFFFFFFu}), ui32({1}, {1})), ui32({1}, {1}));
}

TEST_P(BinaryTest, Atan2Quadrants) {
  expect_near(
      bin(OpKind::kAtan2, f64({5}, {1, 0.0, -0.0, 0.0, -1}), f64({5}, {1, -1, -1, 0.0, 0.0})),
      f64({5}, {M_PI / 4, M_PI, -M_PI, 0.0, -M_PI / 2}), 1e-15);
  expect_equal(bin(OpKind::kAtan2, f64({2}, {-0.0, kNaN}), f64({2}, {0.0, 1})),
               f64({2}, {-0.0, kNaN}));
}

TEST_P(BinaryTest, LogicalAndBitwise) {
  Tensor p = i1({4}, {0, 0, 1, 1}), q = i1({4}, {0, 1, 0, 1});
  expect_equal(bin(OpKind::kAnd, p, q), i1({4}, {0, 0, 0, 1}));
  expect_equal(bin(OpKind::kOr, p, q), i1({4}, {0, 1, 1, 1}));
  expect_equal(bin(OpKind::kXor, p, q), i1({4}, {0, 1, 1, 0}));
  expect_equal(bin(OpKind::kAnd, i32({1}, {12}), i32({1}, {10})), i32({1}, {8}));
  expect_equal(bin(OpKind::kOr, i32({1}, {12}), i32({1}, {10})), i32({1}, {14}));
  expect_equal(bin(OpKind::kXor, i32({1}, {12}), i32({1}, {-1})), i32({1}, {-13}));
}

TEST_P(BinaryTest, ShiftsByLargeAmounts) {
  // Shift amounts >= bit width (or negative, read as unsigned) give 0 / the sign fill.
  expect_equal(bin(OpKind::kShiftLeft, i32({4}, {1, 1, 1, -1}), i32({4}, {3, 31, 32, -1})),
               i32({4}, {8, INT_MIN, 0, 0}));
  expect_equal(bin(OpKind::kShiftRightLogical, i32({3}, {-1, 16, -1}), i32({3}, {28, 2, 32})),
               i32({3}, {15, 4, 0}));
  expect_equal(bin(OpKind::kShiftRightArithmetic, i32({5}, {-16, -1, 16, -5, INT_MIN}),
                   i32({5}, {2, 40, 40, 1, 31})),
               i32({5}, {-4, -1, 0, -3, -1}));
  expect_equal(bin(OpKind::kShiftLeft, ui8({2}, {255, 1}), ui8({2}, {1, 8})), ui8({2}, {254, 0}));
}

TEST_P(BinaryTest, CompareFloatIsIeee) {
  Tensor x = f32({3}, {kNaN, 1, -0.0}), y = f32({3}, {kNaN, 2, 0.0});
  expect_equal(cmp(x, y, "EQ"), i1({3}, {0, 0, 1}));
  expect_equal(cmp(x, y, "NE"), i1({3}, {1, 1, 0}));
  expect_equal(cmp(x, y, "LT"), i1({3}, {0, 1, 0}));
  expect_equal(cmp(x, y, "GE"), i1({3}, {0, 0, 1}));
}

TEST_P(BinaryTest, CompareTotalOrder) {
  // -NaN < -inf < -0 < +0 < +inf < +NaN.
  Tensor x = f32({5}, {-0.0, 0.0, kNaN, -kInf, kNaN});
  Tensor y = f32({5}, {0.0, -0.0, kInf, -kNaN, kNaN});
  expect_equal(cmp(x, y, "LT", "TOTALORDER"), i1({5}, {1, 0, 0, 0, 0}));
  expect_equal(cmp(x, y, "EQ", "TOTALORDER"), i1({5}, {0, 0, 0, 0, 1}));
  expect_equal(cmp(x, y, "GT", "TOTALORDER"), i1({5}, {0, 1, 1, 1, 0}));
}

TEST_P(BinaryTest, CompareIntegersSignedUnsignedAndBool) {
  expect_equal(cmp(i32({2}, {-1, 3}), i32({2}, {1, 3}), "LT", "SIGNED"), i1({2}, {1, 0}));
  expect_equal(cmp(ui32({2}, {0xFFFFFFFFu, 3}), ui32({2}, {1, 3}), "LT", "UNSIGNED"),
               i1({2}, {0, 0}));
  expect_equal(cmp(i32({2}, {-1, 3}), i32({2}, {1, 3}), "LE"), i1({2}, {1, 1}));
  expect_equal(cmp(i1({2}, {0, 1}), i1({2}, {1, 0}), "GT"), i1({2}, {0, 1}));
}

TEST_P(BinaryTest, ClampWithScalarAndTensorBounds) {
  Tensor got = run1({f32({}, {0}), f32({4}, {-1, 0.5, 2, kNaN}), f32({}, {1})},
                    [](Builder& b, const Values& a) { return Values{b.clamp(a[0], a[1], a[2])}; });
  expect_equal(got, f32({4}, {0, 0.5, 1, kNaN}));
  got = run1({i32({3}, {0, 5, -10}), i32({3}, {-3, 3, 3}), i32({}, {4})},
             [](Builder& b, const Values& a) { return Values{b.clamp(a[0], a[1], a[2])}; });
  expect_equal(got, i32({3}, {0, 4, 3}));
}

TEST_P(BinaryTest, SelectScalarAndElementwisePred) {
  auto sel = [&](const Tensor& p) {
    return run1({p, i32({3}, {1, 2, 3}), i32({3}, {10, 20, 30})},
                [](Builder& b, const Values& a) { return Values{b.select(a[0], a[1], a[2])}; });
  };
  expect_equal(sel(i1({}, {1})), i32({3}, {1, 2, 3}));
  expect_equal(sel(i1({}, {0})), i32({3}, {10, 20, 30}));
  expect_equal(sel(i1({3}, {0, 1, 0})), i32({3}, {10, 2, 30}));
}

TEST_P(BinaryTest, ZeroSize) {
  expect_equal(bin(OpKind::kAdd, f32({2, 0}, {}), f32({2, 0}, {})), f32({2, 0}, {}));
  expect_equal(cmp(i32({0}, {}), i32({0}, {}), "EQ"), i1({0}, {}));
}

NETSPEC_ON_BACKENDS(BinaryTest);

}  // namespace
}  // namespace netspec::testing
