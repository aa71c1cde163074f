// The matrix functions of Muon and Shampoo (see matrix_opt.h; the rules are muon.cpp and
// shampoo.cpp).
//   NS5: X = u/max(‖u‖_F, 1e-7) (transposed when m > n); 5×: A = X·Xᵀ,
//        X = a·X + (b·A + c·A·A)·X with (a, b, c) = (3.4445, -4.7750, 2.0315)
// The inverse 4th root is the coupled Newton iteration (Guo & Higham 2006) with p = 4:
//   z = (p+1)/(2·tr(A')), M = z·A', H = z^{1/p}·I;  repeat: T = ((p+1)·I - M)/p, H = H·T, M = T^p·M
// H → A'^{-1/p} for eigenvalues of M in (0, p+1): every eigenvalue m maps to m·((p+1-m)/p)^p,
// at most 1 after one step and growing ×((p+1)/p)^p ≈ 2.44 per step while small.
#include "optim/matrix_opt.h"

#include <cmath>

#include "optim/rule.h"

namespace netspec::optim {
namespace {

Value* sum_all(hlo::Builder& b, Value* x) {
  return b.reduce(x, b.scalar(0, x->type.dtype()), {0, 1}, hlo::OpKind::kAdd);
}
Value* eye(hlo::Builder& b, int64_t n, DType dt) {
  hlo::Type it = hlo::Type::tensor(DType::kI32, {n, n});
  Value* on = b.compare(b.iota(it, 0), b.iota(it, 1), "EQ");
  hlo::Type ft = hlo::Type::tensor(dt, {n, n});
  return b.select(on, b.constant_splat(1, ft), b.constant_splat(0, ft));
}
Value* trace(hlo::Builder& b, Value* a, Value* id) { return sum_all(b, b.multiply(a, id)); }

constexpr double kRootP = 4;

}  // namespace

Value* mm(hlo::Builder& b, Value* x, Value* y, bool yt) {
  hlo::DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {yt ? 1 : 0};
  return b.dot_general(x, y, d);
}

Value* t2(hlo::Builder& b, Value* x) { return b.transpose(x, {1, 0}); }

int shampoo_root_iterations(int64_t n) {
  // Smallest eigenvalue of the start M: z·δ = (p+1)/2 · ε/(n(1+ε)); grown to 0.5 at ×((p+1)/p)^p
  // per step, then ~5 quadratic steps to f32/f64 precision.
  const double r0 = (kRootP + 1) / 2 * kShampooEps / (static_cast<double>(n) * (1 + kShampooEps));
  const double growth = std::pow((kRootP + 1) / kRootP, kRootP);
  return static_cast<int>(std::ceil(std::log(0.5 / r0) / std::log(growth))) + 5;
}

Value* newton_schulz5(hlo::Builder& b, Value* x) {
  const bool tall = x->type.shape()[0] > x->type.shape()[1];
  if (tall) x = t2(b, x);
  Value* norm = b.sqrt(sum_all(b, b.multiply(x, x)));
  norm = b.maximum(norm, b.scalar(1e-7, norm->type.dtype()));
  x = b.divide(x, bcast(b, norm, x));
  for (int k = 0; k < kMuonNsSteps; ++k) {
    Value* a = mm(b, x, x, true);                            // X·Xᵀ
    Value* bm = b.add(b.multiply(splat(b, kMuonNsB, a), a),  // b·A + c·A·A
                      b.multiply(splat(b, kMuonNsC, a), mm(b, a, a)));
    x = b.add(b.multiply(splat(b, kMuonNsA, x), x), mm(b, bm, x));
  }
  return tall ? t2(b, x) : x;
}

Value* inverse_fourth_root(hlo::Builder& b, Value* a) {
  const int64_t n = a->type.shape()[0];
  const DType dt = a->type.dtype();
  Value* id = eye(b, n, dt);
  Value* tr = trace(b, a, id);
  Value* delta = b.add(b.multiply(tr, b.scalar(kShampooEps / static_cast<double>(n), dt)),
                       b.scalar(1e-30, dt));
  Value* ar = b.add(a, b.multiply(bcast(b, delta, a), id));
  Value* z = b.divide(b.scalar((kRootP + 1) / 2, dt), trace(b, ar, id));
  Value* m = b.multiply(bcast(b, z, ar), ar);
  Value* h = b.multiply(bcast(b, b.power(z, b.scalar(1 / kRootP, dt)), id), id);
  Value* five_id = b.multiply(splat(b, (kRootP + 1) / kRootP, id), id);
  for (int k = 0, iters = shampoo_root_iterations(n); k < iters; ++k) {
    Value* t = b.subtract(five_id, b.multiply(splat(b, 1 / kRootP, m), m));  // ((p+1)I - M)/p
    h = mm(b, h, t);
    Value* t_2 = mm(b, t, t);
    m = mm(b, mm(b, t_2, t_2), m);
  }
  return h;
}

}  // namespace netspec::optim
