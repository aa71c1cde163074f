// The activations: relu, relu6 (clamps at 6), identity, swish = x·σ(x), hSwish = x·relu6(x+3)/6,
// gelu = 0.5·x·(1 + erf(x/√2)) (PyTorch's nn.GELU default, used by ViT/ConvNeXt/Swin) and
// geluTanh = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). erf is chlo.erf (StableHLO has none; JAX
// emits the same): one vectorised kernel on the cpu executor, d erf = (2/√π)·e^(−x²) in the VJP.
#include <cmath>

#include "layers/lower.h"

namespace netspec::layers {
namespace {

Value* relu6(hlo::Builder& b, Value* x) {
  return b.minimum(b.maximum(x, splat(b, 0, x)), splat(b, 6, x));
}

}  // namespace

Value* softplus(hlo::Builder& b, Value* x) {
  Value* zero = b.constant_splat(0, x->type);
  return b.add(b.maximum(x, zero), b.log_plus_one(b.exponential(b.negate(b.abs(x)))));
}

Value* activation(hlo::Builder& b, Value* x, Activation a) {
  switch (a) {
    case Activation::identity:
      return x;
    case Activation::relu:
      return b.maximum(x, splat(b, 0, x));
    case Activation::relu6:
      return relu6(b, x);
    case Activation::swish:
      return b.multiply(x, b.logistic(x));
    case Activation::hSwish:
      return b.multiply(x, b.divide(relu6(b, b.add(x, splat(b, 3, x))), splat(b, 6, x)));
    case Activation::gelu: {
      Value* e = b.erf(b.multiply(x, splat(b, M_SQRT1_2, x)));
      return b.multiply(b.multiply(splat(b, 0.5, x), x), b.add(splat(b, 1, x), e));
    }
    case Activation::geluTanh: {
      Value* x3 = b.multiply(b.multiply(x, x), x);
      Value* inner = b.multiply(splat(b, std::sqrt(2.0 / M_PI), x),
                                b.add(x, b.multiply(splat(b, 0.044715, x), x3)));
      Value* t = b.add(splat(b, 1, x), b.tanh(inner));
      return b.multiply(b.multiply(splat(b, 0.5, x), x), t);
    }
  }
  fail("activation", "unknown activation {}", static_cast<int>(a));
}

}  // namespace netspec::layers
