// Update rules. Per parameter with gradient g (after global-norm clipping), lr_i = lr·headLrMult
// on the head layer, decay d_i = weightDecay where the parameter decays; a frozen parameter
// (name prefix in freeze) keeps its value and state and is left out of the clipping norm:
//   sgd:      g += d·p; buf = μ·buf + g; g = nesterov ? g + μ·buf : buf (μ > 0); p -= lr·g
//   adam:     p -= lr·d·p (AdamW, decoupled); m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²;
//             p -= lr · (m / (1-β1^t)) / (√(v / (1-β2^t)) + eps)
//   rmsprop:  g += d·p; ms = ρ·ms + (1-ρ)·g²; mom = μ·mom + lr·g / √(ms + eps); p -= mom
//   lamb:     m, v as adam; r = m̂ / (√v̂ + eps) + d·p; p -= lr·(‖p‖/‖r‖)·r (ratio 1 if a norm is 0)
//   muon, shampoo: their matrices as matrix_opt.h says, every other parameter as adam
#include "optim/optimizer.h"

#include "core/error.h"
#include "optim/matrix_opt.h"

namespace netspec::optim {
namespace {

struct Ops {
  hlo::Builder& b;
  Value* k(double v, Value* like) { return b.constant_splat(v, like->type); }
  // A scalar broadcast to like's shape.
  Value* bs(Value* s, Value* like) { return b.broadcast_in_dim(s, like->type.shape(), {}); }
  Value* sum_sq(Value* x) {
    hlo::I64s dims;
    for (int64_t d = 0; d < x->type.rank(); ++d) dims.push_back(d);
    return b.reduce(b.multiply(x, x), b.scalar(0, x->type.dtype()), dims, hlo::OpKind::kAdd);
  }
  Value* axpy(double a, Value* x, double c, Value* y) {  // a·x + c·y
    return b.add(b.multiply(k(a, x), x), b.multiply(k(c, y), y));
  }
};

}  // namespace

OptimConfig OptimConfig::from_train(const TrainConfig& t) {
  OptimConfig c;
  c.kind = t.optimizer;
  c.momentum = t.momentum;
  c.nesterov = t.nesterov;
  c.rms_decay = t.rmspropDecay;
  c.rms_eps = t.rmspropEps;
  c.weight_decay = t.weightDecay;
  c.wd_exclude_norm_bias = t.wdExcludeNormBias;
  c.grad_clip_norm = t.gradClipNorm;
  c.head_lr_mult = t.headLrMult;
  for (size_t a = 0; a < t.freeze.size();) {
    size_t e = t.freeze.find(',', a);
    if (e == std::string::npos) e = t.freeze.size();
    if (e > a) c.freeze.push_back(t.freeze.substr(a, e - a));
    a = e + 1;
  }
  return c;
}

std::vector<std::string> state_slots(const OptimConfig& c) {
  switch (c.kind) {
    case OptimizerKind::sgd:
      return c.momentum > 0 ? std::vector<std::string>{"momentum"} : std::vector<std::string>{};
    case OptimizerKind::adam:
    case OptimizerKind::lamb:
    case OptimizerKind::muon:  // muon: m = momentum buffer; shampoo: m = L, v = R
    case OptimizerKind::shampoo:
      return {"m", "v"};
    case OptimizerKind::rmsprop:
      return {"ms", "mom"};
  }
  fail("optimizer", "unknown optimizer kind {}", static_cast<int>(c.kind));
}

UpdateResult apply_update(hlo::Builder& b, const OptimConfig& c, const ParamTable& table,
                          const std::vector<Value*>& params, const std::vector<Value*>& grads_in,
                          const std::vector<Value*>& state, Value* lr, Value* step) {
  const size_t n = params.size();
  const size_t slots = state_slots(c).size();
  if (grads_in.size() != n || state.size() != slots * n || table.params.size() != n)
    fail("optimizer", "operand counts (got {} params, {} grads, {} state, {} in the table)", n,
         grads_in.size(), state.size(), table.params.size());
  Ops o{b};
  std::vector<Value*> grads = grads_in;
  std::vector<bool> frozen(n, false);
  for (size_t i = 0; i < n; ++i)
    for (const auto& f : c.freeze) frozen[i] = frozen[i] || table.params[i].name.rfind(f, 0) == 0;
  if (c.grad_clip_norm > 0 && n > 0) {  // g *= min(1, clip / (‖g‖ + 1e-6)), torch clip_grad_norm_
    Value* total = nullptr;
    for (size_t i = 0; i < n; ++i)
      if (!frozen[i]) total = total ? b.add(total, o.sum_sq(grads[i])) : o.sum_sq(grads[i]);
    if (!total) total = b.scalar(0, grads[0]->type.dtype());
    Value* norm = b.sqrt(total);
    Value* coef = b.divide(o.k(c.grad_clip_norm, norm), b.add(norm, o.k(1e-6, norm)));
    coef = b.minimum(coef, o.k(1, coef));
    for (auto& g : grads) g = b.multiply(g, o.bs(coef, g));
  }
  int head = -1;
  for (const auto& p : table.params) head = std::max(head, p.layer);
  DType dt = params.empty() ? DType::kF32 : params[0]->type.dtype();
  Value* lr_base = lr->type.dtype() == dt ? lr : b.convert(lr, dt);
  Value* t = b.convert(step, dt);
  Value* bc1 = nullptr;  // 1 - β1^t, 1 - β2^t
  Value* bc2 = nullptr;
  if (slots == 2 && c.kind != OptimizerKind::rmsprop) {  // adam, lamb, muon, shampoo
    bc1 = b.subtract(o.k(1, t), b.power(o.k(c.momentum, t), t));
    bc2 = b.subtract(o.k(1, t), b.power(o.k(c.beta2, t), t));
  }
  UpdateResult r;
  r.params.resize(n);
  r.state.resize(slots * n);
  for (size_t i = 0; i < n; ++i) {
    Value* p = params[i];
    Value* g = grads[i];
    if (frozen[i]) {
      r.params[i] = p;
      for (size_t k = 0; k < slots; ++k) r.state[k * n + i] = state[k * n + i];
      continue;
    }
    double d = (!c.wd_exclude_norm_bias || table.params[i].decay) ? c.weight_decay : 0.0;
    Value* lr_s = table.params[i].layer == head && c.head_lr_mult != 1.0
                      ? b.multiply(lr_base, o.k(c.head_lr_mult, lr_base))
                      : lr_base;
    OptimizerKind kind = c.kind;
    if (kind == OptimizerKind::muon || kind == OptimizerKind::shampoo) {
      const ParamDesc& pd = table.params[i];
      MatrixUpdate mu{};
      if (kind == OptimizerKind::muon && muon_eligible(pd))
        mu = muon_update(b, c, p, g, state[i], state[n + i], lr_s, d);
      else if (kind == OptimizerKind::shampoo && shampoo_eligible(pd))
        mu = shampoo_update(b, c, p, g, state[i], state[n + i], lr_s, bc2, d);
      if (mu.param) {
        r.params[i] = mu.param;
        r.state[i] = mu.s0;
        r.state[n + i] = mu.s1;
        continue;
      }
      kind = OptimizerKind::adam;  // the AdamW fallback
    }
    Value* lr_t = o.bs(lr_s, p);
    switch (kind) {
      case OptimizerKind::sgd: {
        if (d != 0) g = b.add(g, b.multiply(o.k(d, p), p));
        if (slots == 1) {
          Value* buf = b.add(b.multiply(o.k(c.momentum, p), state[i]), g);
          r.state[i] = buf;
          g = c.nesterov ? b.add(g, b.multiply(o.k(c.momentum, p), buf)) : buf;
        }
        r.params[i] = b.subtract(p, b.multiply(lr_t, g));
        break;
      }
      case OptimizerKind::adam:
      case OptimizerKind::lamb: {
        Value* m = o.axpy(c.momentum, state[i], 1 - c.momentum, g);
        Value* v = o.axpy(c.beta2, state[n + i], 1 - c.beta2, b.multiply(g, g));
        r.state[i] = m;
        r.state[n + i] = v;
        Value* mhat = b.divide(m, o.bs(bc1, m));
        Value* vhat = b.divide(v, o.bs(bc2, v));
        Value* upd = b.divide(mhat, b.add(b.sqrt(vhat), o.k(c.eps, v)));
        if (kind == OptimizerKind::adam) {
          if (d != 0) p = b.subtract(p, b.multiply(b.multiply(lr_t, o.k(d, p)), p));
          r.params[i] = b.subtract(p, b.multiply(lr_t, upd));
        } else {
          if (d != 0) upd = b.add(upd, b.multiply(o.k(d, p), p));
          Value* pn = b.sqrt(o.sum_sq(p));
          Value* un = b.sqrt(o.sum_sq(upd));
          Value* zero = o.k(0, pn);
          Value* ok = b.and_(b.compare(pn, zero, "GT"), b.compare(un, zero, "GT"));
          Value* ratio = b.select(ok, b.divide(pn, b.select(ok, un, o.k(1, un))), o.k(1, pn));
          r.params[i] = b.subtract(p, b.multiply(b.multiply(lr_t, o.bs(ratio, p)), upd));
        }
        break;
      }
      case OptimizerKind::rmsprop: {
        if (d != 0) g = b.add(g, b.multiply(o.k(d, p), p));
        Value* ms = o.axpy(c.rms_decay, state[i], 1 - c.rms_decay, b.multiply(g, g));
        Value* step_v = b.divide(b.multiply(lr_t, g), b.sqrt(b.add(ms, o.k(c.rms_eps, ms))));
        Value* mom = b.add(b.multiply(o.k(c.momentum, p), state[n + i]), step_v);
        r.state[i] = ms;
        r.state[n + i] = mom;
        r.params[i] = b.subtract(p, mom);
        break;
      }
      default:
        fail("optimizer", "kind {} has no element-wise rule", static_cast<int>(kind));
    }
  }
  return r;
}

}  // namespace netspec::optim
