// maxPool: max over size x size windows, padded with -inf; `same` padding follows the net's
// PadStyle like convolutions do. ceilMode (valid only, PyTorch's ceil_mode): out =
// ceil((h - k) / s) + 1, minus one when the last window would start past the input; the high side
// is padded with -inf so a last partial window is kept: high = (out - 1)·s + k - h.
#include <limits>

#include "layers/lower.h"

namespace netspec::layers {

int64_t pool_out(int64_t h, int64_t k, int64_t s, Padding p, bool ceil_mode) {
  if (!ceil_mode) return conv_out(h, k, s, p);
  if (h < k) return 0;
  int64_t out = (h - k + s - 1) / s + 1;
  if ((out - 1) * s >= h) --out;
  return out;
}

Value* lower_max_pool(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<MaxPool>(layer);
  Fm f = c.image(-1);
  if (l.ceilMode && l.pad != Padding::valid)
    c.fail("ceilMode needs pad \"valid\" (PyTorch's ceil_mode with padding 0)");
  int64_t oh = pool_out(f.h, l.size, l.stride, l.pad, l.ceilMode);
  int64_t ow = pool_out(f.w, l.size, l.stride, l.pad, l.ceilMode);
  if (oh <= 0 || ow <= 0)
    c.fail("spatial size goes to zero ({}x{} with window {} stride {})", f.h, f.w, l.size,
           l.stride);
  hlo::WindowOptions w;
  w.window_dimensions = {1, 1, l.size, l.size};
  w.window_strides = {1, 1, l.stride, l.stride};
  auto pads = [&](int64_t h, int64_t out) {
    if (!l.ceilMode) return spatial_padding(h, l.size, l.stride, l.pad, c.net.convPadStyle);
    return std::pair<int64_t, int64_t>(0, (out - 1) * l.stride + l.size - h);
  };
  w.padding = {{0, 0}, {0, 0}, pads(f.h, oh), pads(f.w, ow)};
  Value* init = c.b.scalar(-std::numeric_limits<double>::infinity(), x->type.dtype());
  return c.b.reduce_window(x, init, w, hlo::OpKind::kMaximum);
}

NETSPEC_REGISTER_LAYER(maxPool, lower_max_pool)

}  // namespace netspec::layers
