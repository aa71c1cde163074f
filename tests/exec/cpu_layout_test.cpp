// Layout propagation in the cpu planner (src/exec/cpu/plan/layout.cpp): the block size comes from
// the CPU found (NETSPEC_CPU_LAYOUT=plain|8|16 forces it, so the AVX2 machines' nChw8c path runs
// here too); a conv -> BN-like affine -> ReLU -> max-pool -> conv chain keeps the blocked layout
// (no reorder between the ops), the dy of a conv is reordered once for both gradient convs, odd
// channel counts stay row-major, and every case equals the ref executor, also in check mode.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "core/thread_pool.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/kernels.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::ConvOptions;

Tensor rnd(const Shape& s, uint32_t seed) { return random_f32(s, seed); }

// Sets NETSPEC_CPU_LAYOUT for one scope.
struct LayoutEnv {
  explicit LayoutEnv(const char* v) { ::setenv("NETSPEC_CPU_LAYOUT", v, 1); }
  ~LayoutEnv() { ::unsetenv("NETSPEC_CPU_LAYOUT"); }
};

// Whether oneDNN has kernels for `layout` on this CPU: the 16-channel blocks need AVX-512 (an
// AVX2 CPU, or ONEDNN_MAX_CPU_ISA=AVX2, plans a forced 16 row-major: nothing to count then).
bool runs_here(const char* layout) {
  return std::string_view(layout) != "16" || exec::cpu::layout_block_size() == 16;
}

// cpu == ref (plain and in check mode).
void expect_like_ref(const std::vector<Tensor>& in, const BodyFn& body, const std::string& what) {
  auto want = run_fn("ref", in, body);
  auto got = run_fn("cpu", in, body);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) expect_near(got[i], want[i], 1e-4, 1e-4, what);
  ::setenv("NETSPEC_CPU_CHECK", "1", 1);
  auto checked = run_fn("cpu", in, body);
  ::unsetenv("NETSPEC_CPU_CHECK");
  for (size_t i = 0; i < got.size(); ++i)
    expect_near(checked[i], want[i], 1e-4, 1e-4, what + " (check mode)");
}

ConvOptions same3x3() {
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.padding = {{1, 1}, {1, 1}};
  return o;
}

// conv(x, w1) -> per-channel y * s + t -> relu -> 2x2 max-pool -> conv(., w2) -> channel sums.
Values chain(Builder& b, const Values& a) {
  Value* y = b.convolution(a[0], a[1], same3x3(), DType::kF32);
  const Shape& ys = y->type.shape();
  Value* s = b.broadcast_in_dim(a[2], ys, {1});
  Value* t = b.broadcast_in_dim(a[3], ys, {1});
  Value* zero = b.broadcast_in_dim(b.constant_splat(0.0, Type::tensor(DType::kF32, {})), ys, {});
  Value* r = b.maximum(b.add(b.multiply(y, s), t), zero);
  hlo::WindowOptions w;
  w.window_dimensions = {1, 1, 2, 2};
  w.window_strides = {1, 1, 2, 2};
  Value* p = b.reduce_window(r, b.scalar(-1e30, DType::kF32), w, hlo::OpKind::kMaximum);
  Value* z = b.convolution(p, a[4], same3x3(), DType::kF32);
  Value* sums = b.reduce(z, b.scalar(0, DType::kF32), {0, 2, 3}, hlo::OpKind::kAdd);
  return Values{z, sums};
}

std::vector<Tensor> chain_inputs(int64_t c_in, int64_t c1, int64_t c2) {
  return {rnd({2, c_in, 8, 8}, 1), rnd({c1, c_in, 3, 3}, 2), rnd({c1}, 3), rnd({c1}, 4),
          rnd({c2, c1, 3, 3}, 5)};
}

TEST(CpuLayout, BlockSizeFromEnvAndCpu) {
  {
    LayoutEnv e("8");
    EXPECT_EQ(exec::cpu::layout_block_size(), 8);
  }
  {
    LayoutEnv e("plain");
    EXPECT_EQ(exec::cpu::layout_block_size(), 0);
  }
  {
    LayoutEnv e("nChw16c");
    EXPECT_EQ(exec::cpu::layout_block_size(), 16);
  }
  {
    LayoutEnv e("32");
    EXPECT_THROW(exec::cpu::layout_block_size(), Error);
  }
  // Without the override: 16 with AVX-512, 8 with AVX2 (what oneDNN finds on this CPU; the
  // CPU's own flags decide unless ONEDNN_MAX_CPU_ISA caps what oneDNN may use).
  const int b = exec::cpu::layout_block_size();
  EXPECT_TRUE(b == 16 || b == 8 || b == 0) << b;
  if (const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA"); cap && *cap) return;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
    EXPECT_EQ(b, 16);
  } else if (__builtin_cpu_supports("avx2")) {
    EXPECT_EQ(b, 8);
  }
}

// 16 and 32 channels: blocked at both block sizes; the only reorders are the function results
// (z to row-major); x has 3 channels and is read row-major by the first conv.
TEST(CpuLayout, ConvAffineReluPoolConvStaysBlocked) {
  for (const char* layout : {"16", "8"}) {
    if (!runs_here(layout)) continue;
    LayoutEnv e(layout);
    std::vector<Tensor> in = chain_inputs(3, 16, 32);
    auto st = cpu_plan_stats(in, chain);
    EXPECT_EQ(st.ref_steps, 0) << layout << ": " << st.fallback_ops;
    // y is read only by the affine+relu: they run as the conv's post-ops (one blocked value);
    // that, the pool and z are blocked; z goes back row-major once.
    EXPECT_EQ(st.conv_postops, 1) << layout;
    EXPECT_EQ(st.blocked_values, 3) << layout;
    EXPECT_EQ(st.reorders, 1) << layout;
    expect_like_ref(in, chain, std::string("chain nChw") + layout + "c");
  }
}

// DenseNet's pattern: two convs' outputs concatenated along channels and read by a conv, and
// channel slices of a conv's output on block boundaries added to a blocked value: all stay
// blocked (one reorder: the function result), equal to ref. A slice off the block grid, or of
// a spatial dim, takes the row-major path.
TEST(CpuLayout, ChannelConcatenatesAndSlicesStayBlocked) {
  for (const char* layout : {"16", "8"}) {
    if (!runs_here(layout)) continue;
    LayoutEnv e(layout);
    const int64_t B = std::string_view(layout) == "16" ? 16 : 8;
    BodyFn body = [&](Builder& b, const Values& a) {
      Value* f0 = b.convolution(a[0], a[1], same3x3(), DType::kF32);  // [2, 2B, 6, 6]
      Value* f1 = b.convolution(a[0], a[2], same3x3(), DType::kF32);  // [2, B, 6, 6]
      Value* cat = b.concatenate({f0, f1}, 1);                        // [2, 3B, 6, 6]
      Value* z = b.convolution(cat, a[3], same3x3(), DType::kF32);    // [2, 3B, 6, 6]
      Value* s0 = b.slice(z, {0, B, 0, 0}, {2, 3 * B, 6, 6});         // channels [B, 3B)
      Value* s1 = b.slice(z, {0, 0, 0, 0}, {2, B, 6, 6});
      Value* sum = b.add(b.add(s0, f0), b.concatenate({s1, s1}, 1));
      return Values{b.convolution(sum, a[4], same3x3(), DType::kF32)};
    };
    // Weights of 1/fan-in scale keep every value O(1) (ref's and oneDNN's sums agree to 1e-4).
    auto w = [](const Shape& s, uint32_t seed) {
      const double a = 1.0 / std::sqrt(static_cast<double>(s[1] * 9));
      return random_f32(s, seed, -a, a);
    };
    std::vector<Tensor> in = {rnd({2, 5, 6, 6}, 1), w({2 * B, 5, 3, 3}, 2), w({B, 5, 3, 3}, 3),
                              w({3 * B, 3 * B, 3, 3}, 4), w({B, 2 * B, 3, 3}, 5)};
    auto st = cpu_plan_stats(in, body);
    EXPECT_EQ(st.ref_steps, 0) << layout << ": " << st.fallback_ops;
    EXPECT_EQ(st.reorders, 1) << layout;  // the result, back to row-major
    expect_like_ref(in, body, std::string("concat/slice nChw") + layout + "c");
    BodyFn off_grid = [&](Builder& b, const Values& a) {
      Value* z = b.convolution(a[0], a[1], same3x3(), DType::kF32);
      return Values{b.slice(z, {0, 1, 0, 0}, {2, 2 * B - 1, 6, 6}),
                    b.slice(z, {0, 0, 1, 0}, {2, 2 * B, 6, 6})};
    };
    expect_like_ref({in[0], in[1]}, off_grid, std::string("off-grid slices nChw") + layout + "c");
  }
}

// Max-pool 3x3 stride 2 pad 1 (overlapping windows, padded borders) and its VJP
// (select_and_scatter) on blocked values, per-sample spatial sums ({2, 3}) and the per-channel
// max over {0, 2, 3}: all on the blocked kernels, equal to ref.
TEST(CpuLayout, PoolingAndItsVjpOnBlockedValues) {
  for (const char* layout : {"16", "8"}) {
    if (!runs_here(layout)) continue;
    LayoutEnv e(layout);
    Tensor x = rnd({2, 4, 9, 9}, 11), w = rnd({16, 4, 3, 3}, 12), g = rnd({2, 16, 5, 5}, 13);
    BodyFn body = [](Builder& b, const Values& a) {
      Value* y = b.convolution(a[0], a[1], same3x3(), DType::kF32);
      hlo::WindowOptions wo;
      wo.window_dimensions = {1, 1, 3, 3};
      wo.window_strides = {1, 1, 2, 2};
      wo.padding = {{0, 0}, {0, 0}, {1, 1}, {1, 1}};
      Value* p = b.reduce_window(y, b.scalar(-1e30, DType::kF32), wo, hlo::OpKind::kMaximum);
      Value* pn = b.negate(p);
      Value* dx = b.select_and_scatter(
          y, b.multiply(a[2], pn), b.scalar(0, DType::kF32), wo,
          [](Builder& r, const Values& q) { return Values{r.compare(q[0], q[1], "GE")}; },
          [](Builder& r, const Values& q) { return Values{r.add(q[0], q[1])}; });
      Value* per_sample = b.reduce(dx, b.scalar(0, DType::kF32), {2, 3}, hlo::OpKind::kAdd);
      Value* cmax = b.reduce(y, b.scalar(-1e30, DType::kF32), {0, 2, 3}, hlo::OpKind::kMaximum);
      return Values{dx, per_sample, cmax};
    };
    auto st = cpu_plan_stats({x, w, g}, body);
    EXPECT_EQ(st.ref_steps, 0) << st.fallback_ops;
    EXPECT_GE(st.blocked_values, 4) << layout;  // y, p, -p, g*(-p) (via g's reorder), dx
    expect_like_ref({x, w, g}, body, std::string("pool VJP nChw") + layout + "c");
  }
}

// The blocked pooling kernels fold B lanes as one vector: NaN (the first one propagates), -0 < +0,
// ±inf and ties (select's first-candidate rule, GE / GT / LE), padded borders (init folded in)
// give the ref's bits, for max and sum pools and max-pool's VJP. x reaches
// the pool blocked through select(conv > -inf, x, conv), which is x exactly.
TEST(CpuLayout, BlockedPoolingSpecialValuesEqualRef) {
  const float nan = std::nanf(""), inf = INFINITY;
  const float pick[] = {0.f, -0.f, nan, -inf, inf, 1.f, -1.f, -0.f, 1.f, 2.f, 0.f};
  for (const char* layout : {"16", "8"}) {
    if (!runs_here(layout)) continue;
    LayoutEnv e(layout);
    const Shape xs{2, 16, 7, 7};
    std::vector<double> v;
    for (int64_t i = 0; i < 2 * 16 * 7 * 7; ++i) v.push_back(pick[(i * 7 + i / 5) % 11]);
    Tensor x = f32(xs, v), x2 = rnd({2, 4, 7, 7}, 21), w = rnd({16, 4, 3, 3}, 22);
    Tensor g = rnd({2, 16, 4, 4}, 23);
    for (const char* dir : {"GE", "GT", "LE"}) {
      BodyFn body = [dir](Builder& b, const Values& a) {
        Value* y = b.convolution(a[1], a[2], same3x3(), DType::kF32);
        Value* finite = b.compare(y, b.broadcast_in_dim(b.scalar(-INFINITY, DType::kF32),
                                                        y->type.shape(), {}),
                                  "GT");
        Value* xb = b.select(finite, a[0], y);
        hlo::WindowOptions wo;
        wo.window_dimensions = {1, 1, 3, 3};
        wo.window_strides = {1, 1, 2, 2};
        wo.padding = {{0, 0}, {0, 0}, {1, 1}, {1, 1}};
        Value* p =
            b.reduce_window(xb, b.scalar(-INFINITY, DType::kF32), wo, hlo::OpKind::kMaximum);
        Value* dx = b.select_and_scatter(
            xb, a[3], b.scalar(0, DType::kF32), wo,
            [dir](Builder& r, const Values& q) { return Values{r.compare(q[0], q[1], dir)}; },
            [](Builder& r, const Values& q) { return Values{r.add(q[0], q[1])}; });
        Value* sum = b.reduce_window(xb, b.scalar(0.25, DType::kF32), wo, hlo::OpKind::kAdd);
        return Values{p, dx, sum};
      };
      EXPECT_GE(cpu_plan_stats({x, x2, w, g}, body).blocked_values, 3) << layout;
      auto want = run_fn("ref", {x, x2, w, g}, body);
      auto got = run_fn("cpu", {x, x2, w, g}, body);
      const std::string what = std::string("nChw") + layout + "c " + dir;
      expect_equal(got.at(0), want.at(0), what + " max pool");
      expect_equal(got.at(1), want.at(1), what + " select_and_scatter");
      expect_equal(got.at(2), want.at(2), what + " sum pool (init 0.25)");
    }
  }
}

// Channel counts that are not multiples of the block stay row-major: 12/20 at either size, 24
// at 16 (blocked at 8: the conv with its affine+relu post-ops, and the pool; z with 12 channels
// is row-major); "plain" turns the layouts off. All equal ref.
TEST(CpuLayout, OddChannelCountsFallBackToRowMajor) {
  struct Case {
    const char* layout;
    int64_t c1, c2;
    int min_blocked, max_blocked;
  };
  for (const Case& c : {Case{"16", 12, 20, 0, 0}, Case{"8", 12, 20, 0, 0}, Case{"16", 24, 12, 0, 0},
                        Case{"8", 24, 12, 2, 2}, Case{"plain", 16, 32, 0, 0}}) {
    LayoutEnv e(c.layout);
    std::vector<Tensor> in = chain_inputs(5, c.c1, c.c2);
    auto st = cpu_plan_stats(in, chain);
    const std::string what = fmt::format("{}/{} channels, layout {}", c.c1, c.c2, c.layout);
    EXPECT_GE(st.blocked_values, c.min_blocked) << what;
    EXPECT_LE(st.blocked_values, c.max_blocked) << what;
    if (c.max_blocked == 0) {
      EXPECT_EQ(st.reorders, 0) << what;
    }
    expect_like_ref(in, chain, what);
  }
}

// The two gradient convolutions of one conv read dy (a row-major argument here): one reorder
// of dy serves both (and one of x for dW); dx goes back row-major as the result.
TEST(CpuLayout, GradientConvsShareTheDyReorder) {
  LayoutEnv e(runs_here("16") ? "16" : "8");
  Tensor x = rnd({2, 16, 6, 6}, 7), w = rnd({32, 16, 3, 3}, 8), dy = rnd({2, 32, 6, 6}, 9);
  BodyFn body = [](Builder& b, const Values& a) {
    ConvOptions dx_o = same3x3();  // dx = conv(dy, reverse(w)) with kernel roles swapped
    dx_o.dims.kernel_input_feature = 0, dx_o.dims.kernel_output_feature = 1;
    Value* dx = b.convolution(a[2], b.reverse(a[1], {2, 3}), dx_o, DType::kF32);
    ConvOptions dw_o;  // dW = conv(x as [C, N], dy as kernel [N, O]) as vjp_conv.cpp emits it
    dw_o.dims.input_batch = 1, dw_o.dims.input_feature = 0, dw_o.dims.input_spatial = {2, 3};
    dw_o.dims.kernel_input_feature = 0, dw_o.dims.kernel_output_feature = 1;
    dw_o.dims.kernel_spatial = {2, 3};
    dw_o.dims.output_batch = 1, dw_o.dims.output_feature = 0, dw_o.dims.output_spatial = {2, 3};
    dw_o.padding = {{1, 1}, {1, 1}};
    Value* dw = b.convolution(a[0], a[2], dw_o, DType::kF32);
    return Values{dx, dw};
  };
  auto st = cpu_plan_stats({x, w, dy}, body);
  EXPECT_EQ(st.ref_steps, 0) << st.fallback_ops;
  EXPECT_EQ(st.reorders, 3);  // dy (shared), x, and dx back to row-major
  EXPECT_EQ(st.steps, 5);     // 3 reorders + 2 convs (the reverse folds into the dx conv)
  expect_like_ref({x, w, dy}, body, "dx + dW");
}

// Train-mode BN's statistics and their VJP sums: each channel sum whose operand is a fused
// group's output read by nothing else is computed inside the group's step (the output is never
// written), bit for bit what the unfused group + reduce give (NETSPEC_NO_REDUCE_FUSION=1), and
// equal to ref; outputs with other readers are still written. Also per-sample sums ({2, 3}).
TEST(CpuLayout, ChannelSumsFoldIntoTheirFusedGroup) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* y = b.convolution(a[0], a[1], same3x3(), DType::kF32);
    const Shape& ys = y->type.shape();
    const double inv_n = 1.0 / double(ys[0] * ys[2] * ys[3]);
    Value* zero = b.scalar(0, DType::kF32);
    auto per_c = [&](Value* v) { return b.broadcast_in_dim(v, ys, {1}); };
    Value* mean = b.multiply(b.reduce(y, zero, {0, 2, 3}, hlo::OpKind::kAdd),
                             b.constant_splat(inv_n, Type::tensor(DType::kF32, {ys[1]})));
    Value* d = b.subtract(y, per_c(mean));  // written (read below)
    Value* var = b.reduce(b.multiply(d, d), zero, {0, 2, 3}, hlo::OpKind::kAdd);  // folded
    // A VJP-like group with two sums: g = relu mask * dy, sum(g) and sum(g * d).
    Value* dy = b.convolution(a[0], a[2], same3x3(), DType::kF32);
    Value* zeros = b.broadcast_in_dim(zero, ys, {});
    Value* g = b.select(b.compare(d, zeros, "GT"), dy, zeros);
    Value* gd = b.multiply(g, d);  // g is read inside the group and by s1 only: still folded
    Value* s2 = b.reduce(gd, zero, {0, 2, 3}, hlo::OpKind::kAdd);
    Value* s1 = b.reduce(g, zero, {0, 2, 3}, hlo::OpKind::kAdd);
    Value* var_n = b.multiply(var, b.constant_splat(inv_n, Type::tensor(DType::kF32, {ys[1]})));
    Value* q = b.add(b.multiply(dy, per_c(var_n)), dy);  // O(1) terms: no cancellation
    Value* per_sample = b.reduce(q, zero, {2, 3}, hlo::OpKind::kAdd);
    return Values{b.add(d, per_c(s1)), var, s2, per_sample};
  };
  for (const char* layout : {"16", "8"}) {
    if (!runs_here(layout)) continue;
    LayoutEnv e(layout);
    // One channel block per thread at least (fewer tasks than threads stay unfused).
    const int64_t c = 16 * std::max(2, ThreadPool::global().num_threads());
    std::vector<Tensor> in = {rnd({3, 5, 7, 6}, 21), rnd({c, 5, 3, 3}, 22), rnd({c, 5, 3, 3}, 23)};
    auto st = cpu_plan_stats(in, body);
    EXPECT_EQ(st.ref_steps, 0) << layout << ": " << st.fallback_ops;
    EXPECT_EQ(st.fused_sums, 4) << layout;  // var, s1, s2, per_sample (mean reads y directly)
    expect_like_ref(in, body, std::string("fused sums nChw") + layout + "c");
    auto fused = run_fn("cpu", in, body);
    ::setenv("NETSPEC_NO_REDUCE_FUSION", "1", 1);
    auto plain = run_fn("cpu", in, body);
    ::unsetenv("NETSPEC_NO_REDUCE_FUSION");
    ASSERT_EQ(fused.size(), plain.size());
    for (size_t i = 0; i < fused.size(); ++i) expect_equal(fused[i], plain[i], "bit for bit");
    // The groups as generated code (kernels/fusion_jit.cpp, which reads nChw8c channel
    // vectors in place) and interpreted: the same bits.
    if (std::string(layout) == "8") {
      ::setenv("NETSPEC_FUSION_JIT", "1", 1);
      EXPECT_GE(cpu_plan_stats(in, body).fused_bcasts, 2);
      ::unsetenv("NETSPEC_FUSION_JIT");
    }
    for (const char* jit : {"0", "1"}) {
      ::setenv("NETSPEC_FUSION_JIT", jit, 1);
      auto other = run_fn("cpu", in, body);
      ::unsetenv("NETSPEC_FUSION_JIT");
      for (size_t i = 0; i < fused.size(); ++i)
        expect_equal(other[i], fused[i], std::string("NETSPEC_FUSION_JIT=") + jit);
    }
  }
}

}  // namespace
}  // namespace netspec::testing
