// Generated code for fused groups (exec/cpu/kernels/fusion_jit.cpp): every op it generates, on
// special values (NaN, ±0, ±inf, denormals), over domains the 8- and 16-lane vectors and the
// 512-value tiles do not divide, with more live values than registers and more streams than
// pointer registers, gives the interpreter's bits (NETSPEC_FUSION_JIT=0) and ref's values, at
// both widths (the 16-lane AVX-512 code where the CPU has it, and NETSPEC_FUSION_JIT_LANES=8).
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/dnnl_util.h"
#include "exec/cpu/kernels.h"
#include "exec/cpu/kernels/fusion_program.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::OpKind;

bool avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// oneDNN's effective ISA (the CPU, capped by ONEDNN_MAX_CPU_ISA) has AVX-512: 16 lanes.
bool avx512() { return exec::cpu::onednn_has_isa(dnnl::cpu_isa::avx512_core); }

// The module's outputs with generated code forced on (the CPU's widest vectors, and 8 lanes) and
// off, and the planner's counts of generated instructions in each.
struct Both {
  std::vector<Tensor> jit, jit8, interp;
  int generated_on = 0, generated_off = 0;
};
Both run_both(const std::vector<Tensor>& in, const BodyFn& body) {
  Both r;
  ::setenv("NETSPEC_FUSION_JIT", "1", 1);
  r.generated_on = cpu_plan_stats(in, body).fused_generated;
  r.jit = run_fn("cpu", in, body);
  ::setenv("NETSPEC_FUSION_JIT_LANES", "8", 1);
  r.jit8 = run_fn("cpu", in, body);
  ::unsetenv("NETSPEC_FUSION_JIT_LANES");
  ::setenv("NETSPEC_FUSION_JIT", "0", 1);
  r.generated_off = cpu_plan_stats(in, body).fused_generated;
  r.interp = run_fn("cpu", in, body);
  ::unsetenv("NETSPEC_FUSION_JIT");
  return r;
}

// Both widths of generated code give the interpreter's bits.
void expect_jit_equal(const Both& r, size_t i, const std::string& what) {
  expect_equal(r.jit[i], r.interp[i], what);
  expect_equal(r.jit8[i], r.interp[i], what + " (8 lanes)");
}

TEST(FusionJit, SixteenLanesWhereTheCpuHasAvx512AndEightWhenAsked) {
  if (!avx2_fma()) GTEST_SKIP() << "generated code needs AVX2 and FMA";
  EXPECT_EQ(exec::cpu::fused::fusion_jit_lanes(), avx512() ? 16 : 8);
  ::setenv("NETSPEC_FUSION_JIT_LANES", "8", 1);
  EXPECT_EQ(exec::cpu::fused::fusion_jit_lanes(), 8);
  ::unsetenv("NETSPEC_FUSION_JIT_LANES");
}

// x with special values spread over it (every 13th element one of them).
Tensor with_specials(Tensor x) {
  const float inf = std::numeric_limits<float>::infinity();
  const float sp[] = {std::numeric_limits<float>::quiet_NaN(), 0.f, -0.f, inf, -inf,
                      1e-40f, -1e-40f, 3e38f, -3e38f, 4.f, -4.f, 1.f, 0.5f};
  float* d = x.data<float>();
  for (int64_t i = 0, k = 0; i < x.numel(); i += 13, ++k) d[i] = sp[k % std::size(sp)];
  return x;
}

// Each generated kind (exp and logistic included), with log and tanh between them (interpreted
// steps that cut the generated runs), scalar and row broadcasts, an i1 input and an i1 output.
Values every_op(Builder& b, const Values& a) {
  const Shape s = a[0]->type.shape();
  auto splat = [&](double v) {
    return b.broadcast_in_dim(b.constant_splat(v, Type::tensor(DType::kF32, {})), s, {});
  };
  Value *x = a[0], *y = a[1];
  Value* row = b.broadcast_in_dim(a[2], s, {1});
  Value* sum = b.add(x, row);
  Value* diff = b.subtract(sum, y);
  Value* prod = b.multiply(diff, splat(0.75));
  Value* quot = b.divide(prod, y);
  Value* mx = b.maximum(x, y);
  Value* mn = b.minimum(y, x);
  Value* relu = b.maximum(x, splat(0));
  Value* neg = b.negate(b.abs(quot));
  Value* rt = b.sqrt(b.abs(x));
  Value* rs = b.rsqrt(y);
  Value* erf = b.erf(b.multiply(x, splat(0.7071067811865476)));
  Value* e = b.exponential(b.minimum(neg, splat(0)));
  Value* after_exp = b.add(b.multiply(e, mx), mn);
  Value* lg = b.log(b.add(b.abs(y), splat(1)));
  Value* th = b.tanh(after_exp);
  Value* lo = b.logistic(lg);
  Value* cl = b.clamp(splat(-1.5), b.add(th, lo), splat(1.25));
  Value* cl2 = b.clamp(y, x, splat(2));  // lo a tensor
  Value* masks[6];
  const char* dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (int k = 0; k < 6; ++k) masks[k] = b.compare(x, y, dirs[k]);
  Value* m = b.or_(b.and_(masks[2], b.not_(masks[0])), b.and_(masks[5], a[3]));
  Value* m2 = b.or_(masks[1], b.and_(masks[3], masks[4]));
  Value* sel = b.select(m, cl, b.select(m2, erf, rt));
  Value* total = b.add(b.add(sel, cl2), b.multiply(rs, relu));
  return Values{total, sel, quot, erf, cl, m, m2, b.compare(total, x, "GT"), mx, mn, relu, neg,
                rt, rs, cl2, b.not_(masks[0]), b.select(masks[4], x, y), e,
                b.exponential(b.multiply(x, splat(30))), lo,
                b.logistic(b.multiply(x, splat(40)))};
}

TEST(FusionJit, EveryGeneratedOpEqualsTheInterpreterBitForBit) {
  if (!avx2_fma()) GTEST_SKIP() << "generated code needs AVX2 and FMA";
  // 37 x 131: 4847 values, not a multiple of 8 or 16 (a masked last vector) nor of 512 (a short
  // tile); 3 x 8: one tile of 24 (3 full vectors of 8; 16 lanes: one and a masked one); 2 x 16:
  // two full vectors of 16; 1 x 5: a masked vector alone.
  for (const Shape& s : std::vector<Shape>{{37, 131}, {3, 8}, {2, 16}, {1, 5}}) {
    const std::string what = shape_str(s);
    Tensor m(DType::kI1, s);
    for (int64_t i = 0; i < m.numel(); ++i) m.data<bool>()[i] = (i * 7919) % 3 != 0;
    std::vector<Tensor> in{with_specials(random_f32(s, 1, -3, 3)), random_f32(s, 2, 0.1, 3),
                           random_f32({s[1]}, 3), m};
    // Pairs (x, y) where the ops' special cases differ: equal values for EQ / LE / GE, zeros
    // of both signs both ways (maximum / minimum pick by sign), a NaN on either side.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::pair<float, float> pairs[] = {{-0.f, 0.f}, {0.f, -0.f}, {nan, 1.f}, {1.f, nan},
                                             {2.f, 2.f},  {-0.f, -0.f}, {nan, nan}};
    float *x = in[0].data<float>(), *y = in[1].data<float>();
    for (int64_t i = 1, k = 0; i < in[0].numel(); i += 3, ++k)
      std::tie(x[i], y[i]) = pairs[k % std::size(pairs)];
    Both r = run_both(in, every_op);
    EXPECT_GE(r.generated_on, 30) << what;
    EXPECT_EQ(r.generated_off, 0) << what;
    auto want = run_fn("ref", in, every_op);
    ASSERT_EQ(r.jit.size(), r.interp.size());
    for (size_t i = 0; i < r.jit.size(); ++i) {
      expect_jit_equal(r, i, what + " output " + std::to_string(i));
      if (r.jit[i].dtype() == DType::kF32)
        expect_near(r.jit[i], want[i], 1e-5, 1e-5, what + " vs ref, output " + std::to_string(i));
    }
  }
}

// 14 inputs and 16 values live at once (30 and 32: beyond the 26 registers of the 16-lane code):
// values are evicted to their slots and loaded again, and streams beyond the eight pointer
// registers load their pointer per vector.
Values wide(Builder& b, const Values& a) {
  std::vector<Value*> t;
  for (size_t k = 0; k < a.size(); ++k) t.push_back(b.multiply(a[k], a[(k + 1) % a.size()]));
  t.push_back(b.subtract(a[0], a[5]));
  t.push_back(b.divide(a[3], b.add(b.abs(a[9]), a[3])));
  // Tree sums of t read every value late: all of them live across the products.
  while (t.size() > 1) {
    std::vector<Value*> next;
    for (size_t k = 0; k + 1 < t.size(); k += 2) next.push_back(b.add(t[k], t[k + 1]));
    if (t.size() % 2) next.push_back(t.back());
    t = next;
  }
  return Values{t[0], b.maximum(t[0], a[13])};
}

TEST(FusionJit, SpillsAndStreamsBeyondTheRegistersEqualTheInterpreter) {
  if (!avx2_fma()) GTEST_SKIP() << "generated code needs AVX2 and FMA";
  for (uint32_t inputs : {14u, 30u}) {
    const std::string what = std::to_string(inputs) + " inputs, output ";
    std::vector<Tensor> in;
    for (uint32_t k = 0; k < inputs; ++k) in.push_back(random_f32({5, 203}, 10 + k, -2, 2));
    Both r = run_both(in, wide);
    EXPECT_GE(r.generated_on, static_cast<int>(2 * inputs)) << what;
    auto want = run_fn("ref", in, wide);
    for (size_t i = 0; i < r.jit.size(); ++i) {
      expect_jit_equal(r, i, what + std::to_string(i));
      expect_equal(r.jit[i], want[i], "ref, " + what + std::to_string(i));
    }
  }
}

// LayerNorm's centring and scaling with their row sums folded (kernels/fusion_reduce.cpp): the
// generated runs feed the folds from their slots; rows of 100 end tiles mid-vector.
Values norm_rows(Builder& b, const Values& a) {
  const Shape& s = a[0]->type.shape();
  Value* zero = b.scalar(0, DType::kF32);
  Value* mean = b.multiply(b.reduce(a[0], zero, {1}, OpKind::kAdd),
                           b.constant_splat(1.0 / double(s[1]), Type::tensor(DType::kF32, {s[0]})));
  Value* cen = b.subtract(a[0], b.broadcast_in_dim(mean, s, {0}));
  Value* var = b.reduce(b.multiply(cen, cen), zero, {1}, OpKind::kAdd);
  Value* inv = b.rsqrt(b.add(var, b.constant_splat(1e-5, var->type)));
  Value* y = b.multiply(b.multiply(cen, b.broadcast_in_dim(inv, s, {0})),
                        b.broadcast_in_dim(a[1], s, {1}));
  return Values{y, var};
}

TEST(FusionJit, RowFoldedGroupsEqualTheInterpreter) {
  if (!avx2_fma()) GTEST_SKIP() << "generated code needs AVX2 and FMA";
  for (const Shape& s : std::vector<Shape>{{9, 100}, {6, 128}, {3, 512}}) {
    std::vector<Tensor> in{random_f32(s, 31), random_f32({s[1]}, 32)};
    ::setenv("NETSPEC_FUSION_JIT", "1", 1);
    EXPECT_GE(cpu_plan_stats(in, norm_rows).fused_row_reduces, 1) << shape_str(s);
    ::unsetenv("NETSPEC_FUSION_JIT");
    Both r = run_both(in, norm_rows);
    EXPECT_GE(r.generated_on, 3) << shape_str(s);
    auto want = run_fn("ref", in, norm_rows);
    for (size_t i = 0; i < r.jit.size(); ++i) {
      expect_jit_equal(r, i, shape_str(s) + " output " + std::to_string(i));
      expect_near(r.jit[i], want[i], 1e-5, 1e-5, shape_str(s) + " vs ref");
    }
  }
}

// Broadcasts the generated runs read in place: rows (operand [128] over [37, 128], element i
// reads i % 128) and runs (per-row values, 128 or 32 copies each), read by two runs that an
// interpreted log separates (each run moves its own positions along); a last tile of 128.
Values in_place(Builder& b, const Values& a) {
  const Shape& s = a[0]->type.shape();
  const int64_t r = static_cast<int64_t>(s.size()) - 1;
  hlo::I64s lead;
  for (int64_t k = 0; k < r; ++k) lead.push_back(k);
  Value* row = b.broadcast_in_dim(a[1], s, {r});
  Value* run = b.broadcast_in_dim(a[2], s, lead);
  Value* t = b.multiply(b.subtract(a[0], run), row);
  Value* u = b.log(b.add(b.abs(t), b.constant_splat(1, t->type)));
  Value* v = b.add(b.multiply(u, row), run);
  return Values{t, v};
}

TEST(FusionJit, InPlaceBroadcastsEqualTheInterpreter) {
  if (!avx2_fma()) GTEST_SKIP() << "generated code needs AVX2 and FMA";
  for (const Shape& s : std::vector<Shape>{{37, 128}, {5, 3, 32}}) {
    Shape lead(s.begin(), s.end() - 1);
    std::vector<Tensor> in{random_f32(s, 41), random_f32({s.back()}, 42), random_f32(lead, 43)};
    ::setenv("NETSPEC_FUSION_JIT", "1", 1);
    EXPECT_EQ(cpu_plan_stats(in, in_place).fused_bcasts, 2) << shape_str(s);
    ::unsetenv("NETSPEC_FUSION_JIT");
    Both r = run_both(in, in_place);
    auto want = run_fn("ref", in, in_place);
    for (size_t i = 0; i < r.jit.size(); ++i) {
      expect_jit_equal(r, i, shape_str(s) + " output " + std::to_string(i));
      expect_near(r.jit[i], want[i], 1e-5, 1e-5, shape_str(s) + " vs ref");
    }
  }
}

// Rows of N repeated within outer stretches (mamba's B_t over [B, di, N]: broadcast dims
// {0, 2}): read in place as channel blocks are, N = 8 and 16 at both widths (16 at 8 lanes: the
// half of the block at the vector's position); di = 41 with N = 8 puts stretches off the
// 16-value grid (kept in slots).
TEST(FusionJit, RowsWithinOuterStretchesEqualTheInterpreter) {
  if (!avx2_fma()) GTEST_SKIP() << "generated code needs AVX2 and FMA";
  BodyFn body = [](Builder& b, const Values& a) {
    const Shape& s = a[0]->type.shape();
    Value* y = b.add(b.multiply(a[0], b.broadcast_in_dim(a[1], s, {0, 2})), a[0]);
    return Values{y, b.exponential(b.negate(b.abs(y)))};
  };
  for (const auto& [di, n] : std::vector<std::pair<int64_t, int64_t>>{{40, 16}, {40, 8}, {41, 8}}) {
    const std::string what = "di " + std::to_string(di) + " N " + std::to_string(n);
    std::vector<Tensor> in{random_f32({8, di, n}, 71), random_f32({8, n}, 72)};
    ::setenv("NETSPEC_FUSION_JIT", "1", 1);
    const bool in_place = di == 40;
    EXPECT_EQ(cpu_plan_stats(in, body).fused_bcasts, in_place ? 1 : 0) << what;
    ::unsetenv("NETSPEC_FUSION_JIT");
    Both r = run_both(in, body);
    auto want = run_fn("ref", in, body);
    for (size_t i = 0; i < r.jit.size(); ++i) {
      expect_jit_equal(r, i, what + " output " + std::to_string(i));
      expect_near(r.jit[i], want[i], 1e-5, 1e-5, what + " vs ref");
    }
  }
}

// A row-folded group over rows of 24 whose tiles (21 rows, 504 values) start off the 16-value
// grid every other time: those tiles run interpreted, the others generated, same bits.
TEST(FusionJit, TilesOffTheGridOfInPlaceBroadcastsRunInterpreted) {
  if (!avx2_fma()) GTEST_SKIP() << "generated code needs AVX2 and FMA";
  BodyFn body = [](Builder& b, const Values& a) {
    const Shape& s = a[0]->type.shape();  // [50, 2, 24]
    Value* y = b.multiply(a[0], b.broadcast_in_dim(a[1], s, {0}));  // runs of 48
    Value* sum = b.reduce(y, b.scalar(0, DType::kF32), {2}, OpKind::kAdd);
    return Values{b.add(y, a[0]), sum};
  };
  std::vector<Tensor> in{random_f32({50, 2, 24}, 51), random_f32({50}, 52)};
  ::setenv("NETSPEC_FUSION_JIT", "1", 1);
  const auto st = cpu_plan_stats(in, body);
  ::unsetenv("NETSPEC_FUSION_JIT");
  EXPECT_EQ(st.fused_row_reduces, 1);
  EXPECT_EQ(st.fused_bcasts, 1);
  Both r = run_both(in, body);
  auto want = run_fn("ref", in, body);
  for (size_t i = 0; i < r.jit.size(); ++i) {
    expect_jit_equal(r, i, "output " + std::to_string(i));
    expect_near(r.jit[i], want[i], 1e-5, 1e-5, "vs ref");
  }
}

// Channel vectors over channel-blocked values (a 1x1 conv's nChw16c or nChw8c result, then a
// BN-like affine and ReLU): the generated runs read them in place, 16-channel blocks always (at 8
// lanes, half a block a vector) and 8-channel blocks where the spatial size is even (7x5 keeps
// those in slots).
TEST(FusionJit, ChannelVectorsOverBlockedValuesEqualTheInterpreter) {
  if (!avx2_fma()) GTEST_SKIP() << "generated code needs AVX2 and FMA";
  BodyFn body = [](Builder& b, const Values& a) {
    hlo::ConvOptions o;
    o.dims = hlo::ConvOptions::nchw(2);
    Value* y = b.convolution(a[0], a[1], o, DType::kF32);
    const Shape& ys = y->type.shape();
    auto per_c = [&](Value* v) { return b.broadcast_in_dim(v, ys, {1}); };
    Value* z = b.add(b.multiply(b.subtract(y, per_c(a[2])), per_c(a[3])), y);
    return Values{b.maximum(z, b.broadcast_in_dim(b.scalar(0, DType::kF32), ys, {}))};
  };
  const bool has16 = exec::cpu::layout_block_size() == 16;
  for (const char* layout : {"16", "8"}) {
    if (std::string(layout) == "16" && !has16) continue;  // no nChw16c kernels on this CPU
    for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{{6, 7}, {7, 5}}) {
      const std::string what = std::string("nChw") + layout + "c " + std::to_string(h) + "x" +
                               std::to_string(w);
      ::setenv("NETSPEC_CPU_LAYOUT", layout, 1);
      std::vector<Tensor> in{random_f32({2, 8, h, w}, 61), random_f32({32, 8, 1, 1}, 62),
                             random_f32({32}, 63), random_f32({32}, 64)};
      ::setenv("NETSPEC_FUSION_JIT", "1", 1);
      const bool in_place = std::string(layout) == "16" || (h * w) % 2 == 0;
      EXPECT_EQ(cpu_plan_stats(in, body).fused_bcasts, in_place ? 2 : 0) << what;
      ::unsetenv("NETSPEC_FUSION_JIT");
      Both r = run_both(in, body);
      auto want = run_fn("ref", in, body);
      ::unsetenv("NETSPEC_CPU_LAYOUT");
      expect_jit_equal(r, 0, what);
      expect_near(r.jit[0], want[0], 1e-5, 1e-5, what + " vs ref");
    }
  }
}

}  // namespace
}  // namespace netspec::testing
