// The activations: relu, relu6 (clamps at 6), identity, swish = x·σ(x), hSwish = x·relu6(x+3)/6,
// gelu = 0.5·x·(1 + erf(x/√2)) (PyTorch's nn.GELU default, used by ViT/ConvNeXt/Swin) and
// geluTanh = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). StableHLO has no erf op: erf is the
// rational approximation XLA and Eigen use for f32 (|error| < 2e-7 on the clamped range).
#include <cmath>

#include "layers/lower.h"

namespace netspec::layers {
namespace {

Value* relu6(hlo::Builder& b, Value* x) {
  return b.minimum(b.maximum(x, splat(b, 0, x)), splat(b, 6, x));
}

// erf(x) ≈ x·P(x²)/Q(x²) with x clamped to [-4, 4] (erf(±4) = ±1 in f32).
Value* erf(hlo::Builder& b, Value* x) {
  static constexpr double kP[] = {-2.72614225801306e-10, 2.77068142495902e-08,
                                  -2.10102402082508e-06, -5.69250639462346e-05,
                                  -7.34990630326855e-04, -2.95459980854025e-03,
                                  -1.60960333262415e-02};
  static constexpr double kQ[] = {-1.45660718464996e-05, -2.13374055278905e-04,
                                  -1.68282697438203e-03, -7.37332916720468e-03,
                                  -1.42647390514189e-02};
  Value* xc = b.clamp(splat(b, -4, x), x, splat(b, 4, x));
  Value* x2 = b.multiply(xc, xc);
  auto horner = [&](const double* c, int n) {
    Value* acc = splat(b, c[0], x);
    for (int i = 1; i < n; ++i) acc = b.add(b.multiply(acc, x2), splat(b, c[i], x));
    return acc;
  };
  return b.divide(b.multiply(xc, horner(kP, 7)), horner(kQ, 5));
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
      Value* e = erf(b, b.multiply(x, splat(b, M_SQRT1_2, x)));
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
