// The cpu executor's convolution algorithm choice (exec/cpu/conv/conv_algorithm.h): which shapes
// take oneDNN's Winograd F(4x4, 3x3) kernel, and how far its forward, input-gradient and
// weight-gradient results lie from an f64 reference, beside the direct kernels' (same inputs).
#include <cmath>
#include <cstdlib>

#include "exec/cpu/conv/conv_algorithm.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/kernels.h"
#include "exec/cpu/conv/winograd.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::ConvOptions;
using dims = dnnl::memory::dims;

// Sets environment variable `name` for one scope (the cpu executor reads NETSPEC_CPU_WINOGRAD
// and NETSPEC_CPU_BWDW_NHWC when a function is planned), then unsets it.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

dnnl::algorithm choice(dims src, dims w, dims dst, dims st = {1, 1}, dims dil = {0, 0},
                       dnnl::memory::data_type t = dnnl::memory::data_type::f32) {
  return exec::cpu::conv_algorithm(t, src, w, dst, st, dil);
}

TEST(CpuConvAlgorithm, WinogradOnlyWhereItWasMeasuredFaster) {
  const auto wino = dnnl::algorithm::convolution_winograd;
  const auto direct = dnnl::algorithm::convolution_direct;
  // resnet18-cifar stage 1 and 2, resnet50's 56x56 and 28x28 3x3 convs.
  EXPECT_EQ(choice({32, 64, 32, 32}, {64, 64, 3, 3}, {32, 64, 32, 32}), wino);
  EXPECT_EQ(choice({32, 128, 16, 16}, {128, 128, 3, 3}, {32, 128, 16, 16}), wino);
  EXPECT_EQ(choice({16, 64, 56, 56}, {64, 64, 3, 3}, {16, 64, 56, 56}), wino);
  EXPECT_EQ(choice({16, 128, 28, 28}, {128, 128, 3, 3}, {16, 128, 28, 28}), wino);
  // Measured slower: 256 channels (14x14, 8x8), small maps.
  EXPECT_EQ(choice({16, 256, 14, 14}, {256, 256, 3, 3}, {16, 256, 14, 14}), direct);
  EXPECT_EQ(choice({32, 256, 8, 8}, {256, 256, 3, 3}, {32, 256, 8, 8}), direct);
  EXPECT_EQ(choice({32, 64, 8, 8}, {64, 64, 3, 3}, {32, 64, 8, 8}), direct);
  // Not Winograd's case: stride 2, dilation, 1x1 and 5x5 kernels, bf16, groups, few channels.
  EXPECT_EQ(choice({32, 64, 32, 32}, {128, 64, 3, 3}, {32, 128, 16, 16}, {2, 2}), direct);
  EXPECT_EQ(choice({32, 64, 32, 32}, {64, 64, 3, 3}, {32, 64, 32, 32}, {1, 1}, {1, 1}), direct);
  EXPECT_EQ(choice({32, 64, 32, 32}, {64, 64, 1, 1}, {32, 64, 32, 32}), direct);
  EXPECT_EQ(choice({32, 64, 32, 32}, {64, 64, 5, 5}, {32, 64, 32, 32}), direct);
  EXPECT_EQ(choice({32, 64, 32, 32}, {64, 64, 3, 3}, {32, 64, 32, 32}, {1, 1}, {0, 0},
                   dnnl::memory::data_type::bf16),
            direct);
  EXPECT_EQ(choice({32, 64, 32, 32}, {2, 32, 32, 3, 3}, {32, 64, 32, 32}), direct);
  EXPECT_EQ(choice({32, 3, 32, 32}, {64, 3, 3, 3}, {32, 64, 32, 32}), direct);
  {
    ScopedEnv off("NETSPEC_CPU_WINOGRAD", "0");
    EXPECT_EQ(choice({32, 64, 32, 32}, {64, 64, 3, 3}, {32, 64, 32, 32}), direct);
  }
  {
    ScopedEnv on("NETSPEC_CPU_WINOGRAD", "1");
    EXPECT_EQ(choice({32, 256, 8, 8}, {256, 256, 3, 3}, {32, 256, 8, 8}), wino);
    EXPECT_EQ(choice({32, 64, 32, 32}, {128, 64, 3, 3}, {32, 128, 16, 16}, {2, 2}), direct);
  }
}

ConvOptions same3x3() {
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.padding = {{1, 1}, {1, 1}};
  return o;
}

// y = conv(x, w); dx = conv(dy, reverse(w)) with the kernel's feature roles swapped; dW =
// conv(x as [C, N], dy as kernel [N, O]): the three convolutions of one conv's train step, as
// vjp_conv.cpp emits them.
BodyFn conv_and_grads(DType t) {
  return [t](Builder& b, const Values& a) {
    Value* y = b.convolution(a[0], a[1], same3x3(), t);
    ConvOptions dx_o = same3x3();
    dx_o.dims.kernel_input_feature = 0, dx_o.dims.kernel_output_feature = 1;
    Value* dx = b.convolution(a[2], b.reverse(a[1], {2, 3}), dx_o, t);
    ConvOptions dw_o;
    dw_o.dims.input_batch = 1, dw_o.dims.input_feature = 0, dw_o.dims.input_spatial = {2, 3};
    dw_o.dims.kernel_input_feature = 0, dw_o.dims.kernel_output_feature = 1;
    dw_o.dims.kernel_spatial = {2, 3};
    dw_o.dims.output_batch = 1, dw_o.dims.output_feature = 0, dw_o.dims.output_spatial = {2, 3};
    dw_o.padding = {{1, 1}, {1, 1}};
    Value* dw = b.convolution(a[0], a[2], dw_o, t);
    return Values{y, dx, dw};
  };
}

Tensor to_f64(const Tensor& t) {
  Tensor r(DType::kF64, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) r.data<double>()[i] = t.data<float>()[i];
  return r;
}

// max |got - want| / max |want|
double rel_err(const Tensor& got, const Tensor& want) {
  double e = 0, m = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    e = std::max(e, std::abs(static_cast<double>(got.data<float>()[i]) - want.data<double>()[i]));
    m = std::max(m, std::abs(want.data<double>()[i]));
  }
  return e / m;
}

// Winograd's results stay within a few times the direct kernels' rounding of the f64 truth
// (unit-scale inputs, 576-term sums; dW sums 4 * 16 * 16 = 1024 products per weight).
TEST(CpuConvAlgorithm, WinogradErrorNextToDirect) {
  const std::vector<Tensor> in{random_f32({4, 64, 16, 16}, 1), random_f32({64, 64, 3, 3}, 2),
                               random_f32({4, 64, 16, 16}, 3)};
  std::vector<Tensor> in64;
  for (const Tensor& t : in) in64.push_back(to_f64(t));
  const std::vector<Tensor> truth = run_fn("ref", in64, conv_and_grads(DType::kF64));
  std::vector<Type> ts;
  for (const Tensor& t : in) ts.push_back(type_of(t));
  auto run = [&](const char* mode, int* wino) {
    ScopedEnv e("NETSPEC_CPU_WINOGRAD", mode);
    auto m = make_module(ts, conv_and_grads(DType::kF32));
    *wino = exec::cpu::plan_stats(*m->funcs[0]).winograd_convs;
    return run_fn("cpu", in, conv_and_grads(DType::kF32));
  };
  int n_direct = -1, n_wino = -1;
  const std::vector<Tensor> direct = run("0", &n_direct), wino = run("1", &n_wino);
  EXPECT_EQ(n_direct, 0);
  // oneDNN implements Winograd for AVX-512 CPUs only; elsewhere every conv stays direct.
  if (exec::cpu::layout_block_size() == 16) {
    EXPECT_EQ(n_wino, 3);
  }
  const char* names[] = {"y", "dx", "dW"};
  for (size_t i = 0; i < 3; ++i) {
    const double ed = rel_err(direct[i], truth[i]), ew = rel_err(wino[i], truth[i]);
    std::printf("%s: direct %.3g  winograd %.3g (max |err| / max |truth|)\n", names[i], ed, ew);
    EXPECT_LT(ed, 2e-6) << names[i];
    EXPECT_LT(ew, 5e-6) << names[i];
  }
}

// netspec's own Winograd kernels (exec/cpu/conv/winograd.h; NETSPEC_CPU_WINOGRAD=own takes them on
// any AVX2 CPU): y and dx of conv_and_grads within Winograd's rounding of the f64 truth, next to
// the direct kernels' error on the same inputs, on shapes with partial edge tiles, few channels,
// both schedules (per chunk: 64 channels and many tiles; one pass: 4.5 MiB of transformed
// weights), with x and y channel-blocked as the planner stores them and row-major.
TEST(CpuConvAlgorithm, OwnWinogradMatchesF64) {
  if (!exec::cpu::winograd_avx2_runs()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  struct Case {
    Shape x;
    int64_t O;
  };
  const std::vector<Case> cases{{{2, 8, 4, 4}, 16},    {{2, 16, 7, 9}, 32},   {{1, 8, 5, 6}, 16},
                                {{3, 24, 10, 11}, 16}, {{8, 64, 16, 16}, 64}, {{4, 128, 8, 8}, 256},
                                {{32, 64, 4, 4}, 512}};
  for (const char* layout : {"plain", ""}) {
    ScopedEnv lay("NETSPEC_CPU_LAYOUT", layout);
    for (const Case& k : cases) {
      const Shape w{k.O, k.x[1], 3, 3}, dy{k.x[0], k.O, k.x[2], k.x[3]};
      const std::vector<Tensor> in{random_f32(k.x, 7), random_f32(w, 8), random_f32(dy, 9)};
      std::vector<Tensor> in64;
      for (const Tensor& t : in) in64.push_back(to_f64(t));
      const std::vector<Tensor> truth = run_fn("ref", in64, conv_and_grads(DType::kF64));
      std::vector<Type> ts;
      for (const Tensor& t : in) ts.push_back(type_of(t));
      std::vector<Tensor> got[2];
      for (int own = 0; own < 2; ++own) {
        ScopedEnv e("NETSPEC_CPU_WINOGRAD", own ? "own" : "0");
        auto m = make_module(ts, conv_and_grads(DType::kF32));
        // dx convolves dy (O channels) back to x's C and dW sums into C-blocks of 16: both need
        // C % 16 == 0.
        const int want = own ? (k.x[1] % 16 == 0 ? 3 : 1) : 0;
        EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0]).winograd_convs, want) << k.x[1];
        got[own] = run_fn("cpu", in, conv_and_grads(DType::kF32));
      }
      const char* names[] = {"y ", "dx", "dW"};
      for (size_t i = 0; i < 3; ++i) {
        const double ed = rel_err(got[0][i], truth[i]), ew = rel_err(got[1][i], truth[i]);
        std::printf("%-5s C %3ld O %3ld %2ldx%-2ld %s: direct %.3g  own Winograd %.3g\n",
                    *layout ? layout : "auto", static_cast<long>(k.x[1]), static_cast<long>(k.O),
                    static_cast<long>(k.x[2]), static_cast<long>(k.x[3]), names[i], ed, ew);
        // The error grows with the number of terms summed: dx at 512 channels sums 4608.
        const int64_t summed = i == 2 ? k.x[0] * k.x[2] * k.x[3] / 9 : i ? k.O : k.x[1];
        EXPECT_LT(ew, summed > 256 ? 1e-5 : 5e-6) << names[i] << ", C " << k.x[1] << " " << layout;
      }
    }
  }
}

// Any zero padding (none, wider than the kernel's reach, one-sided): y = conv(x, w).
TEST(CpuConvAlgorithm, OwnWinogradPaddings) {
  if (!exec::cpu::winograd_avx2_runs()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  const std::vector<Tensor> in{random_f32({2, 16, 9, 10}, 11), random_f32({32, 16, 3, 3}, 12)};
  std::vector<Tensor> in64{to_f64(in[0]), to_f64(in[1])};
  const std::vector<std::vector<std::pair<int64_t, int64_t>>> pads{
      {{0, 0}, {0, 0}}, {{2, 2}, {2, 2}}, {{0, 2}, {1, 0}}, {{2, 0}, {0, 1}}};
  for (const auto& pad : pads) {
    auto body = [&](DType t) -> BodyFn {
      return [t, pad](Builder& b, const Values& a) {
        ConvOptions o;
        o.dims = ConvOptions::nchw(2);
        o.padding = pad;
        return Values{b.convolution(a[0], a[1], o, t)};
      };
    };
    const Tensor truth = run_fn("ref", in64, body(DType::kF64))[0];
    ScopedEnv e("NETSPEC_CPU_WINOGRAD", "own");
    auto m = make_module({type_of(in[0]), type_of(in[1])}, body(DType::kF32));
    EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0]).winograd_convs, 1);
    const Tensor got = run_fn("cpu", in, body(DType::kF32))[0];
    ASSERT_EQ(got.shape(), truth.shape());
    EXPECT_LT(rel_err(got, truth), 5e-6)
        << pad[0].first << " " << pad[0].second << " " << pad[1].first << " " << pad[1].second;
  }
}

// Where netspec's own kernels are taken by default: 3x3 stride-1 f32 convs with >= 32 channels
// on CPUs whose oneDNN has no Winograd (no AVX-512; ONEDNN_MAX_CPU_ISA=AVX2 stands in), and with
// AVX-512 where oneDNN's choice is direct and there are at least 128 4x4 output tiles (forward
// passes) or 32 (weight gradients).
TEST(CpuConvAlgorithm, OwnWinogradWhereOneDnnHasNone) {
  using exec::cpu::own_winograd;
  const auto f32 = dnnl::memory::data_type::f32;
  const bool avx512 = exec::cpu::layout_block_size() == 16;
  const bool runs = exec::cpu::winograd_avx2_runs();
  using exec::cpu::WinogradPass;
  auto own = [&](dims src, dims w, dims dst, dims st = {1, 1}, dims dil = {0, 0},
                 WinogradPass pass = WinogradPass::kForward) {
    return own_winograd(f32, src, w, dst, st, dil, pass);
  };
  auto own_grad = [&](dims x, dims w, dims dy) {
    return own(x, w, dy, {1, 1}, {0, 0}, WinogradPass::kWeightGradient);
  };
  // With AVX-512 and the 16-lane kernels: every such conv from 32 tiles; with AVX-512 and 8-lane
  // kernels: where oneDNN has no Winograd, from 128 tiles (forward passes) or 32 (weight
  // gradients); with AVX2 only: every such conv.
  const bool wide = avx512 && exec::cpu::winograd_avx512_products();
  EXPECT_EQ(own({32, 64, 32, 32}, {64, 64, 3, 3}, {32, 64, 32, 32}), runs && (!avx512 || wide));
  EXPECT_EQ(own_grad({32, 64, 32, 32}, {64, 64, 3, 3}, {32, 64, 32, 32}),
            runs && (!avx512 || wide));
  // 32 tiles: the weight gradient, and the forward pass only with 16-lane kernels, with AVX-512.
  EXPECT_EQ(own({32, 512, 4, 4}, {512, 512, 3, 3}, {32, 512, 4, 4}), runs && (!avx512 || wide));
  EXPECT_EQ(own_grad({32, 512, 4, 4}, {512, 512, 3, 3}, {32, 512, 4, 4}), runs);
  EXPECT_EQ(own({16, 512, 7, 7}, {512, 512, 3, 3}, {16, 512, 7, 7}),  // 64 tiles
            runs && (!avx512 || wide));
  EXPECT_EQ(own({32, 256, 8, 8}, {256, 256, 3, 3}, {32, 256, 8, 8}), runs);  // 128 tiles
  EXPECT_EQ(own({1, 512, 4, 4}, {512, 512, 3, 3}, {1, 512, 4, 4}), runs && !avx512);  // 1 tile
  EXPECT_EQ(own_grad({1, 512, 4, 4}, {512, 512, 3, 3}, {1, 512, 4, 4}), runs && !avx512);
  EXPECT_EQ(own({128, 32, 28, 28}, {32, 32, 3, 3}, {128, 32, 28, 28}), runs);
  EXPECT_EQ(own_grad({128, 32, 28, 28}, {32, 32, 3, 3}, {128, 32, 28, 28}), runs);
  EXPECT_EQ(own({32, 128, 16, 16}, {128, 128, 3, 3}, {32, 128, 16, 16}),
            runs && (!avx512 || wide));
  EXPECT_EQ(own_grad({32, 128, 16, 16}, {128, 128, 3, 3}, {32, 128, 16, 16}),
            runs && (!avx512 || wide));
  // 40 input channels: no 16-channel blocks, so the 8-lane rule (oneDNN has no Winograd there).
  EXPECT_EQ(own({32, 40, 16, 16}, {32, 40, 3, 3}, {32, 32, 16, 16}), runs);
  EXPECT_EQ(own({2, 40, 16, 16}, {32, 40, 3, 3}, {2, 32, 16, 16}), runs && !avx512);  // 32 tiles
  {
    ScopedEnv onednn("NETSPEC_CPU_WINOGRAD", "onednn");
    EXPECT_FALSE(own({32, 512, 4, 4}, {512, 512, 3, 3}, {32, 512, 4, 4}));
  }
  EXPECT_FALSE(own({32, 16, 32, 32}, {32, 16, 3, 3}, {32, 32, 32, 32}));  // few channels
  EXPECT_FALSE(own({32, 64, 32, 32}, {128, 64, 3, 3}, {32, 128, 16, 16}, {2, 2}));
  EXPECT_FALSE(own({32, 64, 32, 32}, {64, 64, 3, 3}, {32, 64, 32, 32}, {1, 1}, {1, 1}));
  EXPECT_FALSE(own({32, 64, 32, 32}, {64, 64, 1, 1}, {32, 64, 32, 32}));
  EXPECT_FALSE(own_winograd(dnnl::memory::data_type::bf16, {32, 64, 32, 32}, {64, 64, 3, 3},
                            {32, 64, 32, 32}, {1, 1}, {0, 0}, WinogradPass::kForward));
  {
    ScopedEnv off("NETSPEC_CPU_WINOGRAD", "0");
    EXPECT_FALSE(own({32, 64, 32, 32}, {64, 64, 3, 3}, {32, 64, 32, 32}));
  }
  if (exec::cpu::winograd_avx2_runs()) {
    ScopedEnv on("NETSPEC_CPU_WINOGRAD", "own");
    EXPECT_TRUE(own({2, 8, 5, 5}, {16, 8, 3, 3}, {2, 16, 5, 5}));
    EXPECT_FALSE(own({2, 8, 5, 5}, {12, 8, 3, 3}, {2, 12, 5, 5}));  // O % 16
    // oneDNN's choice stays direct when netspec's own kernels are asked for.
    EXPECT_EQ(choice({32, 64, 32, 32}, {64, 64, 3, 3}, {32, 64, 32, 32}),
              dnnl::algorithm::convolution_direct);
  }
}

TEST(CpuConvAlgorithm, ChannelsLastWeightGradientOnlyOnSmallMaps) {
  using exec::cpu::bwd_weights_channels_last;
  const auto f32 = dnnl::memory::data_type::f32, bf16 = dnnl::memory::data_type::bf16;
  EXPECT_TRUE(bwd_weights_channels_last(f32, {32, 512, 4, 4}, 1));  // resnet18-cifar stage 4
  EXPECT_TRUE(bwd_weights_channels_last(f32, {32, 512, 2, 8}, 1));
  EXPECT_FALSE(bwd_weights_channels_last(f32, {32, 256, 8, 8}, 1));
  EXPECT_FALSE(bwd_weights_channels_last(f32, {32, 512, 4, 4}, 2));  // grouped
  EXPECT_FALSE(bwd_weights_channels_last(bf16, {32, 512, 4, 4}, 1));
  EXPECT_FALSE(bwd_weights_channels_last(f32, {32, 512, 4}, 1));  // 1-D
  ScopedEnv off("NETSPEC_CPU_BWDW_NHWC", "0");
  EXPECT_FALSE(bwd_weights_channels_last(f32, {32, 512, 4, 4}, 1));
}

// The weight gradient at 4x4 (channels last) and with the layout as stored: both within the
// direct kernels' rounding of the f64 truth; y and dx do not depend on the choice.
TEST(CpuConvAlgorithm, ChannelsLastWeightGradientMatchesF64) {
  const std::vector<Tensor> in{random_f32({8, 32, 4, 4}, 4), random_f32({32, 32, 3, 3}, 5),
                               random_f32({8, 32, 4, 4}, 6)};
  std::vector<Tensor> in64;
  for (const Tensor& t : in) in64.push_back(to_f64(t));
  const std::vector<Tensor> truth = run_fn("ref", in64, conv_and_grads(DType::kF64));
  for (const char* mode : {"0", "1"}) {
    ScopedEnv e("NETSPEC_CPU_BWDW_NHWC", mode);
    const std::vector<Tensor> got = run_fn("cpu", in, conv_and_grads(DType::kF32));
    for (size_t i = 0; i < 3; ++i) EXPECT_LT(rel_err(got[i], truth[i]), 2e-6) << mode << " " << i;
  }
}

}  // namespace
}  // namespace netspec::testing
