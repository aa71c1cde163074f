// Transposes folded into dot_general on the cpu executor: the HLO pass that lets a dot read a
// transposed operand through its dimension numbers (hlo/dot_fold.cpp), dot.cpp's strided
// operands (a stride per batch dim) and the planner's fold of a transpose that is a dot's only
// reader (the dot writes the transposed layout, column-major results by C^T = B^T A^T).
// Attention's head split and merge as vit emits them, against the ref executor on the unfolded
// module; plan counts say the transposes are gone.
#include <cstdlib>

#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/kernels.h"
#include "hlo/passes.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::DotDims;

DotDims batched(int64_t lhs_contracting, int64_t rhs_contracting) {
  DotDims d;
  d.lhs_batching = d.rhs_batching = {0, 1};
  d.lhs_contracting = {lhs_contracting};
  d.rhs_contracting = {rhs_contracting};
  return d;
}

// q, k, v: [B, T, H, D]. Returns s = q·kᵀ [B, H, T, T], the merged p·v [B, T, H, D] and a
// gradient-like qᵀ·s [B, H, D, T] transposed to [B, T, H, D] (a column-major dot result).
Values attention(Builder& b, const Values& a) {
  const hlo::I64s split{0, 2, 1, 3};
  Value* q = b.transpose(a[0], split);
  Value* k = b.transpose(a[1], split);
  Value* v = b.transpose(a[2], split);
  Value* s = b.dot_general(q, k, batched(3, 3));
  Value* o = b.dot_general(s, v, batched(3, 2));
  Value* g = b.dot_general(q, s, batched(2, 2));  // [B, H, D, T]
  return {s, b.transpose(o, split), b.transpose(g, {0, 3, 1, 2})};
}

struct EnvVar {
  std::string name;
  EnvVar(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
  ~EnvVar() { ::unsetenv(name.c_str()); }
};

TEST(CpuDotFold, AttentionTransposesFoldAndMatchRef) {
  const Shape x{2, 5, 3, 4};  // B, T, H, D (odd sizes: no accidental contiguity)
  const Type t = Type::tensor(DType::kF32, x);
  const std::vector<Tensor> in{random_f32(x, 1), random_f32(x, 2), random_f32(x, 3)};
  const std::vector<Tensor> want = run_module("ref", make_module({t, t, t}, attention), in);
  const std::vector<Tensor> got = run_module("cpu", make_module({t, t, t}, attention), in);
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i) expect_near(got[i], want[i], 1e-5, 1e-5);
  auto m = make_module({t, t, t}, attention);
  const exec::cpu::PlanStats st = exec::cpu::plan_stats(*m->funcs[0]);
  EXPECT_EQ(st.dot_transposes_folded, 4);  // q twice, k, v
  // oneDNN's brgemm matmul (AVX-512) takes the strides, and without it one product per batch
  // reads them in place (dot.cpp compile_per_batch_dot): the five transposes get no step.
  EXPECT_EQ(st.steps, 3) << "transposes should have no step of their own";
  EXPECT_EQ(st.ref_steps, 0);
  EnvVar off("NETSPEC_NO_DOT_FOLD", "1");
  EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0]).steps, 8);
  const std::vector<Tensor> unfolded = run_module("cpu", make_module({t, t, t}, attention), in);
  for (size_t i = 0; i < 3; ++i) expect_near(unfolded[i], want[i], 1e-5, 1e-5);
}

TEST(CpuDotFold, VitSizedAttentionMatchesRefInCheckMode) {
  // vit-cifar-tiny's shapes: 64 tokens, 4 heads of 32; NETSPEC_CPU_CHECK runs the ref kernel
  // beside each step (the folded transposes included) and fails on any disagreement.
  EnvVar check("NETSPEC_CPU_CHECK", "1");
  const Shape x{2, 64, 4, 32};
  const Type t = Type::tensor(DType::kF32, x);
  const std::vector<Tensor> in{random_f32(x, 4), random_f32(x, 5), random_f32(x, 6)};
  const std::vector<Tensor> got = run_module("cpu", make_module({t, t, t}, attention), in);
  const std::vector<Tensor> want = run_module("ref", make_module({t, t, t}, attention), in);
  for (size_t i = 0; i < 3; ++i) expect_near(got[i], want[i], 1e-4, 1e-5);
}

TEST(CpuDotFold, TransposeWithAnotherReaderStaysAndDotStillFolds) {
  const Shape x{3, 4, 5};
  const Type t = Type::tensor(DType::kF32, x);
  BodyFn body = [](Builder& b, const Values& a) {
    Value* xt = b.transpose(a[0], {1, 0, 2});  // [4, 3, 5], also returned
    DotDims d;  // batch 0, contract 2: [4, 3, 3]
    d.lhs_batching = d.rhs_batching = {0};
    d.lhs_contracting = d.rhs_contracting = {2};
    return Values{b.dot_general(xt, xt, d), xt};
  };
  const std::vector<Tensor> in{random_f32(x, 7)};
  const auto want = run_module("ref", make_module({t}, body), in);
  const auto got = run_module("cpu", make_module({t}, body), in);
  expect_near(got[0], want[0], 1e-5, 1e-5);
  expect_equal(got[1], want[1]);
  auto m = make_module({t}, body);
  const exec::cpu::PlanStats st = exec::cpu::plan_stats(*m->funcs[0]);
  EXPECT_EQ(st.dot_transposes_folded, 2);
  EXPECT_EQ(st.steps, 2);  // the transpose (a result) and the dot reading x directly
}

}  // namespace
}  // namespace netspec::testing
