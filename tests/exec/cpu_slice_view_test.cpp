// Contiguous dynamic_slices are views at their run-time offset (kernels/dynamic_slice.cpp,
// plan.cpp, cpu_backend.cpp): no copy, the source's storage read in place. Each case runs on
// ref and on cpu (also in check mode) with equal results: a scan reading step i of stacked
// states (Mamba's backward pass), clamped starts, a slice returned as a loop carry (kept a
// copy), a source updated in place after its slice was read, a pointwise op reading a buffer
// and a slice of it, and a non-contiguous slice (a copy).
#include <cstdlib>

#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

Value* i32c(Builder& b, int64_t v) { return b.scalar(static_cast<double>(v), DType::kI32); }

// cpu (plain and check mode) == ref bit for bit; returns cpu's results.
std::vector<Tensor> cpu_equals_ref(const std::vector<Tensor>& in, const BodyFn& body) {
  const std::vector<Tensor> want = run_fn("ref", in, body);
  const std::vector<Tensor> got = run_fn("cpu", in, body);
  ::setenv("NETSPEC_CPU_CHECK", "1", 1);
  const std::vector<Tensor> checked = run_fn("cpu", in, body);
  ::unsetenv("NETSPEC_CPU_CHECK");
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    expect_equal(got[i], want[i], "result " + std::to_string(i));
    expect_equal(checked[i], want[i], "check mode, result " + std::to_string(i));
  }
  return got;
}

Tensor iota(const Shape& s, float from = 0) {
  Tensor t(DType::kF32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = from + 0.25f * float(i);
  return t;
}

// acc <- acc * 0.5 + states[i] (i = 0..T-1, states [T, B, D] from @main): one view per iteration.
TEST(CpuSliceView, ScanReadsStackedStatesWithoutCopies) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* states = b.add(a[0], a[0]);  // an arena value, not an argument
    auto r = b.while_(
        {i32c(b, 0), a[1]},
        [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 4), "LT")}; },
        [states](Builder& c, const Values& s) {
          Value* step = c.dynamic_slice(states, {s[0], i32c(c, 0), i32c(c, 0)}, {1, 3, 5});
          Value* half = c.constant_splat(0.5, s[1]->type);
          return Values{c.add(s[0], i32c(c, 1)), c.add(c.multiply(s[1], half), step)};
        });
    return Values{r[1]};
  };
  std::vector<Tensor> in = {iota({4, 3, 5}), iota({1, 3, 5}, 1)};
  EXPECT_EQ(cpu_plan_stats(in, body).views, 1);
  auto out = cpu_equals_ref(in, body);
  // Element 0, states[i][0][0] = 7.5 i: ((((1·.5 + 0)·.5 + 7.5)·.5 + 15)·.5 + 22.5) = 31.9375.
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], 31.9375f);
}

// Starts past either end clamp (to 0 and to T - 1) and the view lands there.
TEST(CpuSliceView, ClampedStartsViewTheClampedBlock) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* lo = b.dynamic_slice(a[0], {i32c(b, -3), i32c(b, 0)}, {2, 4});
    Value* hi = b.dynamic_slice(a[0], {i32c(b, 7), i32c(b, 0)}, {1, 4});
    return Values{b.add(lo, lo), b.multiply(hi, hi)};
  };
  std::vector<Tensor> in = {iota({5, 4})};
  EXPECT_EQ(cpu_plan_stats(in, body).views, 2);
  auto out = cpu_equals_ref(in, body);
  EXPECT_FLOAT_EQ(out[0].data<float>()[7], 3.5f);   // row 1, col 3 doubled: 2 * 1.75
  EXPECT_FLOAT_EQ(out[1].data<float>()[0], 16.f);  // row 4, col 0 squared: 4²
}

// A loop whose carry is a slice of another carry (kept a copy: the copy back into the state
// slots would read a slot already overwritten), and a loop that reads row i of its
// accumulator and then writes row i in place (the view is dead by then).
TEST(CpuSliceView, SliceCarriesAndInPlaceUpdatesAfterTheRead) {
  BodyFn body = [](Builder& b, const Values& a) {
    auto r = b.while_(
        {i32c(b, 0), a[0], a[1]},
        [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 3), "LT")}; },
        [](Builder& c, const Values& s) {
          Value* row = c.dynamic_slice(s[1], {s[0], i32c(c, 0)}, {1, 4});
          Value* upd = c.add(c.add(row, row), s[2]);
          Value* acc = c.dynamic_update_slice(s[1], upd, {s[0], i32c(c, 0)});
          Value* next = c.dynamic_slice(acc, {s[0], i32c(c, 0)}, {1, 4});  // returned: a copy
          return Values{c.add(s[0], i32c(c, 1)), acc, next};
        });
    return Values{r[1], r[2]};
  };
  std::vector<Tensor> in = {iota({3, 4}), iota({1, 4}, 1)};
  const exec::cpu::PlanStats st = cpu_plan_stats(in, body);
  EXPECT_EQ(st.views, 1);     // `row`; `next` is a loop result
  EXPECT_GE(st.inplace, 1);   // acc is still written in place
  cpu_equals_ref(in, body);
}

// y = x · 2 + broadcast(x[0]) with x dying there: y must not take x's buffer while the
// broadcast still reads row 0 of it through the view; and a slice of a middle dim (a copy).
TEST(CpuSliceView, BufferReadThroughAViewIsNotWrittenInPlaceAndStridedSlicesCopy) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* x = b.multiply(a[0], a[0]);
    Value* row0 = b.reshape(b.dynamic_slice(x, {i32c(b, 0), i32c(b, 0)}, {1, 64}), {64});
    Value* y = b.add(b.multiply(x, b.constant_splat(2, x->type)),
                     b.broadcast_in_dim(row0, {64, 64}, {1}));
    Value* mid = b.dynamic_slice(a[1], {i32c(b, 0), i32c(b, 1), i32c(b, 0)}, {2, 1, 3});
    return Values{y, b.add(mid, mid)};
  };
  std::vector<Tensor> in = {iota({64, 64}), iota({2, 4, 3})};  // 8 tiles of the fused loop
  EXPECT_EQ(cpu_plan_stats(in, body).views, 2);  // the row slice and its reshape; mid copies
  auto out = cpu_equals_ref(in, body);
  // y[63][63] = 2·x[63][63] + x[0][63], x = (0.25 i)².
  const float xl = 0.25f * 4095 * 0.25f * 4095, x063 = 0.25f * 63 * 0.25f * 63;
  EXPECT_FLOAT_EQ(out[0].data<float>()[4095], 2 * xl + x063);
}

}  // namespace
}  // namespace netspec::testing
