// Flash attention: softmax(q·kᵀ/√dh + mask)·v by a tiled online softmax over key blocks, so the
// largest intermediate is a [B, H, T, block] score tile instead of [B, H, T, T].
// Forward (a private function called through call_with_custom_vjp) returns O and the per-row
// logsumexp L = m + log l. Backward recomputes each tile from L: p = exp(s - L),
// dV_j = pᵀ·dO, dp = dO·V_jᵀ, ds = p ⊙ (dp - D + dL) with D = rowsum(dO ⊙ O),
// dQ += ds·K_j/√dh (accumulated), dK_j = dsᵀ·Q/√dh (written per block): a second while loop.
#include <fmt/format.h>

#include <cmath>

#include "autodiff/vjp.h"
#include "core/error.h"
#include "layers/attention.h"

namespace netspec::layers {

namespace {

using hlo::Builder;

// Masked scores: large and finite so exp(s - m) underflows to 0 and never forms -inf - -inf.
constexpr double kMasked = -1e30;

struct Geo {
  int64_t bs, h, n, dh, blk, nb;
  DType dt;
  double scale;  // 1/√dh
  Shape full() const { return {bs, h, n, dh}; }
  Shape rows() const { return {bs, h, n}; }
};

Geo make_geo(const hlo::Type& t, int64_t block) {
  const Shape& s = t.shape();
  return Geo{s[0], s[1], s[2], s[3], block, s[2] / block, t.dtype(), 1.0 / std::sqrt(double(s[3]))};
}

Value* i32(Builder& b, int64_t v) { return b.scalar(double(v), DType::kI32); }
Value* rows_to_full(Builder& b, Value* r, const Shape& s) {
  return b.broadcast_in_dim(r, s, {0, 1, 2});
}
Value* row_sum(Builder& b, Value* x) {
  return b.reduce(x, b.scalar(0, x->type.dtype()), {3}, hlo::OpKind::kAdd);
}

// Key/value block j of x [B, H, T, dh]: rows j·blk .. j·blk+blk-1.
Value* key_block(Builder& b, const Geo& g, Value* x, Value* start) {
  Value* z = i32(b, 0);
  return b.dynamic_slice(x, {z, z, start, z}, {g.bs, g.h, g.blk, g.dh});
}

// Scores of all queries against key block j: s = qs·K_jᵀ [B, H, T, blk], key j·blk+c hidden
// from query r when causal and j·blk+c > r.
Value* block_scores(Builder& b, const Geo& g, Value* qs, Value* kb, Value* start, bool causal) {
  Value* s = b.dot_general(qs, kb, {{0, 1}, {0, 1}, {3}, {3}});
  if (!causal) return s;
  hlo::Type it = hlo::Type::tensor(DType::kI32, {g.n, g.blk});
  Value* col = b.add(b.iota(it, 1), b.broadcast_in_dim(start, {g.n, g.blk}, {}));
  Value* keep = b.compare(b.iota(it, 0), col, "GE");
  keep = b.broadcast_in_dim(keep, s->type.shape(), {2, 3});
  return b.select(keep, s, b.constant_splat(kMasked, s->type));
}

// Online softmax over key blocks: m (running max), l (running Σ exp(s - m)), acc (Σ p·V).
std::vector<Value*> flash_forward(Builder& b, const Geo& g, const std::vector<Value*>& a,
                                  bool causal) {
  Value* qs = b.multiply(a[0], b.constant_splat(g.scale, a[0]->type));
  hlo::Type rt = hlo::Type::tensor(g.dt, g.rows());
  std::vector<Value*> init = {i32(b, 0),
                              b.constant_splat(kMasked, rt),
                              b.constant_splat(0, rt),
                              b.constant_splat(0, a[0]->type),
                              qs,
                              a[1],
                              a[2]};
  auto cond = [&](Builder& cb, const std::vector<Value*>& s) -> std::vector<Value*> {
    return {cb.compare(s[0], i32(cb, g.nb), "LT")};
  };
  auto body = [&](Builder& bb, const std::vector<Value*>& s) -> std::vector<Value*> {
    Value *j = s[0], *m = s[1], *l = s[2], *acc = s[3];
    Value* start = bb.multiply(j, i32(bb, g.blk));
    Value* kb = key_block(bb, g, s[5], start);
    Value* vb = key_block(bb, g, s[6], start);
    Value* sc = block_scores(bb, g, s[4], kb, start, causal);
    Value* mb = bb.reduce(sc, bb.scalar(-INFINITY, g.dt), {3}, hlo::OpKind::kMaximum);
    Value* mn = bb.maximum(m, mb);
    // p = exp(s - m_new); old sums are rescaled by exp(m_old - m_new)
    Value* p = bb.exponential(bb.subtract(sc, rows_to_full(bb, mn, sc->type.shape())));
    Value* corr = bb.exponential(bb.subtract(m, mn));
    Value* ln = bb.add(bb.multiply(l, corr), row_sum(bb, p));
    Value* pv = bb.dot_general(p, vb, {{0, 1}, {0, 1}, {3}, {2}});
    Value* an = bb.add(bb.multiply(acc, rows_to_full(bb, corr, g.full())), pv);
    return {bb.add(j, i32(bb, 1)), mn, ln, an, s[4], s[5], s[6]};
  };
  std::vector<Value*> r = b.while_(init, cond, body);
  Value* o = b.divide(r[3], rows_to_full(b, r[2], g.full()));
  Value* lse = b.add(r[1], b.log(r[2]));
  return {o, lse};
}

std::vector<Value*> flash_backward(Builder& b, const Geo& g, const autodiff::CustomVjpArgs& a,
                                   bool causal) {
  Value *q = a.args[0], *o = a.results[0], *lse = a.results[1];
  Value *dout = a.result_cots[0], *dlse = a.result_cots[1];
  Value* qs = b.multiply(q, b.constant_splat(g.scale, q->type));
  // D = rowsum(dO ⊙ O) - dL: then ds = p ⊙ (dp - D) also carries L's cotangent (∂L/∂s = p)
  Value* d = b.subtract(row_sum(b, b.multiply(dout, o)), dlse);
  Value* zero = b.constant_splat(0, q->type);
  std::vector<Value*> init = {i32(b, 0), zero, zero, zero, qs, a.args[1], a.args[2], dout, lse, d};
  auto cond = [&](Builder& cb, const std::vector<Value*>& s) -> std::vector<Value*> {
    return {cb.compare(s[0], i32(cb, g.nb), "LT")};
  };
  auto body = [&](Builder& bb, const std::vector<Value*>& s) -> std::vector<Value*> {
    Value *j = s[0], *dq = s[1], *dk = s[2], *dv = s[3], *qs_ = s[4], *dO = s[7];
    Value* start = bb.multiply(j, i32(bb, g.blk));
    Value* kb = key_block(bb, g, s[5], start);
    Value* vb = key_block(bb, g, s[6], start);
    Value* sc = block_scores(bb, g, qs_, kb, start, causal);
    const Shape& ss = sc->type.shape();
    Value* p = bb.exponential(bb.subtract(sc, rows_to_full(bb, s[8], ss)));
    Value* dvb = bb.dot_general(p, dO, {{0, 1}, {0, 1}, {2}, {2}});  // pᵀ·dO
    Value* dp = bb.dot_general(dO, vb, {{0, 1}, {0, 1}, {3}, {3}});  // dO·V_jᵀ
    Value* ds = bb.multiply(p, bb.subtract(dp, rows_to_full(bb, s[9], ss)));
    Value* dqn = bb.add(dq, bb.dot_general(ds, kb, {{0, 1}, {0, 1}, {3}, {2}}));
    Value* dkb = bb.dot_general(ds, qs_, {{0, 1}, {0, 1}, {2}, {2}});  // dsᵀ·(Q/√dh)
    Value* z = i32(bb, 0);
    Value* dkn = bb.dynamic_update_slice(dk, dkb, {z, z, start, z});
    Value* dvn = bb.dynamic_update_slice(dv, dvb, {z, z, start, z});
    return {bb.add(j, i32(bb, 1)), dqn, dkn, dvn, s[4], s[5], s[6], s[7], s[8], s[9]};
  };
  std::vector<Value*> r = b.while_(init, cond, body);
  Value* dq = b.multiply(r[1], b.constant_splat(g.scale, q->type));
  return {a.wants[0] ? dq : nullptr, a.wants[1] ? r[2] : nullptr, a.wants[2] ? r[3] : nullptr};
}

// The callee is @flash_attention_b<block>[_causal]__<signature>: everything the backward needs
// beyond the argument types is in the prefix before "__", which is also registered for every
// block <= 128 (below), so a module printed and parsed again in another process still finds its
// custom backward.
std::string vjp_key(int64_t block, bool causal) {
  return fmt::format("flash_attention_b{}{}", block, causal ? "_causal" : "");
}

autodiff::CustomVjpFn make_backward(int64_t block, bool causal) {
  return [block, causal](Builder& bb, const autodiff::CustomVjpArgs& a) {
    return flash_backward(bb, make_geo(a.args.at(0)->type, block), a, causal);
  };
}

const bool kKeysRegistered = [] {
  for (int64_t blk = 1; blk <= 128; ++blk)
    for (bool causal : {false, true})
      autodiff::register_custom_vjp(vjp_key(blk, causal), make_backward(blk, causal));
  return true;
}();

}  // namespace

int64_t flash_block(int64_t t) {
  for (int64_t blk = std::min<int64_t>(t, 128); blk > 1; --blk)
    if (t % blk == 0) return blk;
  return 1;
}

std::vector<Value*> flash_attention_lse(hlo::Builder& b, Value* q, Value* k, Value* v, bool causal,
                                        int64_t block) {
  (void)kKeysRegistered;
  if (q->type.rank() != 4 || q->type != k->type || q->type != v->type)
    fail("flash_attention", "q, k, v must share one [B, H, T, dh] type (got {}, {}, {})",
         q->type.str(), k->type.str(), v->type.str());
  const Shape& s = q->type.shape();
  if (block < 1 || s[2] % block != 0)
    fail("flash_attention", "block must divide the sequence length (got {} for T = {})", block,
         s[2]);
  DType dt = q->type.dtype();
  if (!is_float(dt))
    fail("flash_attention", "expected a float element type (got {})", dtype_name(dt));
  Geo g = make_geo(q->type, block);
  std::string name = fmt::format("{}__{}x{}x{}x{}{}", vjp_key(block, causal), g.bs, g.h, g.n, g.dh,
                                 dtype_name(dt));
  return autodiff::call_with_custom_vjp(
      b, name, {q, k, v},
      [g, causal](Builder& fb, const std::vector<Value*>& a) {
        return flash_forward(fb, g, a, causal);
      },
      make_backward(block, causal));
}

Value* flash_attention(LowerCtx& c, Value* q, Value* k, Value* v, bool causal) {
  // q·kᵀ and p·v inside the loop: 2·2·B·H·T·T·dh (the ParamTable's count, as dense attention)
  const Shape& s = q->type.shape();
  c.add_flops(4 * s[0] * s[1] * s[2] * s[2] * s[3]);
  return flash_attention_lse(c.b, q, k, v, causal, flash_block(q->type.dim(2)))[0];
}

}  // namespace netspec::layers
