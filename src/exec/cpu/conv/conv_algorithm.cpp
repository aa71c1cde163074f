#include "exec/cpu/conv/conv_algorithm.h"

#include <cstdlib>
#include <string_view>

#include "exec/cpu/conv/winograd.h"
#include "exec/cpu/dnnl_util.h"

namespace netspec::exec::cpu {

namespace {
// NETSPEC_CPU_WINOGRAD: unset = by shape, 0 = never, 1 = wherever oneDNN implements it, own =
// netspec's own kernels wherever they apply, onednn = oneDNN's by shape and never the own ones
// (A/B: the default before session 21 on AVX-512). Read at each plan (not per run), so a test
// can switch it between plans.
constexpr int kOwn = 2, kOneDnn = 3;
int winograd_mode() {
  const char* e = std::getenv("NETSPEC_CPU_WINOGRAD");
  if (!e || !*e) return -1;
  const std::string_view v(e);
  return v == "0" ? 0 : v == "own" ? kOwn : v == "onednn" ? kOneDnn : 1;
}

// f32, 2-D, ungrouped (weights O, I, kh, kw), 3x3, stride 1, no dilation.
bool winograd_form(dnnl::memory::data_type type, const dnnl::memory::dims& src,
                   const dnnl::memory::dims& weights, const dnnl::memory::dims& dst,
                   const dnnl::memory::dims& strides, const dnnl::memory::dims& dilation) {
  return type == dnnl::memory::data_type::f32 && src.size() == 4 && weights.size() == 4 &&
         dst.size() == 4 && weights[2] == 3 && weights[3] == 3 && strides[0] == 1 &&
         strides[1] == 1 && dilation[0] == 0 && dilation[1] == 0;
}
}  // namespace

dnnl::algorithm conv_algorithm(dnnl::memory::data_type type, const dnnl::memory::dims& src,
                               const dnnl::memory::dims& weights, const dnnl::memory::dims& dst,
                               const dnnl::memory::dims& strides,
                               const dnnl::memory::dims& dilation) {
  const auto direct = dnnl::algorithm::convolution_direct;
  const int mode = winograd_mode();
  if (mode == 0 || mode == kOwn || !winograd_form(type, src, weights, dst, strides, dilation))
    return direct;
  if (mode == 1) return dnnl::algorithm::convolution_winograd;
  auto mid = [](int64_t c) { return c % 16 == 0 && c >= 64 && c <= 128; };
  const bool channels = mid(src[1]) && mid(dst[1]);
  const bool map = dst[2] >= 16 && dst[3] >= 16;
  return channels && map ? dnnl::algorithm::convolution_winograd : direct;
}

bool own_winograd(dnnl::memory::data_type type, const dnnl::memory::dims& src,
                  const dnnl::memory::dims& weights, const dnnl::memory::dims& dst,
                  const dnnl::memory::dims& strides, const dnnl::memory::dims& dilation,
                  WinogradPass pass) {
  const int mode = winograd_mode();
  if (mode == 0 || mode == kOneDnn || !winograd_form(type, src, weights, dst, strides, dilation) ||
      !winograd_avx2_runs() || src[1] % 8 != 0 || dst[1] % 16 != 0)
    return false;
  if (mode == kOwn) return true;
  if (src[1] < 32 || dst[1] < 32) return false;
  // With AVX-512, oneDNN's Winograd where conv_algorithm picks it (64-128 channels on maps of
  // 16+), these kernels where oneDNN would run direct: resnet18-cifar's 256 and 512 channel
  // convs, resnet50's 14x14 and 7x7 stages (Intel kind A, session 21: resnet18 train step
  // 316-319 -> 283-285 ms, resnet50 1625 -> 1524 ms; oneDNN-only was 10 % slower than all-own,
  // whose Winograd weight transforms cost more at 64-128 channels). Not with fewer than 32 4x4
  // output tiles (batch 1 inference): the transformed weights, 4x the kernel's size, are then read
  // for next to no products (resnet18-cifar eval b1: 3.5 ms direct, 8.0 ms with these kernels).
  // A forward pass transforms the kernel on every call (36 values per input-output channel pair,
  // written and read back) and, on 8-lane kernels, saves products only where at least 128 tiles
  // share them (AMD Zen 5, session 31: 512 channels at 4x4 (32 tiles) 9.5 ms vs 6.1 direct, at
  // 7x7 batch 16 (64 tiles) 11.8 vs 9.4; 256 at 8x8 batch 32 (128 tiles) 5.2 vs 5.7). The weight
  // gradient (F(3x3, 4x4), no kernel transform in) stays ahead from 32 tiles (512 at 4x4: 6.0
  // vs 8.3 ms).
  // With the 16-lane kernels (winograd_avx512_products: products, transforms on the planner's
  // nChw16c with no reorders around them, the kernel's transform 16 output channels at a time;
  // session 32) they beat or tie oneDNN's Winograd and direct kernels wherever they apply from
  // 32 tiles (AMD Zen 5, `bench_conv winograd`, ms: 128@16 b32 forward 2.27 vs oneDNN's Winograd
  // 7.70 before; 64@56 b16 dW 7.39 vs 8.94; 512@4 b32 (32 tiles) forward 4.64 vs 5.32 direct,
  // input gradient 5.03 vs 6.59; mnist-cnn's 32@28 b128 forward 4.52 vs 5.77 direct; 64@32 b32
  // forward even; resnet18-cifar's step 2.5 % faster with forward passes from 32 tiles than 64).
  if (onednn_has_isa(dnnl::cpu_isa::avx512_core)) {
    const int64_t tiles = dst[0] * ((dst[2] + 3) / 4) * ((dst[3] + 3) / 4);
    if (winograd_avx512_products() && src[1] % 16 == 0 && dst[1] % 16 == 0) return tiles >= 32;
    const bool onednn_winograd = conv_algorithm(type, src, weights, dst, strides, dilation) ==
                                 dnnl::algorithm::convolution_winograd;
    return !onednn_winograd && tiles >= (pass == WinogradPass::kWeightGradient ? 32 : 128);
  }
  return true;
}

bool bwd_weights_channels_last(dnnl::memory::data_type type, const dnnl::memory::dims& dst,
                               int64_t groups) {
  if (const char* e = std::getenv("NETSPEC_CPU_BWDW_NHWC"); e && std::string_view(e) == "0")
    return false;
  return type == dnnl::memory::data_type::f32 && groups == 1 && dst.size() == 4 &&
         dst[2] * dst[3] <= 16;
}

}  // namespace netspec::exec::cpu
