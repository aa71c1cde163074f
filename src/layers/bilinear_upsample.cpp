// bilinearUpsample: [B, C, H, W] -> [B, C, sH, sW], PyTorch's bilinear with align_corners=False:
// output row i samples src = max((i + 0.5)/s - 0.5, 0), blending rows floor(src) and
// min(floor(src) + 1, H - 1) by the fraction. Separable: two dot_generals with constant [sH, H]
// and [sW, W] weight matrices (each row has at most two non-zeros), so the VJP is two matmuls.
#include <cmath>

#include "layers/lower.h"

namespace netspec::layers {

// The [n·s, n] interpolation matrix of one axis (align_corners=False, edges clamped).
Tensor bilinear_matrix(int64_t n, int64_t s, DType dtype) {
  std::vector<double> m(static_cast<size_t>(n * s * n), 0.0);
  for (int64_t i = 0; i < n * s; ++i) {
    double src = std::max((double(i) + 0.5) / double(s) - 0.5, 0.0);
    auto i0 = static_cast<int64_t>(std::floor(src));
    int64_t i1 = std::min(i0 + 1, n - 1);
    double f = src - double(i0);
    m[static_cast<size_t>(i * n + i0)] += 1 - f;
    m[static_cast<size_t>(i * n + i1)] += f;
  }
  return Tensor::from<double>(dtype, {n * s, n}, m);
}

// x [B, C, H, W] -> [B, C, H·s, W·s] (two contractions: over H, then over W).
Value* bilinear_upsample(hlo::Builder& b, Value* x, int64_t s) {
  const Shape& xs = x->type.shape();
  DType dt = x->type.dtype();
  Value* wy = b.constant(bilinear_matrix(xs[2], s, dt));  // [sH, H]
  Value* wx = b.constant(bilinear_matrix(xs[3], s, dt));  // [sW, W]
  hlo::DotDims d;  // contract dim 2 with the matrix's columns; the free rows land last
  d.lhs_contracting = {2};
  d.rhs_contracting = {1};
  Value* t = b.dot_general(x, wy, d);  // [B, C, W, sH]
  return b.dot_general(t, wx, d);      // [B, C, sH, sW]
}

Value* lower_bilinear_upsample(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<BilinearUpsample>(layer);
  c.image(-1);
  return bilinear_upsample(c.b, x, l.scale);
}

NETSPEC_REGISTER_LAYER(bilinearUpsample, lower_bilinear_upsample)

}  // namespace netspec::layers
