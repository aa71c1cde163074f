// mambaBlock (Mamba, Gu & Dao 2023; mamba_ssm's Block + Mamba mixer) x nBlocks on [T, dim], then
// the final LayerNorm "norm_f". Per block, with di = expand·dim, R = ceil(dim/16), N = stateSize:
//   u = LN(x);  (xs, z) = in_proj(u)                      [T, di] each
//   xs = silu(conv1d(xs) + b)                            depthwise causal, k = 4 (x[<0] = 0)
//   (δ, B, C) = x_proj(xs)                               [T, R], [T, N], [T, N]
//   Δ = softplus(dt_proj(δ) + dt_bias);  A = -exp(A_log) [di, N]
//   h_t = exp(Δ_t A) ⊙ h_{t-1} + (Δ_t x_t) ⊗ B_t;  y_t = h_t·C_t + D ⊙ x_t   (selective SSM)
//   x = x + out_proj(y ⊙ silu(z))
// The selective scan is one `while` over t on [B, di, N] states (Scan below), called through a
// custom VJP whose backward runs the reverse recurrence of the cotangents on every h_t. A train
// step whose blocks' states [T, B, di, N] together take at most keepStatesMiB keeps them from the
// forward loop (one loop writes y and the states); a larger one keeps no states and its backward
// recomputes them (one more forward loop, as mamba_ssm's selective_scan kernel does), so memory
// stays O(B·T·di) per block.
#include <fmt/format.h>

#include "autodiff/vjp.h"
#include "layers/sequence.h"

namespace netspec::layers {
namespace {

using hlo::Builder;

// The selective scan on T-first operands: Δ, v = Δ ⊙ x [T, B, di], A [di, N], B, C [T, B, N]:
//   h_t = exp(Δ_t A) ⊙ h_{t-1} + v_t ⊗ B_t (h_{-1} = 0),  y_t = Σ_n h_t[.., n] C_t[n]
// one step per iteration on [1, B, di, N] states (each step's slices are contiguous).
struct Scan {
  int64_t t, bs, di, n;
  DType dt;
  Shape state() const { return {1, bs, di, n}; }
  Value* step(Builder& b, Value* x, Value* at) const { return block_along(b, x, 0, at, 1); }
  // [1, B, di] / [1, B, N] / [di, N] broadcast to the state
  Value* over_n(Builder& b, Value* x) const { return b.broadcast_in_dim(x, state(), {0, 1, 2}); }
  Value* over_d(Builder& b, Value* x) const { return b.broadcast_in_dim(x, state(), {0, 1, 3}); }
  Value* over_b(Builder& b, Value* x) const { return b.broadcast_in_dim(x, state(), {2, 3}); }
  Value* sum(Builder& b, Value* x, hlo::I64s dims) const {
    return b.reduce(x, b.scalar(0, dt), dims, hlo::OpKind::kAdd);
  }
  // Σ over x's dim cx of x ⊙ y for x [1, B, ...] and y [1, B, ...] (y broadcast over x's other
  // dim): one batched matvec (dot_general, batch dims 0 and 1), no product materialised first.
  // Sums over N of a state the step computes are reduces of the product instead: the cpu
  // executor folds those row sums into the state's fused group (no second pass over the state;
  // mamba-lm -2 to -4 % a step against the matvecs).
  Value* contract(Builder& b, Value* x, Value* y, int64_t cx, int64_t cy) const {
    hlo::DotDims d;
    d.lhs_batching = d.rhs_batching = {0, 1};
    d.lhs_contracting = {cx};
    d.rhs_contracting = {cy};
    return b.dot_general(x, y, d);
  }
  Value* zeros(Builder& b, Shape s) const {
    return b.constant_splat(0, hlo::Type::tensor(dt, std::move(s)));
  }
};

Scan scan_of(const std::vector<Value*>& args) {
  const Shape& s = args[3]->type.shape();  // B [T, B, N]
  return Scan{s[0], s[1], args[0]->type.dim(2), s[2], args[0]->type.dtype()};
}

// What a forward loop returns: y [T, B, di], every h_t [T, B, di, N] (the backward's
// recomputation, which needs no y), or both (a train step that keeps its states).
enum class ScanOut { y, states, both };

std::vector<Value*> scan_forward(Builder& b, const std::vector<Value*>& in, ScanOut what) {
  const Scan g = scan_of(in);
  const bool want_y = what != ScanOut::states, want_h = what != ScanOut::y;
  std::vector<Value*> init = {i32(b, 0), g.zeros(b, g.state())};
  if (want_y) init.push_back(in[1]);  // a [T, B, di] buffer: every step is written
  if (want_h) init.push_back(g.zeros(b, {g.t, g.bs, g.di, g.n}));
  auto cond = [&](Builder& cb, const std::vector<Value*>& s) -> std::vector<Value*> {
    return {cb.compare(s[0], i32(cb, g.t), "LT")};
  };
  auto body = [&](Builder& bb, const std::vector<Value*>& s) -> std::vector<Value*> {
    Value* at = s[0];
    Value* decay =
        bb.exponential(bb.multiply(g.over_n(bb, g.step(bb, in[0], at)), g.over_b(bb, in[2])));
    Value* h = bb.add(bb.multiply(decay, s[1]), bb.multiply(g.over_n(bb, g.step(bb, in[1], at)),
                                                            g.over_d(bb, g.step(bb, in[3], at))));
    std::vector<Value*> next = {bb.add(at, i32(bb, 1)), h};
    if (want_y) {  // y_t[b, d] = Σ_n h[b, d, n] C_t[b, n]
      Value* y = g.sum(bb, bb.multiply(h, g.over_d(bb, g.step(bb, in[4], at))), {3});
      next.push_back(put_block_along(bb, s[2], y, 0, at));
    }
    if (want_h) next.push_back(put_block_along(bb, s[next.size()], h, 0, at));
    return next;
  };
  std::vector<Value*> r = b.while_(init, cond, body);
  return {r.begin() + 2, r.end()};
}

// Backward from dy: states recomputed forward, then t = T-1 .. 0 with the carried
// gn = exp(Δ_{t+1} A) ⊙ g_{t+1}:
//   g_t = dy_t ⊗ C_t + gn;  e = g_t ⊙ h_{t-1} ⊙ exp(Δ_t A)  (the cotangent of Δ_t A)
//   dΔ_t = Σ_n e A;  dA += Σ_b e Δ_t;  dv_t = Σ_n g_t B_t;
//   dB_t = Σ_d g_t v_t;  dC_t = Σ_d dy_t h_t
std::vector<Value*> scan_backward(Builder& b, const autodiff::CustomVjpArgs& a) {
  const std::vector<Value*>& in = a.args;
  const Scan g = scan_of(in);
  // The states the forward kept (its second result), else recomputed.
  Value* hs = a.results.size() > 1 ? a.results[1] : scan_forward(b, in, ScanOut::states)[0];
  Value* dy = a.result_cots[0];
  Shape td{g.t, g.bs, g.di}, tn{g.t, g.bs, g.n};
  std::vector<Value*> init = {i32(b, 0),      g.zeros(b, g.state()), g.zeros(b, {g.di, g.n}),
                              g.zeros(b, td), g.zeros(b, td),        g.zeros(b, tn),
                              g.zeros(b, tn)};
  auto cond = [&](Builder& cb, const std::vector<Value*>& s) -> std::vector<Value*> {
    return {cb.compare(s[0], i32(cb, g.t), "LT")};
  };
  auto body = [&](Builder& bb, const std::vector<Value*>& s) -> std::vector<Value*> {
    Value* at = bb.subtract(i32(bb, g.t - 1), s[0]);
    Value* dl = g.over_n(bb, g.step(bb, in[0], at));
    Value* a_full = g.over_b(bb, in[2]);
    Value* decay = bb.exponential(bb.multiply(dl, a_full));
    Value* dyt = g.over_n(bb, g.step(bb, dy, at));
    Value* ht = g.step(bb, hs, at);
    // h_{t-1}: the state one step back, 0 before the first (the slice start clamps at 0)
    Value* first = bb.convert(bb.compare(at, i32(bb, 0), "GT"), g.dt);
    Value* hp = bb.multiply(g.step(bb, hs, bb.maximum(bb.subtract(at, i32(bb, 1)), i32(bb, 0))),
                            bb.broadcast_in_dim(first, g.state(), {}));
    Value* gt = bb.add(bb.multiply(dyt, g.over_d(bb, g.step(bb, in[4], at))), s[1]);
    Value* e = bb.multiply(bb.multiply(gt, hp), decay);
    // The elementwise products before the first sum: the cpu executor's fusion grouping seals
    // a group at its first outside reader, so built here they join e's group (the next carry
    // and e·Δ_t were steps of their own, re-reading e, decay and g_t: mamba-lm -2.8 %).
    Value* carry = bb.multiply(decay, gt);
    Value* e_a = bb.multiply(e, a_full);
    Value* e_dl = bb.multiply(e, dl);
    Value* g_b = bb.multiply(gt, g.over_d(bb, g.step(bb, in[3], at)));
    // The sums over N as row sums folded into the group, over B with Δ_t as a reduction (a dot
    // with di as its batch dim ran slower: the kernel transposes it), over di as batched matvecs.
    Value* d_dl = g.sum(bb, e_a, {3});
    Value* d_a = bb.add(s[2], g.sum(bb, e_dl, {0, 1}));
    Value* d_v = g.sum(bb, g_b, {3});
    Value* d_b = g.contract(bb, gt, g.step(bb, in[1], at), 2, 2);
    Value* d_c = g.contract(bb, ht, g.step(bb, dy, at), 2, 2);
    return {bb.add(s[0], i32(bb, 1)),
            carry,
            d_a,
            put_block_along(bb, s[3], d_dl, 0, at),
            put_block_along(bb, s[4], d_v, 0, at),
            put_block_along(bb, s[5], d_b, 0, at),
            put_block_along(bb, s[6], d_c, 0, at)};
  };
  std::vector<Value*> r = b.while_(init, cond, body);
  std::vector<Value*> cots = {r[3], r[4], r[2], r[5], r[6]};
  for (size_t i = 0; i < cots.size(); ++i)
    if (!a.wants[i]) cots[i] = nullptr;
  return cots;
}

// The callees: y alone, or y and the states kept for the backward (the same backward, keyed by
// prefix, so a module parsed from text differentiates either).
constexpr const char* kScanKey = "mamba_selective_scan";
constexpr const char* kScanKeptKey = "mamba_selective_scan_kept";

const bool kScanRegistered = [] {
  autodiff::register_custom_vjp(kScanKey, scan_backward);
  autodiff::register_custom_vjp(kScanKeptKey, scan_backward);
  return true;
}();

// y [T, B, di] of the selective scan (see Scan) of Δ, v [T, B, di], A [di, N], B, C [T, B, N];
// `keep`: the callee also returns every h_t for the backward.
Value* selective_scan(Builder& b, Value* dl, Value* v, Value* a, Value* bm, Value* cm, bool keep) {
  (void)kScanRegistered;
  const Shape& s = bm->type.shape();  // [T, B, N]
  std::string name = fmt::format("{}__{}x{}x{}x{}{}", keep ? kScanKeptKey : kScanKey, s[0], s[1],
                                 v->type.dim(2), s[2], dtype_name(v->type.dtype()));
  return autodiff::call_with_custom_vjp(
      b, name, {dl, v, a, bm, cm},
      [keep](Builder& fb, const std::vector<Value*>& in) {
        return scan_forward(fb, in, keep ? ScanOut::both : ScanOut::y);
      },
      scan_backward)[0];
}

Value* mixer(LowerCtx& c, Value* u, int64_t di, int64_t r, int64_t n, bool keep_states) {
  Builder& b = c.b;
  const int64_t bt = u->type.dim(0), t = u->type.dim(1), dim = u->type.dim(2);
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
  // The scan runs on T-first operands (each step's slice is contiguous); A = -exp(A_log).
  auto t_first = [&](Value* x) { return b.transpose(x, {1, 0, 2}); };
  Value* a_mat = b.negate(b.exponential(a_log));
  Value* y = selective_scan(b, t_first(dl), t_first(b.multiply(dl, xs)), a_mat, t_first(bm),
                            t_first(cm), keep_states);
  c.add_flops(2 * t * di * 4 + 6 * t * di * n);  // the conv taps and the scan (not dot ops)
  y = t_first(y);                                // back to [B, T, di]
  y = b.add(y, b.multiply(xs, bcast(b, dd, xs, 2)));
  y = b.multiply(y, activation(b, z, Activation::swish));
  return linear(c, "mixer.out_proj", y, dim, false);
}

}  // namespace

Value* lower_mamba_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<MambaBlock>(layer);
  c.tokens(l.dim);
  int64_t di = int64_t{l.expand} * l.dim, r = (l.dim + 15) / 16, n = l.stateSize;
  // A train step keeps every block's states [B, T, di, N] from forward to backward when together
  // they take at most keepStatesMiB (mamba-lm: 4 blocks of 64 MiB; recomputing them cost ~6 % of
  // its step). Past it (or at 0), each backward recomputes its block's states, as mamba_ssm
  // does: memory O(B·T·di) per block however long T is.
  const int64_t states_bytes = l.nBlocks * x->type.dim(0) * x->type.dim(1) * di * n *
                               static_cast<int64_t>(dtype_size(x->type.dtype()));
  const bool keep_states = c.train && states_bytes <= int64_t{l.keepStatesMiB} << 20;
  for (int i = 0; i < l.nBlocks; ++i) {
    Scope s(c, fmt::format("blocks.{}", i));
    x = c.b.add(x, mixer(c, layer_norm(c, "norm", x, 2), di, r, n, keep_states));
  }
  return layer_norm(c, "norm_f", x, 2);
}

NETSPEC_REGISTER_LAYER(mambaBlock, lower_mamba_block, {.field_min = {{"keepStatesMiB", 0}}})

}  // namespace netspec::layers
