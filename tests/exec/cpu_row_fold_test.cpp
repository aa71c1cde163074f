// Row folds in the cpu planner (plan.cpp add_fused_row_step, kernels/fusion_reduce.cpp): a reduce
// over the trailing dims of a plain fused group's output (LayerNorm's mean and variance,
// softmax's max and sum) runs inside the group's step on whole rows. The results must equal the
// unfused group + reduce (NETSPEC_NO_REDUCE_FUSION=1) bit for bit and the ref executor within
// f32 rounding (also in check mode); outputs with other readers are still written; reductions
// over leading dims, rows longer than a tile and non-constant inits stay unfused.
#include <cstdlib>
#include <string>

#include "exec/cpu/cpu_backend.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::OpKind;

// The folded run equals the unfused one bit for bit, and ref within f32 rounding (plain and in
// check mode, which compares every fused step's outputs with the ref kernels').
void expect_folds_exact(const std::vector<Tensor>& in, const BodyFn& body, const std::string& what) {
  auto fused = run_fn("cpu", in, body);
  ::setenv("NETSPEC_NO_REDUCE_FUSION", "1", 1);
  auto plain = run_fn("cpu", in, body);
  ::unsetenv("NETSPEC_NO_REDUCE_FUSION");
  auto want = run_fn("ref", in, body);
  ::setenv("NETSPEC_CPU_CHECK", "1", 1);
  auto checked = run_fn("cpu", in, body);
  ::unsetenv("NETSPEC_CPU_CHECK");
  ASSERT_EQ(fused.size(), plain.size());
  ASSERT_EQ(fused.size(), want.size());
  for (size_t i = 0; i < fused.size(); ++i) {
    expect_equal(fused[i], plain[i], what + " bit for bit, output " + std::to_string(i));
    expect_near(fused[i], want[i], 1e-5, 1e-5, what + " vs ref");
    expect_near(checked[i], want[i], 1e-5, 1e-5, what + " (check mode)");
  }
}

// LayerNorm over the last dim of [B, T, D] after a residual add, as layers/layer_norm.cpp emits
// it: the add's output is summed (mean) and also read by the centring; (x - μ)² is read only by
// the variance sum.
Values layer_norm(Builder& b, const Values& a) {
  // The residual (x + 0.5 h): a group whose output the mean reads.
  Value* x = b.add(a[0], b.multiply(a[1], b.constant_splat(0.5, a[1]->type)));
  const Shape& s = x->type.shape();
  const int64_t d = s.back(), r = static_cast<int64_t>(s.size()) - 1;
  hlo::I64s keep;
  for (int64_t i = 0; i < r; ++i) keep.push_back(i);
  Value* zero = b.scalar(0, DType::kF32);
  Value* sum = b.reduce(x, zero, {r}, OpKind::kAdd);
  Value* inv_d = b.constant_splat(1.0 / double(d), sum->type);
  Value* mean = b.broadcast_in_dim(b.multiply(sum, inv_d), s, keep);
  Value* cen = b.subtract(x, mean);
  Value* var = b.multiply(b.reduce(b.multiply(cen, cen), zero, {r}, OpKind::kAdd), inv_d);
  Value* inv_std = b.rsqrt(b.add(var, b.constant_splat(1e-5, var->type)));
  Value* y = b.multiply(cen, b.broadcast_in_dim(inv_std, s, keep));
  return {b.add(b.multiply(y, b.broadcast_in_dim(a[2], s, {r})), x), var};
}

TEST(CpuRowFold, LayerNormSumsFoldIntoTheirGroups) {
  // Rows of 128 (4 per tile), 100 (not a multiple of 16: a tail after the lanes), 24 (< 32: the
  // in-order sum), 512 (one row per tile), 8 x 1 x 64 (a size-1 dim inside the kept ones), and
  // 37 and 40 short rows (in-order sums 16 rows side by side, then the rest one by one).
  for (const Shape& s : std::vector<Shape>{{3, 7, 128}, {5, 100}, {9, 24}, {3, 512}, {8, 1, 64},
                                           {37, 16}, {40, 24}}) {
    const std::string what = "layer norm " + shape_str(s);
    std::vector<Tensor> in = {random_f32(s, 1), random_f32(s, 2), random_f32({s.back()}, 3)};
    auto st = cpu_plan_stats(in, layer_norm);
    EXPECT_EQ(st.ref_steps, 0) << what << ": " << st.fallback_ops;
    EXPECT_EQ(st.fused_row_reduces, 2) << what;  // the mean's sum and the variance's sum
    expect_folds_exact(in, layer_norm, what);
  }
}

// Softmax over the last dim, the attention form: max (of a scaled score, a group output), then
// exp(s - max) written (the normaliser reads it) and summed in the same step.
Values softmax(Builder& b, const Values& a) {
  const Shape& s = a[0]->type.shape();
  const int64_t r = static_cast<int64_t>(s.size()) - 1;
  hlo::I64s keep;
  for (int64_t i = 0; i < r; ++i) keep.push_back(i);
  Value* scaled = b.multiply(a[0], b.constant_splat(0.125, a[0]->type));
  Value* scaled2 = b.add(scaled, a[1]);  // two ops: a group, not a lone multiply
  Value* mx = b.reduce(scaled2, b.scalar(-1e30, DType::kF32), {r}, OpKind::kMaximum);
  Value* e = b.exponential(b.subtract(scaled2, b.broadcast_in_dim(mx, s, keep)));
  Value* e2 = b.multiply(e, b.constant_splat(1.0, e->type));
  Value* sum = b.reduce(e2, b.scalar(0, DType::kF32), {r}, OpKind::kAdd);
  return {b.divide(e2, b.broadcast_in_dim(sum, s, keep)), mx, sum};
}

TEST(CpuRowFold, SoftmaxMaxAndSumFoldAndExpStillWritten) {
  for (const Shape& s : std::vector<Shape>{{2, 4, 64, 64}, {6, 33}}) {
    const std::string what = "softmax " + shape_str(s);
    std::vector<Tensor> in = {random_f32(s, 4, -8, 8), random_f32(s, 5)};
    auto st = cpu_plan_stats(in, softmax);
    EXPECT_EQ(st.ref_steps, 0) << what << ": " << st.fallback_ops;
    EXPECT_EQ(st.fused_row_reduces, 2) << what;  // max and sum
    expect_folds_exact(in, softmax, what);
  }
}

// What must stay unfused: a sum over a leading dim (column sums, bias gradients), a row longer
// than a tile (513), and a reduce whose init is not a constant.
TEST(CpuRowFold, ColumnsLongRowsAndComputedInitsStayUnfused) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* x = b.multiply(b.add(a[0], a[0]), a[0]);
    Value* cols = b.reduce(x, b.scalar(0, DType::kF32), {0}, OpKind::kAdd);
    Value* y = b.multiply(b.add(a[1], a[1]), a[1]);
    Value* long_rows = b.reduce(y, b.scalar(0, DType::kF32), {1}, OpKind::kAdd);
    Value* z = b.multiply(b.add(a[2], a[2]), a[2]);
    Value* init = b.reshape(b.slice(a[3], {0}, {1}, {1}), {});
    Value* computed = b.reduce(z, init, {1}, OpKind::kAdd);
    return Values{cols, long_rows, computed};
  };
  std::vector<Tensor> in = {random_f32({6, 40}, 6), random_f32({3, 513}, 7),
                            random_f32({4, 16}, 8), random_f32({2}, 9)};
  auto st = cpu_plan_stats(in, body);
  EXPECT_EQ(st.fused_row_reduces, 0);
  expect_folds_exact(in, body, "unfused reduces");
}

}  // namespace
}  // namespace netspec::testing
