// maxPool: max over size x size windows, padded with -inf; `same` padding follows the net's
// PadStyle like convolutions do.
#include <limits>

#include "layers/lower.h"

namespace netspec::layers {

Value* lower_max_pool(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<MaxPool>(layer);
  const Shape& s = x->type.shape();
  hlo::WindowOptions w;
  w.window_dimensions = {1, 1, l.size, l.size};
  w.window_strides = {1, 1, l.stride, l.stride};
  w.padding = {{0, 0},
               {0, 0},
               spatial_padding(s[2], l.size, l.stride, l.pad, c.net.convPadStyle),
               spatial_padding(s[3], l.size, l.stride, l.pad, c.net.convPadStyle)};
  Value* init = c.b.scalar(-std::numeric_limits<double>::infinity(), x->type.dtype());
  return c.b.reduce_window(x, init, w, hlo::OpKind::kMaximum);
}

NETSPEC_REGISTER_LAYER(maxPool, lower_max_pool)

}  // namespace netspec::layers
