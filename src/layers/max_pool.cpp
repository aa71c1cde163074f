// maxPool: max over size x size windows, padded with -inf; `same` padding follows the net's
// PadStyle like convolutions do. ceilMode (valid only, PyTorch's ceil_mode): the high side is
// padded with -inf so a last partial window is kept: high = (out - 1)·s + k - h.
#include <limits>

#include "layers/lower.h"

namespace netspec::layers {

Value* lower_max_pool(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<MaxPool>(layer);
  const Shape& s = x->type.shape();
  hlo::WindowOptions w;
  w.window_dimensions = {1, 1, l.size, l.size};
  w.window_strides = {1, 1, l.stride, l.stride};
  auto pads = [&](int64_t h, int64_t out) {
    if (!l.ceilMode) return spatial_padding(h, l.size, l.stride, l.pad, c.net.convPadStyle);
    return std::pair<int64_t, int64_t>(0, (out - 1) * l.stride + l.size - h);
  };
  w.padding = {{0, 0}, {0, 0}, pads(s[2], c.info.out[1]), pads(s[3], c.info.out[2])};
  Value* init = c.b.scalar(-std::numeric_limits<double>::infinity(), x->type.dtype());
  return c.b.reduce_window(x, init, w, hlo::OpKind::kMaximum);
}

NETSPEC_REGISTER_LAYER(maxPool, lower_max_pool)

}  // namespace netspec::layers
