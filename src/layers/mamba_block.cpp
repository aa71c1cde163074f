// mambaBlock (Mamba, Gu & Dao 2023; mamba_ssm's Block + Mamba mixer) x nBlocks on [T, dim], then
// the final LayerNorm "norm_f". Per block, with di = expand·dim, R = ceil(dim/16), N = stateSize:
//   u = LN(x);  (xs, z) = in_proj(u)                      [T, di] each
//   xs = silu(conv1d(xs) + b)                            depthwise causal, k = 4 (x[<0] = 0)
//   (δ, B, C) = x_proj(xs)                               [T, R], [T, N], [T, N]
//   Δ = softplus(dt_proj(δ) + dt_bias);  A = -exp(A_log) [di, N]
//   h_t = exp(Δ_t A) ⊙ h_{t-1} + (Δ_t x_t) ⊗ B_t;  y_t = h_t·C_t + D ⊙ x_t   (selective SSM)
//   x = x + out_proj(y ⊙ silu(z))
// The recurrence h_t = a_t h_{t-1} + b_t is an associative scan, unrolled here as Hillis–Steele
// over log2(T) levels of whole-sequence elementwise ops ((a, b) ∘ (a', b') = (a a', a' b + b')):
// no loop, and its gradient comes from the ordinary per-op VJP rules (cost: the levels' [B, T,
// di, N] intermediates are kept for the backward pass, O(T log T) memory).
#include "layers/sequence.h"

namespace netspec::layers {
namespace {

using hlo::Builder;

// h_t = a_t h_{t-1} + b_t with h_{-1} = 0 along dim 1 of a, b [B, T, ...]: after the level with
// offset k, (a_t, b_t) composes steps t-2k+1..t; a before the start is 1, b is 0.
Value* linear_scan(Builder& b, Value* a, Value* bb) {
  int64_t t = a->type.dim(1);
  for (int64_t k = 1; k < t; k *= 2) {
    Value* a_prev = delay(b, a, k, 1.0);
    Value* b_prev = delay(b, bb, k, 0.0);
    bb = b.add(b.multiply(a, b_prev), bb);
    a = b.multiply(a, a_prev);
  }
  return bb;
}

Value* mixer(LowerCtx& c, Value* u, int64_t di, int64_t r, int64_t n) {
  Builder& b = c.b;
  const int64_t bt = u->type.dim(0), t = u->type.dim(1), dim = u->type.dim(2);
  DType dt = u->type.dtype();
  Value* xz = linear(c, "mixer.in_proj", u, 2 * di, false);
  Value* xs = b.slice(xz, {0, 0, 0}, {bt, t, di});
  Value* z = b.slice(xz, {0, 0, di}, {bt, t, 2 * di});
  // depthwise causal conv: y[t] = Σ_j w[:, 0, j] x[t - 3 + j] + bias
  Value* cw = c.param("mixer.conv1d.weight", {di, 1, 4}, ParamInit::convWeight, true);
  Value* cb = c.param("mixer.conv1d.bias", {di}, ParamInit::zeros, false);
  Value* conv = bcast(b, cb, xs, 2);
  for (int64_t j = 0; j < 4; ++j) {
    Value* wj = b.reshape(b.slice(cw, {0, 0, j}, {di, 1, j + 1}), {di});
    conv = b.add(conv, b.multiply(delay(b, xs, 3 - j), bcast(b, wj, xs, 2)));
  }
  xs = activation(b, conv, Activation::swish);
  Value* dbc = linear(c, "mixer.x_proj", xs, r + 2 * n, false);
  Value* delta = b.slice(dbc, {0, 0, 0}, {bt, t, r});
  Value* bm = b.slice(dbc, {0, 0, r}, {bt, t, r + n});
  Value* cm = b.slice(dbc, {0, 0, r + n}, {bt, t, r + 2 * n});
  Value* dw = c.param("mixer.dt_proj.weight", {di, r}, ParamInit::linearWeight, true);
  Value* dbias = c.param("mixer.dt_proj.bias", {di}, ParamInit::ssmDtBias, false);
  Value* a_log = c.param("mixer.A_log", {di, n}, ParamInit::ssmALog, false);
  Value* dd = c.param("mixer.D", {di}, ParamInit::ssmD, false);
  Value* dl = softplus(b, linear_apply(b, delta, dw, dbias));  // Δ [B, T, di]
  Shape s4{bt, t, di, n};
  Value* a_mat = b.negate(b.exponential(a_log));  // A = -exp(A_log)
  Value* da = b.exponential(
      b.multiply(b.broadcast_in_dim(dl, s4, {0, 1, 2}), b.broadcast_in_dim(a_mat, s4, {2, 3})));
  Value* dbx = b.multiply(b.broadcast_in_dim(b.multiply(dl, xs), s4, {0, 1, 2}),
                          b.broadcast_in_dim(bm, s4, {0, 1, 3}));
  Value* h = linear_scan(b, da, dbx);            // [B, T, di, N]
  c.add_flops(2 * t * di * 4 + 6 * t * di * n);  // the conv taps and the scan (not dot ops)
  // y_t = Σ_n h_t[:, n] C_t[n] + D ⊙ x_t
  Value* y = b.reduce(b.multiply(h, b.broadcast_in_dim(cm, s4, {0, 1, 3})), b.scalar(0, dt), {3},
                      hlo::OpKind::kAdd);
  y = b.add(y, b.multiply(xs, bcast(b, dd, xs, 2)));
  y = b.multiply(y, activation(b, z, Activation::swish));
  return linear(c, "mixer.out_proj", y, dim, false);
}

}  // namespace

Value* lower_mamba_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<MambaBlock>(layer);
  c.tokens(l.dim);
  int64_t di = int64_t{l.expand} * l.dim, r = (l.dim + 15) / 16, n = l.stateSize;
  for (int i = 0; i < l.nBlocks; ++i) {
    Scope s(c, fmt::format("blocks.{}", i));
    x = c.b.add(x, mixer(c, layer_norm(c, "norm", x, 2), di, r, n));
  }
  return layer_norm(c, "norm_f", x, 2);
}

NETSPEC_REGISTER_LAYER(mambaBlock, lower_mamba_block)

}  // namespace netspec::layers
