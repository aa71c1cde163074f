// Squeeze-excitation and the inverted-residual skip shared by the mobile block kinds.
#include "layers/squeeze_excite.h"

namespace netspec::layers {
namespace {

// 1x1 conv with bias on a [B, C, 1, 1] map: y = W·s + b.
Value* fc(LowerCtx& c, Value* s) {
  Value* w = c.next_param();
  Value* bias = c.next_param();
  Value* y = conv(c, s, w, 1, Padding::valid);
  return c.b.add(y, bcast(c.b, bias, y, 1));
}

}  // namespace

Value* squeeze_excite(LowerCtx& c, Value* x, Activation act, SeGate gate) {
  hlo::Builder& b = c.b;
  const Shape& xs = x->type.shape();
  Value* sum = b.reduce(x, b.scalar(0, x->type.dtype()), {2, 3}, hlo::OpKind::kAdd);
  Value* mean = b.multiply(sum, b.constant_splat(1.0 / double(xs[2] * xs[3]), sum->type));
  Value* s = b.reshape(mean, {xs[0], xs[1], 1, 1});
  s = activation(b, fc(c, s), act);
  s = fc(c, s);
  if (gate == SeGate::sigmoid) {
    s = b.logistic(s);
  } else {  // hard-sigmoid = relu6(s + 3) / 6
    s = activation(b, b.add(s, splat(b, 3, s)), Activation::relu6);
    s = b.multiply(s, splat(b, 1.0 / 6, s));
  }
  Value* g = b.broadcast_in_dim(b.reshape(s, {xs[0], xs[1]}), xs, {0, 1});
  return b.multiply(x, g);
}

Value* skip_add(LowerCtx& c, Value* x, Value* y, int64_t stride) {
  if (stride == 1 && x->type.shape() == y->type.shape()) return c.b.add(y, x);
  return y;
}

}  // namespace netspec::layers
