// The cpu executor's pooling kernels (2-D reduce_window max/add and select_and_scatter) against
// the ref kernels: NCHW and NHWC layouts, overlapping windows, padding, ties (duplicate values
// make select's first-candidate rule matter) and GT vs GE selection. Values must be identical.
#include <cmath>
#include <random>

#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::OpKind;
using hlo::WindowOptions;

// Small integers so ties are frequent.
Tensor ints(Shape s, uint32_t seed) {
  return random_f32_from(s, seed, std::uniform_int_distribution<int>(-3, 3));
}

struct Case {
  Shape x;
  WindowOptions w;
};

std::vector<Case> cases() {
  std::vector<Case> cs;
  WindowOptions nchw;  // 2x2 stride 2 (the classic max-pool)
  nchw.window_dimensions = {1, 1, 2, 2};
  nchw.window_strides = {1, 1, 2, 2};
  cs.push_back({{3, 4, 8, 6}, nchw});
  WindowOptions ov;  // 3x3 stride 2, padding 1 (ResNet's stem pool), overlapping windows
  ov.window_dimensions = {1, 1, 3, 3};
  ov.window_strides = {1, 1, 2, 2};
  ov.padding = {{0, 0}, {0, 0}, {1, 1}, {1, 1}};
  cs.push_back({{2, 3, 9, 7}, ov});
  WindowOptions nhwc;  // NHWC, 3x2 window, stride (1, 2), asymmetric padding
  nhwc.window_dimensions = {1, 3, 2, 1};
  nhwc.window_strides = {1, 1, 2, 1};
  nhwc.padding = {{0, 0}, {0, 2}, {1, 0}, {0, 0}};
  cs.push_back({{2, 5, 6, 5}, nhwc});
  WindowOptions wide;  // rows of 301 outputs: interior runs longer than the kernel's 256 chunk
  wide.window_dimensions = {1, 1, 2, 3};
  wide.window_strides = {1, 1, 2, 2};
  wide.padding = {{0, 0}, {0, 0}, {1, 0}, {1, 1}};
  cs.push_back({{1, 2, 5, 601}, wide});
  return cs;
}

Shape window_out(const Shape& x, const WindowOptions& w) {
  Shape o;
  for (size_t d = 0; d < x.size(); ++d) {
    int64_t lo = w.padding.empty() ? 0 : w.padding[d].first;
    int64_t hi = w.padding.empty() ? 0 : w.padding[d].second;
    o.push_back((x[d] + lo + hi - w.window_dimensions[d]) / w.window_strides[d] + 1);
  }
  return o;
}

TEST(CpuWindow, PoolingEqualsRef) {
  uint32_t seed = 1;
  for (const Case& c : cases())
    for (OpKind k : {OpKind::kMaximum, OpKind::kAdd}) {
      Tensor x = ints(c.x, seed++);
      BodyFn body = [&](Builder& b, const Values& a) {
        Value* init = b.scalar(k == OpKind::kMaximum ? -1e30 : 0.5, DType::kF32);
        return Values{b.reduce_window(a[0], init, c.w, k)};
      };
      expect_equal(run_fn("cpu", {x}, body).at(0), run_fn("ref", {x}, body).at(0),
                   shape_str(c.x) + (k == OpKind::kMaximum ? " max" : " add"));
    }
}

// NaN (the first one propagates) and ±0 (-0 < +0) inside and on the border of the windows.
TEST(CpuWindow, MaxPoolSpecialValuesEqualRef) {
  const double nan = std::nan(""), inf = INFINITY;
  std::vector<double> v;
  for (int i = 0; i < 4 * 10; ++i) {
    const double pick[] = {0.0, -0.0, nan, -inf, inf, 1.0, -1.0, -0.0};
    v.push_back(pick[(i * 5 + i / 7) % 8]);
  }
  Tensor x = f32({1, 1, 4, 10}, v);
  WindowOptions w;
  w.window_dimensions = {1, 1, 2, 2};
  w.window_strides = {1, 1, 1, 2};
  w.padding = {{0, 0}, {0, 0}, {0, 1}, {1, 1}};
  BodyFn body = [&](Builder& b, const Values& a) {
    return Values{b.reduce_window(a[0], b.scalar(-inf, DType::kF32), w, OpKind::kMaximum)};
  };
  expect_equal(run_fn("cpu", {x}, body).at(0), run_fn("ref", {x}, body).at(0), "special values");
}

TEST(CpuWindow, SelectAndScatterEqualsRef) {
  uint32_t seed = 100;
  for (const Case& c : cases())
    for (const char* dir : {"GE", "GT", "LE"}) {
      Tensor x = ints(c.x, seed++);
      Tensor src = ints(window_out(c.x, c.w), seed++);
      BodyFn body = [&](Builder& b, const Values& a) {
        Value* init = b.scalar(0.25, DType::kF32);
        return Values{b.select_and_scatter(
            a[0], a[1], init, c.w,
            [&](Builder& r, const Values& p) { return Values{r.compare(p[0], p[1], dir)}; },
            [](Builder& r, const Values& p) { return Values{r.add(p[1], p[0])}; })};
      };
      expect_equal(run_fn("cpu", {x, src}, body).at(0), run_fn("ref", {x, src}, body).at(0),
                   shape_str(c.x) + " " + dir);
    }
}

TEST(CpuWindow, CheckModeAgrees) {
  Case c = cases()[1];
  Tensor x = ints(c.x, 7), src = ints(window_out(c.x, c.w), 8);
  BodyFn body = [&](Builder& b, const Values& a) {
    Value* y = b.reduce_window(a[0], b.scalar(-1e30, DType::kF32), c.w, OpKind::kMaximum);
    Value* dx = b.select_and_scatter(
        a[0], a[1], b.scalar(0, DType::kF32), c.w,
        [](Builder& r, const Values& p) { return Values{r.compare(p[0], p[1], "GE")}; },
        [](Builder& r, const Values& p) { return Values{r.add(p[0], p[1])}; });
    return Values{y, dx};
  };
  ::setenv("NETSPEC_CPU_CHECK", "1", 1);
  EXPECT_NO_THROW(run_fn("cpu", {x, src}, body));
  ::unsetenv("NETSPEC_CPU_CHECK");
}

}  // namespace
}  // namespace netspec::testing
