// Which oneDNN convolution algorithm a 2-D convolution runs with: direct, or Winograd
// F(4x4, 3x3) (oneDNN's jit_wino_4x3, AVX-512 f32 only) where it was measured faster.
#pragma once
#include <dnnl.hpp>
#include <string_view>

namespace netspec::exec::cpu {

// Winograd computes the same convolution through 6x6 tile transforms: its rounding differs
// from the direct kernels' (relative error ~1e-6 on unit-scale data, tested in
// tests/exec/cpu_conv_algorithm_test.cpp), as cuDNN's and oneDNN's auto choices do.
// Taken for ungrouped f32 3x3 convs, stride 1, no dilation, 64-128 input and output channels
// (multiples of 16), output at least 16x16: on resnet18-cifar and resnet50 shapes (64@32,
// 128@16, 64@56, 128@28) it ran 1.1-2.2x faster than direct; at 256 channels (8x8, 14x14) its
// forward and input gradient ran up to 1.7x slower (docs/performance.md, session 10).
// NETSPEC_CPU_WINOGRAD=0 never takes it, =1 takes it wherever oneDNN has it (tests).
dnnl::algorithm conv_algorithm(dnnl::memory::data_type type, const dnnl::memory::dims& src,
                               const dnnl::memory::dims& weights, const dnnl::memory::dims& dst,
                               const dnnl::memory::dims& strides,
                               const dnnl::memory::dims& dilation);

// Weight gradients of ungrouped f32 2-D convolutions whose dy maps are at most 4x4 (resnet's last
// stage at 32x32 inputs) run with x and dy in NHWC (channels last) instead of as they are stored:
// oneDNN's jit:avx512_core backward-weights kernel took 18.0 ms on nChw16c and 11.2 ms on NHWC for
// mb32 512->512 3x3 at 4x4 (AMD EPYC Zen 4, 2 threads), 1 MiB reorders each side. At 8x8 the
// two were within 7 %; at 16x16 and 32x32 the Winograd kernels taken there are faster than
// either (docs/performance.md, session 12). NETSPEC_CPU_BWDW_NHWC=0 off.
// netspec's own Winograd (winograd.h: AVX2 kernels on nChw8c, AVX-512 ones on nChw16c) for f32
// 3x3 stride-1 ungrouped 2-D convs with input channels % 8 == 0 and output channels % 16 == 0,
// both >= 32: on CPUs whose oneDNN has no Winograd (no AVX-512) every such conv; with AVX-512
// and 16-channel blocks every such conv with enough 4x4 output tiles, otherwise those
// conv_algorithm leaves direct (sessions 21, 31, 32); the forward and input-gradient
// convs by F(4x4, 3x3) (both are forward convs here), the weight gradient by F(3x3, 4x4) (also
// input channels % 16). Every such conv of resnet18-cifar, resnet50 and mnist-cnn ran 1.0-2.7x
// faster than oneDNN's jit:avx2 direct kernels, most 1.7-2.7x (`bench_conv winograd`,
// docs/performance.md session 14).
// NETSPEC_CPU_WINOGRAD=0 never takes it; =own takes it on any CPU with AVX2 wherever it applies.
// `pass`: a forward conv (the forward and input-gradient products) or a weight gradient (src = x,
// dst = dy); with AVX-512 they need different numbers of 4x4 output tiles (conv_algorithm.cpp).
enum class WinogradPass { kForward, kWeightGradient };
bool own_winograd(dnnl::memory::data_type type, const dnnl::memory::dims& src,
                  const dnnl::memory::dims& weights, const dnnl::memory::dims& dst,
                  const dnnl::memory::dims& strides, const dnnl::memory::dims& dilation,
                  WinogradPass pass);

bool bwd_weights_channels_last(dnnl::memory::data_type type, const dnnl::memory::dims& dst,
                               int64_t groups);

inline bool is_winograd(std::string_view impl) {
  return impl.find("wino") != std::string_view::npos;
}

// make(algorithm) -> primitive_desc with conv_algorithm's choice first; if oneDNN has no
// Winograd implementation for it (throws, or only a reference one), or `usable(pd)` is false
// (the caller's operands cannot be reordered into its layouts: oneDNN reorders into Winograd's
// weight format only from plain ones), the direct one.
template <class MakePd, class Usable>
auto with_conv_algorithm(dnnl::algorithm a, MakePd make, Usable usable) -> decltype(make(a)) {
  if (a == dnnl::algorithm::convolution_winograd) {
    try {
      auto pd = make(a);
      if (is_winograd(pd.impl_info_str()) && usable(pd)) return pd;
    } catch (const dnnl::error&) {
    }
  }
  return make(dnnl::algorithm::convolution_direct);
}

}  // namespace netspec::exec::cpu
