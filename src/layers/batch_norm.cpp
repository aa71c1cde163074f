// batchNorm: BatchNorm2d over an image's channels (or BatchNorm1d over a vector) + act. Also the
// shared BN helper: y = (x - μ)·rsqrt(σ² + eps)·γ + β, μ/σ² over every dim but 1 (biased σ², as
// PyTorch normalises); train reports (μ, σ²) per BN, eval reads the running (μ, σ²) inputs.
#include "autodiff/vjp.h"
#include "layers/lower.h"

namespace netspec::layers {

Value* batch_norm(LowerCtx& c, Value* x, const Bn& bn) {
  Value* gamma = bn.gamma;
  Value* beta = bn.beta;
  hlo::Builder& b = c.b;
  BnStats s;
  if (c.train) {
    hlo::I64s dims;
    int64_t count = 1;
    for (int64_t d = 0; d < x->type.rank(); ++d)
      if (d != 1) {
        dims.push_back(d);
        count *= x->type.dim(d);
      }
    count = bn_replica_count(c, count);  // sync-BN: the global batch's elements
    Value* zero = b.scalar(0, x->type.dtype());
    Value* sum = bn_replica_sum(c, b.reduce(x, zero, dims, hlo::OpKind::kAdd));
    Value* inv_n = b.constant_splat(1.0 / static_cast<double>(count), sum->type);
    // μ = Σx / n (a division: 1/n rounded to f32 would leave Σ(x - μ) ≠ 0 by 1e-8 relative,
    // which the f64 gradient checks of an f32-emitted net see through the next line).
    s.mean = b.divide(sum, b.constant_splat(static_cast<double>(count), sum->type));
    // σ²'s gradient through μ is exactly zero (Σ(x - μ) = 0): stop_gradient spares the backward
    // a reduction pass over x for it (resnet50's step -2.7 % on a Zen 5; the same forward).
    Value* centered = b.subtract(x, bcast(b, autodiff::stop_gradient(b, s.mean), x, 1));
    Value* sq =
        bn_replica_sum(c, b.reduce(b.multiply(centered, centered), zero, dims, hlo::OpKind::kAdd));
    s.var = b.multiply(sq, inv_n);
    s.count = count;
    if (c.batch_stats) c.batch_stats->push_back(s);
  } else {
    s = bn.running;
  }
  Value* inv_std = b.rsqrt(b.add(s.var, b.constant_splat(c.net.bnEps, s.var->type)));
  Value* scale = b.multiply(gamma, inv_std);                   // γ / √(σ² + eps)
  Value* shift = b.subtract(beta, b.multiply(s.mean, scale));  // β - μ·scale
  return b.add(b.multiply(x, bcast(b, scale, x, 1)), bcast(b, shift, x, 1));
}

Value* lower_batch_norm(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<BatchNorm>(layer);
  if (c.info.in.size() == 1)
    c.vec(l.ch);
  else
    c.image(l.ch);
  return activation(c.b, batch_norm(c, x, c.bn("", l.ch)), l.act);
}

NETSPEC_REGISTER_LAYER(batchNorm, lower_batch_norm)

}  // namespace netspec::layers
