#include "exec/cpu/conv_algorithm.h"

#include <cstdlib>
#include <string_view>

namespace netspec::exec::cpu {

namespace {
// NETSPEC_CPU_WINOGRAD: unset = by shape, 0 = never, 1 = wherever oneDNN implements it.
// Read at each plan (not per run), so a test can switch it between plans.
int winograd_mode() {
  const char* e = std::getenv("NETSPEC_CPU_WINOGRAD");
  if (!e || !*e) return -1;
  return std::string_view(e) == "0" ? 0 : 1;
}
}  // namespace

dnnl::algorithm conv_algorithm(dnnl::memory::data_type type, const dnnl::memory::dims& src,
                               const dnnl::memory::dims& weights, const dnnl::memory::dims& dst,
                               const dnnl::memory::dims& strides,
                               const dnnl::memory::dims& dilation) {
  const auto direct = dnnl::algorithm::convolution_direct;
  const int mode = winograd_mode();
  // Ungrouped 2-D (weights O, I, kh, kw), f32, 3x3, stride 1, dilation 0 (oneDNN's "none").
  if (mode == 0 || type != dnnl::memory::data_type::f32 || src.size() != 4 || weights.size() != 4 ||
      dst.size() != 4)
    return direct;
  if (weights[2] != 3 || weights[3] != 3 || strides[0] != 1 || strides[1] != 1 ||
      dilation[0] != 0 || dilation[1] != 0)
    return direct;
  if (mode == 1) return dnnl::algorithm::convolution_winograd;
  auto mid = [](int64_t c) { return c % 16 == 0 && c >= 64 && c <= 128; };
  const bool channels = mid(src[1]) && mid(dst[1]);
  const bool map = dst[2] >= 16 && dst[3] >= 16;
  return channels && map ? dnnl::algorithm::convolution_winograd : direct;
}

bool bwd_weights_channels_last(dnnl::memory::data_type type, const dnnl::memory::dims& dst,
                               int64_t groups) {
  if (const char* e = std::getenv("NETSPEC_CPU_BWDW_NHWC"); e && std::string_view(e) == "0")
    return false;
  return type == dnnl::memory::data_type::f32 && groups == 1 && dst.size() == 4 &&
         dst[2] * dst[3] <= 16;
}

}  // namespace netspec::exec::cpu
