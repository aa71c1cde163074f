// Shape and data-movement ops on every backend: reshape, broadcast_in_dim, transpose, slice,
// dynamic_slice / dynamic_update_slice (start clamping), concatenate, pad (negative and
// interior padding), reverse, and zero-size tensors.
#include <cmath>
#include <limits>

#include "exec/test_util.h"
#include "hlo/passes.h"

namespace netspec::testing {
namespace {

class ShapeTest : public BackendTest {};

TEST_P(ShapeTest, Reshape) {
  Tensor got = run1({i32({2, 3}, {1, 2, 3, 4, 5, 6})}, [](Builder& b, const Values& a) {
    return Values{b.reshape(a[0], {3, 1, 2})};
  });
  expect_equal(got, i32({3, 1, 2}, {1, 2, 3, 4, 5, 6}));
}

TEST_P(ShapeTest, BroadcastInDimExpandsSizeOneDims) {
  // operand [2,1] -> [2,3,2] with dims (0, 2): result[i,j,k] = x[i, 0].
  Tensor got = run1({f32({2, 1}, {1, 2})}, [](Builder& b, const Values& a) {
    return Values{b.broadcast_in_dim(a[0], {2, 3, 2}, {0, 2})};
  });
  expect_equal(got, f32({2, 3, 2}, {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2}));
  got = run1({f32({}, {7})},
             [](Builder& b, const Values& a) { return Values{b.broadcast_in_dim(a[0], {2}, {})}; });
  expect_equal(got, f32({2}, {7, 7}));
  got = run1({f32({3}, {1, 2, 3})}, [](Builder& b, const Values& a) {
    return Values{b.broadcast_in_dim(a[0], {3, 2}, {0})};
  });
  expect_equal(got, f32({3, 2}, {1, 1, 2, 2, 3, 3}));
}

TEST_P(ShapeTest, ScalarSplatsOfEveryElementSize) {
  // A one-element operand fills the result (cpu: parallel fills over several chunks).
  auto splat = [&](const Tensor& x, Shape s, hlo::I64s dims) {
    return run1({x}, [&](Builder& b, const Values& a) {
      return Values{b.broadcast_in_dim(a[0], s, dims)};
    });
  };
  const int64_t n = 3 * 40000;
  auto filled = [&](DType dt, double v) {
    return make(dt, {3, 40000}, std::vector<double>(static_cast<size_t>(n), v));
  };
  expect_equal(splat(f64({1, 1}, {-2.5}), {3, 40000}, {0, 1}), filled(DType::kF64, -2.5));
  expect_equal(splat(f32({}, {1.25}), {3, 40000}, {}), filled(DType::kF32, 1.25));
  Tensor b1(DType::kBF16, {1}), bn(DType::kBF16, {3, 40000});
  b1.data<uint16_t>()[0] = 0x4040;  // 3.0
  std::fill(bn.data<uint16_t>(), bn.data<uint16_t>() + n, uint16_t{0x4040});
  expect_equal(splat(b1, {3, 40000}, {1}), bn);
  expect_equal(splat(i1({}, {1}), {3, 40000}, {}), filled(DType::kI1, 1));
  expect_equal(splat(i8({1}, {-7}), {3, 40000}, {0}), filled(DType::kI8, -7));
}

TEST_P(ShapeTest, Transpose3D) {
  // x[i,j,k] = 100i + 10j + k, shape [2,3,2]; permutation (2,0,1): result[k,i,j] = x[i,j,k].
  std::vector<int64_t> v;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) v.push_back(100 * i + 10 * j + k);
  Tensor got = run1({i32({2, 3, 2}, v)}, [](Builder& b, const Values& a) {
    return Values{b.transpose(a[0], {2, 0, 1})};
  });
  expect_equal(got, i32({2, 2, 3}, {0, 10, 20, 100, 110, 120, 1, 11, 21, 101, 111, 121}));
}

TEST_P(ShapeTest, SliceWithStrides) {
  Tensor x = i32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor got = run1({x}, [](Builder& b, const Values& a) {
    return Values{b.slice(a[0], {0, 1}, {3, 4}, {2, 2})};
  });
  expect_equal(got, i32({2, 2}, {1, 3, 9, 11}));
  got = run1({x}, [](Builder& b, const Values& a) {
    return Values{b.slice(a[0], {1, 2}, {1, 4})};
  });
  expect_equal(got, i32({0, 2}, {}));
}

TEST_P(ShapeTest, DynamicSliceClampsStart) {
  Tensor x = i32({4}, {10, 11, 12, 13});
  auto ds = [&](int64_t start) {
    return run1({x, i64({}, {start})}, [](Builder& b, const Values& a) {
      return Values{b.dynamic_slice(a[0], {a[1]}, {2})};
    });
  };
  expect_equal(ds(1), i32({2}, {11, 12}));
  expect_equal(ds(5), i32({2}, {12, 13}));   // clamped to dim - size = 2
  expect_equal(ds(-3), i32({2}, {10, 11}));  // clamped to 0
}

TEST_P(ShapeTest, DynamicUpdateSliceClampsStart) {
  auto dus = [&](int64_t r, int64_t c) {
    return run1({i32({2, 3}, {0, 0, 0, 0, 0, 0}), i32({1, 2}, {7, 8}), i32({}, {r}), i32({}, {c})},
                [](Builder& b, const Values& a) {
                  return Values{b.dynamic_update_slice(a[0], a[1], {a[2], a[3]})};
                });
  };
  expect_equal(dus(1, 0), i32({2, 3}, {0, 0, 0, 7, 8, 0}));
  expect_equal(dus(9, 9), i32({2, 3}, {0, 0, 0, 0, 7, 8}));
  expect_equal(dus(-1, -1), i32({2, 3}, {7, 8, 0, 0, 0, 0}));
}

TEST_P(ShapeTest, ConcatenateIncludingEmptyOperand) {
  Tensor got = run1({i32({2, 1}, {1, 2}), i32({2, 0}, {}), i32({2, 2}, {3, 4, 5, 6})},
                    [](Builder& b, const Values& a) {
                      return Values{b.concatenate({a[0], a[1], a[2]}, 1)};
                    });
  expect_equal(got, i32({2, 3}, {1, 3, 4, 2, 5, 6}));
  got = run1({i32({1, 2}, {1, 2}), i32({2, 2}, {3, 4, 5, 6})}, [](Builder& b, const Values& a) {
    return Values{b.concatenate({a[0], a[1]}, 0)};
  });
  expect_equal(got, i32({3, 2}, {1, 2, 3, 4, 5, 6}));
}

TEST_P(ShapeTest, PadNegativeAndInterior) {
  // [1,2,3] interior 1 -> [1,0,2,0,3]; low -1 drops the first; high 2 appends two pads.
  Tensor got = run1({f32({3}, {1, 2, 3}), f32({}, {0})}, [](Builder& b, const Values& a) {
    return Values{b.pad(a[0], a[1], {-1}, {2}, {1})};
  });
  expect_equal(got, f32({6}, {0, 2, 0, 3, 0, 0}));
  got = run1({i32({2, 2}, {1, 2, 3, 4}), i32({}, {-9})}, [](Builder& b, const Values& a) {
    return Values{b.pad(a[0], a[1], {1, 0}, {0, -1}, {0, 1})};
  });
  expect_equal(got, i32({3, 2}, {-9, -9, 1, -9, 3, -9}));
  got = run1({f32({0}, {}), f32({}, {5})},
             [](Builder& b, const Values& a) { return Values{b.pad(a[0], a[1], {1}, {2}, {3})}; });
  expect_equal(got, f32({3}, {5, 5, 5}));
}

TEST_P(ShapeTest, Reverse) {
  Tensor got = run1({i32({2, 3}, {1, 2, 3, 4, 5, 6})},
                    [](Builder& b, const Values& a) { return Values{b.reverse(a[0], {1})}; });
  expect_equal(got, i32({2, 3}, {3, 2, 1, 6, 5, 4}));
  got = run1({i32({2, 3}, {1, 2, 3, 4, 5, 6})}, [](Builder& b, const Values& a) {
    return Values{b.reverse(a[0], {0, 1})};
  });
  expect_equal(got, i32({2, 3}, {6, 5, 4, 3, 2, 1}));
}

TEST_P(ShapeTest, ZeroSize) {
  Tensor got = run1({f32({0, 3}, {})}, [](Builder& b, const Values& a) {
    return Values{b.transpose(a[0], {1, 0})};
  });
  expect_equal(got, f32({3, 0}, {}));
  got = run1({f32({0}, {})}, [](Builder& b, const Values& a) {
    return Values{b.broadcast_in_dim(a[0], {2, 0}, {1})};
  });
  expect_equal(got, f32({2, 0}, {}));
}

NETSPEC_ON_BACKENDS(ShapeTest);

}  // namespace
}  // namespace netspec::testing

namespace netspec::testing {
namespace {

// hlo::run_cleanup's sum-of-pads fold: the concatenate it makes gives the pads' sum (NaN and inf
// included; a -0 stays -0 where -0 + 0 gave +0, as the x + 0 -> x fold already does) on the ref
// and cpu executors.
TEST(SumOfPadsFold, ConcatenateEqualsThePaddedSum) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* zero = b.scalar(0.0, DType::kF32);
    auto pad = [&](Value* v, int64_t lo) { return b.pad(v, zero, {0, lo, 0}, {0, 12 - lo - 4, 0}); };
    return Values{b.add(b.add(pad(a[1], 4), pad(a[0], 0)), pad(a[2], 8))};
  };
  const Shape s{3, 4, 5};
  std::vector<Tensor> in = {random_f32(s, 1), random_f32(s, 2), random_f32(s, 3)};
  in[0].data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  in[1].data<float>()[1] = -0.0f;  // the sum gives +0 there, the concatenate -0 (equal)
  in[2].data<float>()[2] = std::numeric_limits<float>::infinity();
  auto plain = make_module({type_of(in[0]), type_of(in[1]), type_of(in[2])}, body);
  auto folded = hlo::clone_module(*plain);
  hlo::run_cleanup(*folded);
  int concats = 0;
  hlo::walk(*folded->funcs[0]->body, [&](const hlo::Op& op) {
    concats += op.kind == hlo::OpKind::kConcatenate;
  });
  ASSERT_EQ(concats, 1);
  const Tensor want = run_module("ref", plain, in).at(0);
  for (const char* be : {"ref", "cpu"}) {
    const Tensor got = run_module(be, std::shared_ptr<hlo::Module>(hlo::clone_module(*folded)),
                                  in).at(0);
    ASSERT_EQ(got.shape(), (Shape{3, 12, 5}));
    for (int64_t i = 0; i < got.numel(); ++i) {
      const float g = got.data<float>()[i], w = want.data<float>()[i];
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << be << " element " << i;
      } else {
        EXPECT_EQ(g, w) << be << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace netspec::testing
