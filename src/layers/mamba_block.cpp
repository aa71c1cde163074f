// mambaBlock (Mamba, Gu & Dao 2023; mamba_ssm's Block + Mamba mixer) x nBlocks on [T, dim], then
// the final LayerNorm "norm_f". Per block, with di = expand·dim, R = ceil(dim/16), N = stateSize:
//   u = LN(x);  (xs, z) = in_proj(u)                      [T, di] each
//   xs = silu(conv1d(xs) + b)                            depthwise causal, k = 4 (x[<0] = 0)
//   (δ, B, C) = x_proj(xs)                               [T, R], [T, N], [T, N]
//   Δ = softplus(dt_proj(δ) + dt_bias);  A = -exp(A_log) [di, N]
//   h_t = exp(Δ_t A) ⊙ h_{t-1} + (Δ_t x_t) ⊗ B_t;  y_t = h_t·C_t + D ⊙ x_t   (selective SSM)
//   x = x + out_proj(y ⊙ silu(z))
// The recurrence h_t = a_t h_{t-1} + b_t runs as a `while` over t (O(T) memory: the states
// [B, T, di, N] are its result) called through a custom VJP whose backward is the reverse scan
// g_t = dh_t + a_{t+1} g_{t+1} (g_{T-1} = dh_{T-1}), giving db_t = g_t and da_t = g_t h_{t-1}.
#include <fmt/format.h>

#include <cctype>

#include "autodiff/vjp.h"
#include "layers/sequence.h"

namespace netspec::layers {
namespace {

using hlo::Builder;

Value* i32(Builder& b, int64_t v) { return b.scalar(double(v), DType::kI32); }

// Step t of x [T, ...] ([1, ...]: contiguous), and x with that step replaced by `step`.
Value* step_of(Builder& b, Value* x, Value* t) { return block_along(b, x, 0, t, 1); }
Value* put_step(Builder& b, Value* x, Value* step, Value* t) {
  return put_block_along(b, x, step, 0, t);
}

// s_t = c_t s_{t-1} + d_t for every t of c, d [T, ...], s_{-1} = 0; or, `reverse`, the
// backward's s_t = d_t + c_{t+1} s_{t+1}, s_T = 0. Returns {s [T, ...]}.
std::vector<Value*> sequential_scan(Builder& b, Value* c, Value* d, bool reverse) {
  const int64_t t = c->type.dim(0);
  Shape one = c->type.shape();
  one[0] = 1;
  hlo::Type st = hlo::Type::tensor(c->type.dtype(), one);
  // c and d are read from the enclosing scope (not carried: a carried input is copied into the
  // loop state first); every step of s is written, so s starts as a copy of d, not of zeros.
  std::vector<Value*> init = {i32(b, 0), b.constant_splat(0, st), d};
  auto cond = [&](Builder& cb, const std::vector<Value*>& s) -> std::vector<Value*> {
    return {cb.compare(s[0], i32(cb, t), "LT")};
  };
  // forward: s = c_t ⊙ carry + d_t, carry' = s; reverse: s = d_t + carry, carry' = c_t ⊙ s
  auto body = [&](Builder& bb, const std::vector<Value*>& s) -> std::vector<Value*> {
    Value* at = reverse ? bb.subtract(i32(bb, t - 1), s[0]) : s[0];
    Value* ct = step_of(bb, c, at);
    Value* dt = step_of(bb, d, at);
    Value* h = reverse ? bb.add(dt, s[1]) : bb.add(bb.multiply(ct, s[1]), dt);
    Value* carry = reverse ? bb.multiply(ct, h) : h;
    return {bb.add(s[0], i32(bb, 1)), carry, put_step(bb, s[2], h, at)};
  };
  return {b.while_(init, cond, body)[2]};
}

constexpr const char* kScanKey = "mamba_linear_scan";

autodiff::CustomVjpFn scan_backward() {
  return [](Builder& b, const autodiff::CustomVjpArgs& a) -> std::vector<Value*> {
    Value* g = sequential_scan(b, a.args[0], a.result_cots[0], true)[0];
    Value* da = a.wants[0] ? b.multiply(g, delay(b, a.results[0], 1, 0.0, 0)) : nullptr;
    return {da, a.wants[1] ? g : nullptr};
  };
}

const bool kScanRegistered = [] {
  autodiff::register_custom_vjp(kScanKey, scan_backward());
  return true;
}();

// h_t = a_t h_{t-1} + b_t with h_{-1} = 0 along dim 0 of a, b [T, ...].
Value* linear_scan(Builder& b, Value* a, Value* bb) {
  (void)kScanRegistered;
  std::string name = fmt::format("{}__{}", kScanKey, a->type.str());
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = 'x';
  return autodiff::call_with_custom_vjp(
      b, name, {a, bb},
      [](Builder& fb, const std::vector<Value*>& v) {
        return sequential_scan(fb, v[0], v[1], false);
      },
      scan_backward())[0];
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
  // The scan's operands are [T, B, di, N] (the broadcasts put T first): each step is contiguous.
  Shape s4{t, bt, di, n};
  Value* a_mat = b.negate(b.exponential(a_log));  // A = -exp(A_log)
  Value* da = b.exponential(
      b.multiply(b.broadcast_in_dim(dl, s4, {1, 0, 2}), b.broadcast_in_dim(a_mat, s4, {2, 3})));
  Value* dbx = b.multiply(b.broadcast_in_dim(b.multiply(dl, xs), s4, {1, 0, 2}),
                          b.broadcast_in_dim(bm, s4, {1, 0, 3}));
  Value* h = linear_scan(b, da, dbx);            // [T, B, di, N]
  c.add_flops(2 * t * di * 4 + 6 * t * di * n);  // the conv taps and the scan (not dot ops)
  // y_t = Σ_n h_t[:, n] C_t[n] + D ⊙ x_t
  Value* y = b.reduce(b.multiply(h, b.broadcast_in_dim(cm, s4, {1, 0, 3})), b.scalar(0, dt), {3},
                      hlo::OpKind::kAdd);
  y = b.transpose(y, {1, 0, 2});
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
