// Squeeze-excitation and the inverted-residual skip shared by the mobile block kinds.
#include "layers/squeeze_excite.h"

namespace netspec::layers {

Value* squeeze_excite(LowerCtx& c, const std::string& name, Value* x, int64_t squeeze,
                      Activation act, SeGate gate) {
  hlo::Builder& b = c.b;
  const Shape& xs = x->type.shape();
  Value* sum = b.reduce(x, b.scalar(0, x->type.dtype()), {2, 3}, hlo::OpKind::kAdd);
  Value* mean = b.multiply(sum, b.constant_splat(1.0 / double(xs[2] * xs[3]), sum->type));
  Value* s = b.reshape(mean, {xs[0], xs[1], 1, 1});
  s = activation(b, conv(c, name + ".fc1", s, {squeeze, 1, 1, 1, true, Padding::valid}), act);
  s = conv(c, name + ".fc2", s, {xs[1], 1, 1, 1, true, Padding::valid});
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

Value* drop_path_skip_add(LowerCtx& c, Value* x, Value* y, int block, int64_t stride) {
  y = c.drop_path(y, block, 0, stride == 1 && x->type.shape() == y->type.shape());
  return skip_add(c, x, y, stride);
}

}  // namespace netspec::layers
