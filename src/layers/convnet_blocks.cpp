// Shared pieces of the modern-ConvNet kinds (see convnet_blocks.h).
#include "layers/convnet_blocks.h"

#include <limits>

#include "core/error.h"

namespace netspec::layers {

Value* channel_shuffle(hlo::Builder& b, Value* x, int64_t groups) {
  const Shape& s = x->type.shape();
  if (s.size() != 4 || s[1] % groups != 0)
    fail("channel_shuffle", "channels must split into {} groups (got [{}])", groups,
         fmt::join(s, ", "));
  Value* v = b.reshape(x, {s[0], groups, s[1] / groups, s[2], s[3]});
  return b.reshape(b.transpose(v, {0, 2, 1, 3, 4}), s);
}

namespace {
hlo::WindowOptions window(int64_t k, int64_t s, Pad2 ph, Pad2 pw) {
  hlo::WindowOptions w;
  w.window_dimensions = {1, 1, k, k};
  w.window_strides = {1, 1, s, s};
  w.padding = {{0, 0}, {0, 0}, ph, pw};
  return w;
}
}  // namespace

Value* avg_pool(hlo::Builder& b, Value* x, int64_t k, int64_t s, Pad2 ph, Pad2 pw) {
  Value* sum =
      b.reduce_window(x, b.scalar(0, x->type.dtype()), window(k, s, ph, pw), hlo::OpKind::kAdd);
  return b.multiply(sum, splat(b, 1.0 / double(k * k), sum));
}

Value* max_pool(hlo::Builder& b, Value* x, int64_t k, int64_t s, Pad2 ph, Pad2 pw) {
  Value* init = b.scalar(-std::numeric_limits<double>::infinity(), x->type.dtype());
  return b.reduce_window(x, init, window(k, s, ph, pw), hlo::OpKind::kMaximum);
}

Value* bn_act(LowerCtx& c, const std::string& name, Value* x, Activation a) {
  return activation(c.b, batch_norm(c, x, c.bn(name, x->type.dim(1))), a);
}

Value* concat_channels(hlo::Builder& b, const std::vector<Value*>& xs) {
  return b.concatenate(xs, 1);
}

Value* slice_channels(hlo::Builder& b, Value* x, int64_t lo, int64_t hi) {
  const Shape& s = x->type.shape();
  return b.slice(x, {0, lo, 0, 0}, {s[0], hi, s[2], s[3]});
}

}  // namespace netspec::layers
