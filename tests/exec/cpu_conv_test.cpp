// The cpu executor's weight-gradient convolutions (oneDNN backward-weights): the conv that the
// weight VJP emits (input batch/feature roles swapped, dy as the kernel, window_strides = forward
// dilation, rhs_dilation = forward stride, batch_group_count = forward groups) against the ref
// kernel, for stride 1 and 2 (with slack at the high edge), dilation, grouped/depthwise and NHWC.
#include <random>

#include "exec/cpu/cpu_backend.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::ConvDims;
using hlo::ConvOptions;

struct Fwd {
  ConvDims d;  // forward dimension numbers (x, w, y)
  Shape x, w, y;
  int64_t stride, dil, pad_lo, pad_hi, groups;
};

// dW = conv(x as [C batch, N feature], dy as kernel [N in, O out]) exactly as vjp_conv.cpp emits
// it.
hlo::Value* weight_grad(Builder& b, const Fwd& f, hlo::Value* x, hlo::Value* dy) {
  ConvOptions o;
  o.dims.input_batch = f.d.input_feature;
  o.dims.input_feature = f.d.input_batch;
  o.dims.input_spatial = f.d.input_spatial;
  o.dims.kernel_input_feature = f.d.output_batch;
  o.dims.kernel_output_feature = f.d.output_feature;
  o.dims.kernel_spatial = f.d.output_spatial;
  o.dims.output_batch = f.d.kernel_input_feature;
  o.dims.output_feature = f.d.kernel_output_feature;
  o.dims.output_spatial = f.d.kernel_spatial;
  for (size_t i = 0; i < f.d.input_spatial.size(); ++i) {
    int64_t n = f.x[static_cast<size_t>(f.d.input_spatial[i])];
    int64_t k = f.w[static_cast<size_t>(f.d.kernel_spatial[i])];
    int64_t m = f.y[static_cast<size_t>(f.d.output_spatial[i])];
    int64_t need = (k - 1) * f.dil + (m - 1) * f.stride + 1;
    o.padding.push_back({f.pad_lo, need - n - f.pad_lo});
  }
  o.window_strides.assign(f.d.input_spatial.size(), f.dil);
  o.rhs_dilation.assign(f.d.input_spatial.size(), f.stride);
  o.batch_group_count = f.groups;
  return b.convolution(x, dy, o, DType::kF32);
}

void check(const Fwd& f, const std::string& what) {
  Tensor x = random_f32(f.x, 1), dy = random_f32(f.y, 2);
  BodyFn body = [&](Builder& b, const Values& a) { return Values{weight_grad(b, f, a[0], a[1])}; };
  auto m = make_module({type_of(x), type_of(dy)}, body);
  auto st = exec::cpu::plan_stats(*m->funcs[0]);
  EXPECT_EQ(st.ref_steps, 0) << what << ": " << st.fallback_ops;
  Tensor want = run_fn("ref", {x, dy}, body).at(0);
  Tensor got = run_fn("cpu", {x, dy}, body).at(0);
  ASSERT_EQ(got.shape(), f.w) << what;
  expect_near(got, want, 1e-4, 1e-4, what);
}

Shape out_len(int64_t n, int64_t k, const Fwd& f) {
  return {(n + f.pad_lo + f.pad_hi - ((k - 1) * f.dil + 1)) / f.stride + 1};
}

Fwd nchw(int64_t N, int64_t C, int64_t O, int64_t H, int64_t K, int64_t s, int64_t dil, int64_t lo,
         int64_t hi, int64_t groups) {
  Fwd f{ConvOptions::nchw(2), {}, {}, {}, s, dil, lo, hi, groups};
  int64_t oh = out_len(H, K, f)[0];
  f.x = {N, C, H, H};
  f.w = {O, C / groups, K, K};
  f.y = {N, O, oh, oh};
  return f;
}

// NHWC input and output, HWIO kernel: N x H x H x C -> N x H x H x O ("same" padding p, stride 1).
Fwd nhwc(int64_t N, int64_t C, int64_t O, int64_t H, int64_t K, int64_t p, int64_t groups) {
  Fwd f;
  f.d.input_batch = 0, f.d.input_feature = 3, f.d.input_spatial = {1, 2};
  f.d.kernel_input_feature = 2, f.d.kernel_output_feature = 3, f.d.kernel_spatial = {0, 1};
  f.d.output_batch = 0, f.d.output_feature = 3, f.d.output_spatial = {1, 2};
  f.stride = 1, f.dil = 1, f.pad_lo = p, f.pad_hi = p, f.groups = groups;
  f.x = {N, H, H, C};
  f.w = {K, K, C / groups, O};
  f.y = {N, H, H, O};
  return f;
}

TEST(CpuConv, WeightGradStride1Pad1) { check(nchw(8, 5, 6, 10, 3, 1, 1, 1, 1, 1), "3x3 s1 p1"); }
TEST(CpuConv, WeightGradStride2WithSlack) {
  check(nchw(4, 3, 8, 9, 3, 2, 1, 1, 0, 1), "3x3 s2 9x9");
}
TEST(CpuConv, WeightGradOneByOneStride2) {
  check(nchw(4, 8, 16, 8, 1, 2, 1, 0, 0, 1), "1x1 s2");
  // 4 -> 8 channels: oneDNN 2.6 takes its channels-last jit_1x1 kernel, which is wrong on the
  // uncropped 8x8 input (the last row and column unread by the stride); the cropped view is right.
  check(nchw(4, 4, 8, 8, 1, 2, 1, 0, 0, 1), "1x1 s2 4->8");
}
TEST(CpuConv, WeightGradDilated) { check(nchw(3, 4, 4, 11, 3, 1, 2, 2, 2, 1), "3x3 d2"); }
TEST(CpuConv, WeightGradGroupedAndDepthwise) {
  check(nchw(4, 8, 12, 7, 3, 1, 1, 1, 1, 4), "groups 4");
  check(nchw(4, 6, 6, 9, 3, 2, 1, 1, 1, 6), "depthwise s2");
}
// Depthwise gradients of kernels oneDNN's jit_dw does not take (5x5, 7x7, 9x9) run on netspec's
// own kernel (conv/depthwise_grad.cpp); NETSPEC_CONV_OWN_DW=1 sends 3x3 ones there too. Strides,
// dilation, asymmetric padding, slack at the high edge, a kernel wider than its map, NHWC.
TEST(CpuConv, DepthwiseWeightGradOnTheOwnKernel) {
  for (bool forced : {false, true}) {
    if (forced)
      setenv("NETSPEC_CONV_OWN_DW", "1", 1);
    else
      unsetenv("NETSPEC_CONV_OWN_DW");
    const std::string how = forced ? " (forced)" : "";
    check(nchw(4, 6, 6, 12, 7, 1, 1, 3, 3, 6), "dw 7x7 s1 p3" + how);
    check(nchw(3, 5, 5, 9, 5, 2, 1, 2, 2, 5), "dw 5x5 s2 p2" + how);
    check(nchw(2, 4, 4, 11, 5, 1, 2, 4, 4, 4), "dw 5x5 d2 p4" + how);
    check(nchw(3, 7, 7, 10, 5, 1, 1, 1, 3, 7), "dw 5x5 p1/3" + how);
    check(nchw(2, 3, 3, 6, 7, 1, 1, 3, 3, 3), "dw 7x7 on 6x6" + how);
    check(nchw(2, 5, 5, 3, 7, 1, 1, 3, 3, 5), "dw 7x7 on 3x3" + how);
    check(nchw(2, 4, 4, 10, 3, 2, 1, 1, 0, 4), "dw 3x3 s2 slack" + how);
    check(nchw(2, 3, 3, 13, 9, 2, 1, 4, 3, 3), "dw 9x9 s2" + how);
    check(nhwc(3, 6, 6, 8, 7, 3, 6), "dw 7x7 NHWC/HWIO" + how);
  }
  unsetenv("NETSPEC_CONV_OWN_DW");
}

TEST(CpuConv, WeightGradNhwcHwio) { check(nhwc(4, 5, 7, 8, 3, 1, 1), "NHWC/HWIO"); }

TEST(CpuConv, InputGradOfStridedOneByOneZeroesTheHighEdge) {
  // dx of a 1x1 stride-2 conv on an even size: lhs_dilation 2 and a high padding of -1 (the
  // forward never read the last row/column, so dx is zero there; oneDNN takes the -1 as 0).
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.lhs_dilation = {2, 2};
  o.padding = {{0, 1}, {0, 1}};
  BodyFn body = [&](Builder& b, const Values& a) {
    return Values{b.convolution(a[0], a[1], o, DType::kF32)};
  };
  Tensor dy = random_f32({4, 6, 5, 5}, 3), w = random_f32({3, 6, 1, 1}, 4);
  auto m = make_module({type_of(dy), type_of(w)}, body);
  EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0]).ref_steps, 0);
  Tensor want = run_fn("ref", {dy, w}, body).at(0);
  ASSERT_EQ(want.shape(), (Shape{4, 3, 10, 10}));
  expect_near(run_fn("cpu", {dy, w}, body).at(0), want, 1e-5, 1e-5, "1x1 s2 dx");
}

// The same dx conv and the weight gradient of a 1x1 stride-2 conv between channel-blocked convs
// (resnet50's downsample shortcut): the high padding of -1 is one unread row within the stride,
// given to oneDNN as 0 on dense operands, so both stay on the blocked layout (no reorder step;
// a cropped view kept them off it) and equal ref.
TEST(CpuConv, StridedOneByOneGradientsStayChannelBlocked) {
  ConvOptions dx, same, wg;
  dx.dims = same.dims = ConvOptions::nchw(2);
  dx.lhs_dilation = {2, 2};
  dx.padding = {{0, 1}, {0, 1}};
  same.padding = {{1, 1}, {1, 1}};
  // dW[o, c] = Σ_n,h,w x[n, c, 2h, 2w] dy[n, o, h, w]: x and dy with batch and feature swapped
  wg.dims.input_batch = 1, wg.dims.input_feature = 0, wg.dims.input_spatial = {2, 3};
  wg.dims.kernel_input_feature = 0, wg.dims.kernel_output_feature = 1, wg.dims.kernel_spatial = {2, 3};
  wg.dims.output_batch = 1, wg.dims.output_feature = 0, wg.dims.output_spatial = {2, 3};
  wg.rhs_dilation = {2, 2};
  wg.padding = {{0, -1}, {0, -1}};  // x's last row and column: never read by the stride-2 conv
  BodyFn body = [&](Builder& b, const Values& a) {
    hlo::Value* h = b.convolution(a[0], a[1], same, DType::kF32);  // dy' [2, 32, 4, 4]
    hlo::Value* x = b.convolution(b.convolution(h, a[2], dx, DType::kF32), a[3], same,
                                  DType::kF32);                     // [2, 16, 8, 8]
    hlo::Value* dw = b.convolution(x, h, wg, DType::kF32);          // [32, 16, 1, 1]: [o, c]
    return Values{x, dw};
  };
  Tensor dy = random_f32({2, 32, 4, 4}, 11), w1 = random_f32({32, 32, 3, 3}, 12),
         w2 = random_f32({16, 32, 1, 1}, 13), w3 = random_f32({16, 16, 3, 3}, 14);
  auto m = make_module({type_of(dy), type_of(w1), type_of(w2), type_of(w3)}, body);
  auto st = exec::cpu::plan_stats(*m->funcs[0]);
  EXPECT_EQ(st.ref_steps, 0) << st.fallback_ops;
  EXPECT_EQ(st.reorders, 2) << "dy' in, x out (dw is plain)";
  auto want = run_fn("ref", {dy, w1, w2, w3}, body);
  ASSERT_EQ(want[1].shape(), (Shape{32, 16, 1, 1}));
  auto got = run_fn("cpu", {dy, w1, w2, w3}, body);
  expect_near(got[0], want[0], 1e-4, 1e-4, "dx between blocked convs");
  // (dw sums products of x, itself two convs deep: each side's rounding of x moves dw by ~1e-3)
  expect_near(got[1], want[1], 1e-2, 1e-3, "1x1 s2 weight gradient");
}

// The input-gradient VJP's conv(dy, reverse(w)): the planner folds a reverse read only by the
// conv into its weight preparation (one step fewer), for the plain dx conv with swapped kernel
// feature roles (stride 1), the lhs-dilated one (stride 2) and grouped weights; a reverse with a
// second reader stays a step. Every case equals ref, also in check mode (which re-applies the
// reverse before its ref kernel).
// A 3x3 128->128 conv whose kernel is stored [i, o, kh, kw] (as a dx conv's transposed weights)
// between two convs, so the planner keeps its input and output channel-blocked: where
// oneDNN picks Winograd it has no reorder from that strided kernel into Winograd's weights, and
// the plan takes the direct algorithm (planning fpn-det's train step used to abort with "could
// not create a primitive descriptor for a reorder primitive").
TEST(CpuConv, WinogradWithTransposedKernelFallsBackToDirect) {
  ConvOptions io, oi;
  io.dims = oi.dims = ConvOptions::nchw(2);
  io.dims.kernel_input_feature = 0, io.dims.kernel_output_feature = 1;
  io.padding = oi.padding = {{1, 1}, {1, 1}};
  for (int64_t hw : {16, 32}) {
    BodyFn body = [&](Builder& b, const Values& a) {
      hlo::Value* h = b.convolution(a[0], a[1], oi, DType::kF32);
      h = b.convolution(h, a[2], io, DType::kF32);
      return Values{b.convolution(h, a[1], oi, DType::kF32)};
    };
    Tensor x = random_f32({2, 128, hw, hw}, 7), w1 = random_f32({128, 128, 3, 3}, 8),
           w2 = random_f32({128, 128, 3, 3}, 9);
    auto m = make_module({type_of(x), type_of(w1), type_of(w2)}, body);
    auto st = exec::cpu::plan_stats(*m->funcs[0]);
    EXPECT_EQ(st.ref_steps, 0) << st.fallback_ops;
    Tensor want = run_fn("ref", {x, w1, w2}, body).at(0);
    double scale = 0;  // three 1152-term sums (Winograd in the outer two): error ~1e-4 of max
    for (int64_t i = 0; i < want.numel(); ++i)
      scale = std::max(scale, std::fabs(want.as_double(i)));
    expect_near(run_fn("cpu", {x, w1, w2}, body).at(0), want, 1e-3 * scale, 0,
                "hw " + std::to_string(hw));
  }
}

TEST(CpuConv, KernelReverseFoldsIntoTheConvolution) {
  struct Case {
    Shape x, w;
    ConvOptions o;
    bool second_reader;
    int want_steps;
    std::string what;
  };
  ConvOptions io;
  io.dims = ConvOptions::nchw(2);  // [b, f, 0, 1] x [i, o, 0, 1]: kernel roles swapped
  io.dims.kernel_input_feature = 0, io.dims.kernel_output_feature = 1;
  io.padding = {{1, 1}, {1, 1}};
  ConvOptions dil;
  dil.dims = ConvOptions::nchw(2);
  dil.lhs_dilation = {2, 2};
  dil.padding = {{1, 2}, {1, 2}};
  ConvOptions grp;
  grp.dims = ConvOptions::nchw(2);
  grp.feature_group_count = 2;
  grp.padding = {{1, 1}, {1, 1}};
  std::vector<Case> cases = {{{2, 6, 7, 7}, {6, 4, 3, 3}, io, false, 1, "io s1"},
                             {{2, 6, 4, 4}, {5, 6, 3, 3}, dil, false, 1, "lhs-dilated"},
                             {{2, 6, 5, 5}, {8, 3, 3, 3}, grp, false, 1, "grouped"},
                             {{2, 6, 7, 7}, {6, 4, 3, 3}, io, true, 3, "two readers"}};
  for (const Case& c : cases) {
    BodyFn body = [&](Builder& b, const Values& a) {
      hlo::Value* r = b.reverse(a[1], {2, 3});
      Values out{b.convolution(a[0], r, c.o, DType::kF32)};
      if (c.second_reader) out.push_back(b.negate(r));
      return out;
    };
    Tensor x = random_f32(c.x, 5), w = random_f32(c.w, 6);
    auto m = make_module({type_of(x), type_of(w)}, body);
    auto st = exec::cpu::plan_stats(*m->funcs[0]);
    EXPECT_EQ(st.ref_steps, 0) << c.what << ": " << st.fallback_ops;
    EXPECT_EQ(st.steps, c.want_steps) << c.what;
    auto want = run_fn("ref", {x, w}, body);
    auto got = run_fn("cpu", {x, w}, body);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) expect_near(got[i], want[i], 1e-5, 1e-5, c.what);
    ::setenv("NETSPEC_CPU_CHECK", "1", 1);
    auto checked = run_fn("cpu", {x, w}, body);
    ::unsetenv("NETSPEC_CPU_CHECK");
    expect_near(checked[0], want[0], 1e-5, 1e-5, c.what + " (check mode)");
  }
}

}  // namespace
}  // namespace netspec::testing
