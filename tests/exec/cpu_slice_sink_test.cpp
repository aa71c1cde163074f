// Slices sunk into their producer on the cpu executor (hlo/slice_sink.cpp, run by the planner):
// attention's fused q/k/v projection (dot + bias, three slices) becomes three products, and a
// slice of one token's rows of a product becomes the product of that token's rows; both against
// the ref executor on the module as written. Producers with another reader keep their slices.
#include <cstdlib>

#include "exec/cpu/cpu_backend.h"
#include "hlo/passes.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

struct EnvVar {
  std::string name;
  EnvVar(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
  ~EnvVar() { ::unsetenv(name.c_str()); }
};

// x [B, T, C] · W [3C, C]ᵀ + b -> q, k, v [B, T, C] (vit's layout), and the rows of token 0 of
// x · W2 [N, C]ᵀ (a class-token head).
constexpr int64_t B = 2, T = 65, C = 40, N = 24;  // q, k, v slices of 5200 >= 4096 values
hlo::DotDims last_with_last() {
  hlo::DotDims d;
  d.lhs_contracting = {2};
  d.rhs_contracting = {1};
  return d;
}

Values qkv(Builder& b, const Values& a) {
  Value* y = b.dot_general(a[0], a[1], last_with_last());
  Value* y_b = b.add(y, b.broadcast_in_dim(a[2], {B, T, 3 * C}, {2}));
  Values out;
  for (int64_t i = 0; i < 3; ++i)
    out.push_back(b.slice(y_b, {0, 0, i * C}, {B, T, (i + 1) * C}));
  Value* h = b.dot_general(a[0], a[3], last_with_last());  // [B, T, N]
  out.push_back(b.slice(h, {0, 0, 0}, {B, 1, N}));
  return out;
}

// The same, but the biased projection is also returned whole: its slices must stay.
Values qkv_and_whole(Builder& b, const Values& a) {
  Values out = qkv(b, a);
  out.push_back(out[0]->def->operand(0));
  return out;
}

std::vector<hlo::Type> types() {
  auto f32 = [](Shape s) { return hlo::Type::tensor(DType::kF32, std::move(s)); };
  return {f32({B, T, C}), f32({3 * C, C}), f32({3 * C}), f32({N, C})};
}
std::vector<Tensor> inputs() {
  return {random_f32({B, T, C}, 1), random_f32({3 * C, C}, 2), random_f32({3 * C}, 3),
          random_f32({N, C}, 4)};
}

TEST(CpuSliceSink, QkvAndTokenRowsBecomeProductsAndMatchRef) {
  const std::vector<Tensor> want = run_module("ref", make_module(types(), qkv), inputs());
  const std::vector<Tensor> got = run_module("cpu", make_module(types(), qkv), inputs());
  ASSERT_EQ(got.size(), 4u);
  for (size_t i = 0; i < 4; ++i) expect_near(got[i], want[i], 1e-5, 1e-5);
  auto m = make_module(types(), qkv);
  // q, k, v: the add's 3 slices, then the dot's and the broadcast's 3 each; the token slice: 1.
  EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0]).slices_sunk, 10);
  // The rewrite, on a copy: 4 products, no [B, T, 3C] value left.
  auto copy = hlo::clone_module(*m);
  hlo::sink_slices(*copy->funcs[0]);
  int dots = 0, wide = 0;
  hlo::walk(*copy->funcs[0]->body, [&](const hlo::Op& op) {
    dots += op.kind == hlo::OpKind::kDotGeneral;
    for (const auto& r : op.results) wide += r->type.shape() == Shape{B, T, 3 * C};
  });
  EXPECT_EQ(dots, 4);
  EXPECT_EQ(wide, 0);
  EnvVar off("NETSPEC_NO_SLICE_SINK", "1");
  EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0]).slices_sunk, 0);
  const std::vector<Tensor> unsunk = run_module("cpu", make_module(types(), qkv), inputs());
  for (size_t i = 0; i < 4; ++i) expect_near(unsunk[i], want[i], 1e-5, 1e-5);
}

TEST(CpuSliceSink, ProducerWithAnotherReaderKeepsItsSlices) {
  auto m = make_module(types(), qkv_and_whole);
  // Only the token slice sinks: the biased projection is a result too.
  EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0]).slices_sunk, 1);
  const std::vector<Tensor> want = run_module("ref", make_module(types(), qkv_and_whole), inputs());
  const std::vector<Tensor> got = run_module("cpu", make_module(types(), qkv_and_whole), inputs());
  ASSERT_EQ(got.size(), 5u);
  for (size_t i = 0; i < 5; ++i) expect_near(got[i], want[i], 1e-5, 1e-5);
}

}  // namespace
}  // namespace netspec::testing
