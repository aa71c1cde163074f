// reduce (single and variadic with an arbitrary body), reduce_window (padding, base and window
// dilations, init values in padding per the spec), select_and_scatter and map on every backend.
#include "exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::OpKind;
using hlo::WindowOptions;

class ReduceWindowTest : public BackendTest {
 protected:
  Tensor reduce(const Tensor& x, double init, hlo::I64s dims, OpKind k) {
    return run1({x}, [&](Builder& b, const Values& a) {
      return Values{b.reduce(a[0], b.scalar(init, x.dtype()), dims, k)};
    });
  }
  Tensor rw(const Tensor& x, double init, const WindowOptions& w, OpKind k) {
    return run1({x}, [&](Builder& b, const Values& a) {
      return Values{b.reduce_window(a[0], b.scalar(init, x.dtype()), w, k)};
    });
  }
};

TEST_P(ReduceWindowTest, ReduceSumMaxAndInit) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_equal(reduce(x, 0, {1}, OpKind::kAdd), f32({2}, {6, 15}));
  expect_equal(reduce(x, 0, {0}, OpKind::kAdd), f32({3}, {5, 7, 9}));
  expect_equal(reduce(x, 10, {0, 1}, OpKind::kAdd), f32({}, {31}));  // init counted once
  expect_equal(reduce(x, -kInf, {0, 1}, OpKind::kMaximum), f32({}, {6}));
  expect_equal(reduce(f32({3}, {1, kNaN, 3}), -kInf, {0}, OpKind::kMaximum), f32({}, {kNaN}));
  expect_equal(reduce(i32({2, 2}, {1, 2, 3, 4}), 1, {1}, OpKind::kMultiply), i32({2}, {2, 12}));
}

TEST_P(ReduceWindowTest, ReduceZeroSizeGivesInit) {
  expect_equal(reduce(f32({2, 0}, {}), 7, {1}, OpKind::kAdd), f32({2}, {7, 7}));
  expect_equal(reduce(f32({0, 2}, {}), 7, {1}, OpKind::kAdd), f32({0}, {}));
}

TEST_P(ReduceWindowTest, VariadicArgmaxWithCustomBody) {
  // (value, index) pairs; the body keeps the larger value, the smaller index on ties.
  auto got = run(
      {f32({5}, {3, 7, 7, 1, kNaN}), i32({5}, {0, 1, 2, 3, 4})}, [](Builder& b, const Values& a) {
        Value* init_v = b.scalar(-kInf, DType::kF32);
        Value* init_i = b.scalar(0, DType::kI32);
        return b.reduce({a[0], a[1]}, {init_v, init_i}, {0}, [](Builder& r, const Values& p) {
          // p = (acc_v, acc_i, x_v, x_i)
          Value* gt = r.compare(p[2], p[0], "GT");
          Value* eq = r.compare(p[2], p[0], "EQ");
          Value* lt_i = r.compare(p[3], p[1], "LT");
          Value* take = r.or_(gt, r.and_(eq, lt_i));
          return Values{r.select(take, p[2], p[0]), r.select(take, p[3], p[1])};
        });
      });
  ASSERT_EQ(got.size(), 2u);
  expect_equal(got[0], f32({}, {7}));  // NaN never compares GT, so it is skipped
  expect_equal(got[1], i32({}, {1}));
}

TEST_P(ReduceWindowTest, ReduceWindow1D) {
  Tensor x = f32({5}, {1, 2, 3, 4, 5});
  WindowOptions w;
  w.window_dimensions = {2};
  expect_equal(rw(x, 0, w, OpKind::kAdd), f32({4}, {3, 5, 7, 9}));
  w.padding = {{1, 1}};
  expect_equal(rw(x, 0, w, OpKind::kAdd), f32({6}, {1, 3, 5, 7, 9, 5}));
  // Base dilation 2: [1,_,2,_,3,_,4,_,5], window 3, stride 2.
  WindowOptions bd;
  bd.window_dimensions = {3};
  bd.window_strides = {2};
  bd.base_dilations = {2};
  expect_equal(rw(x, 0, bd, OpKind::kAdd), f32({4}, {3, 5, 7, 9}));
  // Window dilation 2: window {x, x+2}.
  WindowOptions wd;
  wd.window_dimensions = {2};
  wd.window_dilations = {2};
  expect_equal(rw(x, -kInf, wd, OpKind::kMaximum), f32({3}, {3, 4, 5}));
}

TEST_P(ReduceWindowTest, PaddingContributesInitValues) {
  // Spec: inputs are padded with init_value and each window folds from init: with init 1,
  // window 2 and padding (1, 0): [1+1+1, 1+1+2, 1+2+3, 1+3+4, 1+4+5].
  WindowOptions w;
  w.window_dimensions = {2};
  w.padding = {{1, 0}};
  expect_equal(rw(f32({5}, {1, 2, 3, 4, 5}), 1, w, OpKind::kAdd), f32({5}, {3, 4, 6, 8, 10}));
}

TEST_P(ReduceWindowTest, MaxPool2D) {
  WindowOptions w;
  w.window_dimensions = {2, 2};
  w.window_strides = {2, 2};
  Tensor x = f32({4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  expect_equal(rw(x, -kInf, w, OpKind::kMaximum), f32({2, 2}, {6, 8, 14, 16}));
}

Tensor select_scatter(const std::string& be, const Tensor& x, const Tensor& src,
                      const WindowOptions& w) {
  return run_fn(
             be, {x, src},
             [&](Builder& b, const Values& a) {
               Value* init = b.scalar(0, x.dtype());
               return Values{b.select_and_scatter(
                   a[0], a[1], init, w,
                   [](Builder& r, const Values& p) { return Values{r.compare(p[0], p[1], "GE")}; },
                   [](Builder& r, const Values& p) { return Values{r.add(p[0], p[1])}; })};
             })
      .at(0);
}

TEST_P(ReduceWindowTest, SelectAndScatter) {
  WindowOptions w;
  w.window_dimensions = {2};
  w.window_strides = {2};
  expect_equal(select_scatter(backend(), f32({6}, {1, 5, 2, 8, 3, 4}), f32({3}, {10, 20, 30}), w),
               f32({6}, {0, 10, 0, 20, 0, 30}));
  // Overlapping windows both pick 5: contributions add up.
  WindowOptions o;
  o.window_dimensions = {2};
  expect_equal(select_scatter(backend(), f32({3}, {1, 5, 2}), f32({2}, {1, 2}), o),
               f32({3}, {0, 3, 0}));
  // Ties keep the first candidate (GE is true for equal values).
  expect_equal(select_scatter(backend(), f32({2}, {3, 3}), f32({1}, {9}), o), f32({2}, {9, 0}));
  // Padding is never selected.
  WindowOptions p;
  p.window_dimensions = {2};
  p.window_strides = {2};
  p.padding = {{1, 0}};
  expect_equal(select_scatter(backend(), f32({2}, {-1, -5}), f32({1}, {4}), p), f32({2}, {4, 0}));
}

TEST_P(ReduceWindowTest, Map) {
  Tensor got = run1({f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})}, [](Builder& b, const Values& a) {
    return b.map({a[0], a[1]}, {0}, [](Builder& r, const Values& p) {
      return Values{r.add(r.multiply(p[0], p[1]), r.scalar(1, DType::kF32))};
    });
  });
  expect_equal(got, f32({3}, {5, 11, 19}));
}

TEST_P(ReduceWindowTest, ZeroSizeWindowsAndOperands) {
  WindowOptions w;
  w.window_dimensions = {2};
  expect_equal(rw(f32({1}, {3}), 0, w, OpKind::kAdd), f32({0}, {}));  // window larger than input
  w.padding = {{1, 0}};
  expect_equal(rw(f32({1}, {3}), 0, w, OpKind::kAdd), f32({1}, {3}));
  WindowOptions z;
  z.window_dimensions = {1, 2};
  expect_equal(rw(f32({0, 4}, {}), 0, z, OpKind::kAdd), f32({0, 3}, {}));
}

NETSPEC_ON_BACKENDS(ReduceWindowTest);

}  // namespace
}  // namespace netspec::testing
