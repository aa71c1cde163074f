// Flash attention: softmax(q·kᵀ/√dh + mask)·v by a tiled online softmax over key blocks, so the
// largest intermediate is a [B, H, T, block] score tile instead of [B, H, T, T].
// Forward (a private function called through call_with_custom_vjp) returns O and the per-row
// logsumexp L = m + log l. Backward recomputes each tile from L: p = exp(s - L),
// dV_j = pᵀ·dO, dp = dO·V_jᵀ, ds = p ⊙ (dp - D + dL) with D = rowsum(dO ⊙ O),
// dQ += ds·K_j/√dh (accumulated), dK_j = dsᵀ·Q/√dh (written per block): a second while loop.
// Causal attention tiles queries too (blk x blk tiles) and computes only the tiles on or below
// the diagonal: forward loops over query blocks i and, inside, key blocks j (a `case` runs j < i
// unmasked, the diagonal masked, skips j > i); backward sweeps those tiles twice (dK/dV by key
// block, dQ by query block) — about 0.7 of the full [T, blk] sweep's products.
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
// The default block's bound. Tiles of 256 measured fastest on 2 Emerald Rapids cores (causal
// fwd+bwd at T = 1024, blocks 64 / 128 / 256 / 512: 2.0 / 1.34 / 1.12 / 1.33x dense): fewer,
// larger products; the [T, blk] or [blk, blk] tiles stay far below dense's [T, T].
constexpr int64_t kMaxBlock = 256;

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

Value* rows_to_full(Builder& b, Value* r, const Shape& s) {
  return b.broadcast_in_dim(r, s, {0, 1, 2});
}
Value* row_sum(Builder& b, Value* x) {
  return b.reduce(x, b.scalar(0, x->type.dtype()), {3}, hlo::OpKind::kAdd);
}

// Block i of x [B, H, T, ...] along dim 2 (rows i·blk .. i·blk+blk-1), all of the other dims:
// a query, key or value block, or a block of the per-row L and D.
Value* row_block(Builder& b, const Geo& g, Value* x, Value* start) {
  return block_along(b, x, 2, start, g.blk);
}
Value* put_row_block(Builder& b, Value* x, Value* blk, Value* start) {
  return put_block_along(b, x, blk, 2, start);
}

// The diagonal tile's mask [blk, blk]: key c visible from query r when c <= r.
Value* diagonal_keep(Builder& b, const Geo& g) {
  hlo::Type it = hlo::Type::tensor(DType::kI32, {g.blk, g.blk});
  return b.compare(b.iota(it, 0), b.iota(it, 1), "GE");
}
Value* mask_tile(Builder& b, Value* s, Value* keep) {
  if (!keep) return s;
  keep = b.broadcast_in_dim(keep, s->type.shape(), {2, 3});
  return b.select(keep, s, b.constant_splat(kMasked, s->type));
}

// One online-softmax step on a [B, H, blk, blk] tile: (m, l, acc) of a query block updated with
// key/value block (kb, vb); keep = the diagonal mask or null.
std::vector<Value*> softmax_step(Builder& b, Value* qb, Value* kb, Value* vb, Value* keep,
                                 Value* m, Value* l, Value* acc) {
  Value* sc = mask_tile(b, b.dot_general(qb, kb, {{0, 1}, {0, 1}, {3}, {3}}), keep);
  Value* mb = b.reduce(sc, b.scalar(-INFINITY, sc->type.dtype()), {3}, hlo::OpKind::kMaximum);
  Value* mn = b.maximum(m, mb);
  Value* p = b.exponential(b.subtract(sc, rows_to_full(b, mn, sc->type.shape())));
  Value* corr = b.exponential(b.subtract(m, mn));
  Value* ln = b.add(b.multiply(l, corr), row_sum(b, p));
  Value* pv = b.dot_general(p, vb, {{0, 1}, {0, 1}, {3}, {2}});
  Value* an = b.add(b.multiply(acc, rows_to_full(b, corr, acc->type.shape())), pv);
  return {mn, ln, an};
}

// Causal forward: for each query block i, key blocks j < i unmasked, the diagonal tile j = i
// masked, tiles j > i skipped. Both loops have static bounds and the choice is a `case`, so
// JAX (CUSTOM_VJP = False) can still reverse-differentiate the loops as scans.
std::vector<Value*> flash_forward_causal(Builder& b, const Geo& g, const std::vector<Value*>& a) {
  Value* qs = b.multiply(a[0], b.constant_splat(g.scale, a[0]->type));
  hlo::Type rt = hlo::Type::tensor(g.dt, g.rows());
  std::vector<Value*> init = {i32(b, 0), b.constant_splat(0, a[0]->type),
                              b.constant_splat(0, rt), qs, a[1], a[2], diagonal_keep(b, g)};
  auto blocks_left = [&](Builder& cb, const std::vector<Value*>& s) -> std::vector<Value*> {
    return {cb.compare(s[0], i32(cb, g.nb), "LT")};
  };
  auto outer = [&](Builder& bb, const std::vector<Value*>& s) -> std::vector<Value*> {
    Value *i = s[0], *k = s[4], *v = s[5], *keep = s[6];
    Value* qstart = bb.multiply(i, i32(bb, g.blk));
    Value* qb = row_block(bb, g, s[3], qstart);
    hlo::Type bt = hlo::Type::tensor(g.dt, {g.bs, g.h, g.blk});
    std::vector<Value*> in = {i32(bb, 0), bb.constant_splat(kMasked, bt), bb.constant_splat(0, bt),
                              bb.constant_splat(0, qb->type), i, qb, k, v, keep};
    auto inner = [&](Builder& ib, const std::vector<Value*>& t) -> std::vector<Value*> {
      Value *j = t[0], *m = t[1], *l = t[2], *acc = t[3];
      Value* kstart = ib.multiply(j, i32(ib, g.blk));
      // branch min(max(j - i + 1, 0), 2): 0 below the diagonal, 1 on it, 2 above (skipped)
      Value* which = ib.minimum(
          ib.maximum(ib.add(ib.subtract(j, t[4]), i32(ib, 1)), i32(ib, 0)), i32(ib, 2));
      auto step = [&](bool diagonal) {
        return [&, diagonal](Builder& cb, const std::vector<Value*>&) -> std::vector<Value*> {
          return softmax_step(cb, t[5], row_block(cb, g, t[6], kstart),
                              row_block(cb, g, t[7], kstart), diagonal ? t[8] : nullptr, m, l, acc);
        };
      };
      auto skip = [&](Builder&, const std::vector<Value*>&) -> std::vector<Value*> {
        return {m, l, acc};
      };
      std::vector<Value*> u = ib.case_(which, {step(false), step(true), skip});
      return {ib.add(j, i32(ib, 1)), u[0], u[1], u[2], t[4], t[5], t[6], t[7], t[8]};
    };
    std::vector<Value*> r = bb.while_(in, blocks_left, inner);
    Value* ob = bb.divide(r[3], rows_to_full(bb, r[2], qb->type.shape()));
    Value* lb = bb.add(r[1], bb.log(r[2]));
    return {bb.add(i, i32(bb, 1)), put_row_block(bb, s[1], ob, qstart),
            put_row_block(bb, s[2], lb, qstart), s[3], k, v, keep};
  };
  std::vector<Value*> r = b.while_(init, blocks_left, outer);
  return {r[1], r[2]};
}

// Online softmax over key blocks: m (running max), l (running Σ exp(s - m)), acc (Σ p·V).
std::vector<Value*> flash_forward(Builder& b, const Geo& g, const std::vector<Value*>& a,
                                  bool causal) {
  if (causal && g.nb > 1) return flash_forward_causal(b, g, a);
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
  // All queries against key block j (causal reaches here with one block: the diagonal mask).
  auto body = [&](Builder& bb, const std::vector<Value*>& s) -> std::vector<Value*> {
    Value* start = bb.multiply(s[0], i32(bb, g.blk));
    std::vector<Value*> u =
        softmax_step(bb, s[4], row_block(bb, g, s[5], start), row_block(bb, g, s[6], start),
                     causal ? diagonal_keep(bb, g) : nullptr, s[1], s[2], s[3]);
    return {bb.add(s[0], i32(bb, 1)), u[0], u[1], u[2], s[4], s[5], s[6]};
  };
  std::vector<Value*> r = b.while_(init, cond, body);
  Value* o = b.divide(r[3], rows_to_full(b, r[2], g.full()));
  Value* lse = b.add(r[1], b.log(r[2]));
  return {o, lse};
}

// One backward tile from the saved logsumexp: p = exp(s - L_i), dp = dO_i·V_jᵀ,
// ds = p ⊙ (dp - D_i). Returns {p, ds}.
std::vector<Value*> tile_ds(Builder& b, Value* qb, Value* kb, Value* vb, Value* dob, Value* lb,
                            Value* db, Value* keep) {
  Value* sc = mask_tile(b, b.dot_general(qb, kb, {{0, 1}, {0, 1}, {3}, {3}}), keep);
  const Shape& ss = sc->type.shape();
  Value* p = b.exponential(b.subtract(sc, rows_to_full(b, lb, ss)));
  Value* dp = b.dot_general(dob, vb, {{0, 1}, {0, 1}, {3}, {3}});
  return {p, b.multiply(p, b.subtract(dp, rows_to_full(b, db, ss)))};
}

// Causal backward in two sweeps over the tiles on or below the diagonal, each accumulating its
// gradient block in the loop state and writing it once per outer step (one sweep writing both
// would scatter into dQ at every tile): key blocks j, query blocks i >= j: dV_j += pᵀ·dO_i,
// dK_j += dsᵀ·(Q_i/√dh); then query blocks i, key blocks j <= i: dQ_i += ds·K_j. The second
// sweep recomputes p and dp (two more tile products than one sweep, on half the tiles).
std::vector<Value*> flash_backward_causal(Builder& b, const Geo& g, Value* qs, Value* k, Value* v,
                                          Value* dout, Value* lse, Value* d) {
  Value* keep = diagonal_keep(b, g);
  auto blocks_left = [&](Builder& cb, const std::vector<Value*>& s) -> std::vector<Value*> {
    return {cb.compare(s[0], i32(cb, g.nb), "LT")};
  };
  // Sweep 1 state: j, dK, dV, Q/√dh, K, V, dO, L, D, keep.
  auto kv_outer = [&](Builder& bb, const std::vector<Value*>& s) -> std::vector<Value*> {
    Value *j = s[0], *q_ = s[3], *dO = s[6], *L = s[7], *D = s[8], *kp = s[9];
    Value* kstart = bb.multiply(j, i32(bb, g.blk));
    Value* kb = row_block(bb, g, s[4], kstart);
    Value* vb = row_block(bb, g, s[5], kstart);
    // i = j: the diagonal tile, masked
    Value* qj = row_block(bb, g, q_, kstart);
    Value* doj = row_block(bb, g, dO, kstart);
    std::vector<Value*> t = tile_ds(bb, qj, kb, vb, doj, row_block(bb, g, L, kstart),
                                    row_block(bb, g, D, kstart), kp);
    Value* dv0 = bb.dot_general(t[0], doj, {{0, 1}, {0, 1}, {2}, {2}});
    Value* dk0 = bb.dot_general(t[1], qj, {{0, 1}, {0, 1}, {2}, {2}});
    std::vector<Value*> in = {bb.add(j, i32(bb, 1)), dk0, dv0, kb, vb, q_, dO, L, D};
    auto inner = [&](Builder& ib, const std::vector<Value*>& u) -> std::vector<Value*> {
      Value* qstart = ib.multiply(u[0], i32(ib, g.blk));
      Value* qi = row_block(ib, g, u[5], qstart);
      Value* doi = row_block(ib, g, u[6], qstart);
      std::vector<Value*> w = tile_ds(ib, qi, u[3], u[4], doi, row_block(ib, g, u[7], qstart),
                                      row_block(ib, g, u[8], qstart), nullptr);
      Value* dk = ib.add(u[1], ib.dot_general(w[1], qi, {{0, 1}, {0, 1}, {2}, {2}}));
      Value* dv = ib.add(u[2], ib.dot_general(w[0], doi, {{0, 1}, {0, 1}, {2}, {2}}));
      return {ib.add(u[0], i32(ib, 1)), dk, dv, u[3], u[4], u[5], u[6], u[7], u[8]};
    };
    std::vector<Value*> r = bb.while_(in, blocks_left, inner);
    return {bb.add(j, i32(bb, 1)), put_row_block(bb, s[1], r[1], kstart),
            put_row_block(bb, s[2], r[2], kstart), q_, s[4], s[5], dO, L, D, kp};
  };
  Value* zero = b.constant_splat(0, qs->type);
  std::vector<Value*> kv = b.while_({i32(b, 0), zero, zero, qs, k, v, dout, lse, d, keep},
                                    blocks_left, kv_outer);
  // Sweep 2 state: i, dQ, Q/√dh, K, V, dO, L, D, keep.
  auto q_outer = [&](Builder& bb, const std::vector<Value*>& s) -> std::vector<Value*> {
    Value *i = s[0], *kk = s[3], *vv = s[4];
    Value* qstart = bb.multiply(i, i32(bb, g.blk));
    Value* qi = row_block(bb, g, s[2], qstart);
    Value* doi = row_block(bb, g, s[5], qstart);
    Value* li = row_block(bb, g, s[6], qstart);
    Value* di = row_block(bb, g, s[7], qstart);
    std::vector<Value*> in = {i32(bb, 0), bb.constant_splat(0, qi->type), i, qi, doi, li, di,
                              kk, vv};
    auto below_i = [&](Builder& cb, const std::vector<Value*>& u) -> std::vector<Value*> {
      return {cb.compare(u[0], u[2], "LT")};  // j < i
    };
    auto inner = [&](Builder& ib, const std::vector<Value*>& u) -> std::vector<Value*> {
      Value* kstart = ib.multiply(u[0], i32(ib, g.blk));
      Value* kb = row_block(ib, g, u[7], kstart);
      std::vector<Value*> w =
          tile_ds(ib, u[3], kb, row_block(ib, g, u[8], kstart), u[4], u[5], u[6], nullptr);
      Value* dq = ib.add(u[1], ib.dot_general(w[1], kb, {{0, 1}, {0, 1}, {3}, {2}}));
      return {ib.add(u[0], i32(ib, 1)), dq, u[2], u[3], u[4], u[5], u[6], u[7], u[8]};
    };
    std::vector<Value*> r = bb.while_(in, below_i, inner);
    // j = i: the diagonal tile, masked
    Value* ki = row_block(bb, g, kk, qstart);
    std::vector<Value*> w = tile_ds(bb, qi, ki, row_block(bb, g, vv, qstart), doi, li, di, s[8]);
    Value* dq = bb.add(r[1], bb.dot_general(w[1], ki, {{0, 1}, {0, 1}, {3}, {2}}));
    return {bb.add(i, i32(bb, 1)), put_row_block(bb, s[1], dq, qstart), s[2], kk, vv, s[5],
            s[6], s[7], s[8]};
  };
  std::vector<Value*> dq = b.while_({i32(b, 0), zero, qs, k, v, dout, lse, d, keep}, blocks_left,
                                    q_outer);
  return {dq[1], kv[1], kv[2]};
}

std::vector<Value*> flash_backward(Builder& b, const Geo& g, const autodiff::CustomVjpArgs& a,
                                   bool causal) {
  Value *q = a.args[0], *o = a.results[0], *lse = a.results[1];
  Value *dout = a.result_cots[0], *dlse = a.result_cots[1];
  Value* qs = b.multiply(q, b.constant_splat(g.scale, q->type));
  // D = rowsum(dO ⊙ O) - dL: then ds = p ⊙ (dp - D) also carries L's cotangent (∂L/∂s = p)
  Value* d = b.subtract(row_sum(b, b.multiply(dout, o)), dlse);
  if (causal && g.nb > 1) {
    std::vector<Value*> r = flash_backward_causal(b, g, qs, a.args[1], a.args[2], dout, lse, d);
    Value* dq = b.multiply(r[0], b.constant_splat(g.scale, q->type));
    return {a.wants[0] ? dq : nullptr, a.wants[1] ? r[1] : nullptr, a.wants[2] ? r[2] : nullptr};
  }
  Value* zero = b.constant_splat(0, q->type);
  std::vector<Value*> init = {i32(b, 0), zero, zero, zero, qs, a.args[1], a.args[2], dout, lse, d};
  auto cond = [&](Builder& cb, const std::vector<Value*>& s) -> std::vector<Value*> {
    return {cb.compare(s[0], i32(cb, g.nb), "LT")};
  };
  auto body = [&](Builder& bb, const std::vector<Value*>& s) -> std::vector<Value*> {
    Value *j = s[0], *qs_ = s[4], *dO = s[7];
    Value* start = bb.multiply(j, i32(bb, g.blk));
    Value* kb = row_block(bb, g, s[5], start);
    std::vector<Value*> t = tile_ds(bb, qs_, kb, row_block(bb, g, s[6], start), dO, s[8], s[9],
                                    causal ? diagonal_keep(bb, g) : nullptr);
    Value* dqn = bb.add(s[1], bb.dot_general(t[1], kb, {{0, 1}, {0, 1}, {3}, {2}}));
    Value* dkb = bb.dot_general(t[1], qs_, {{0, 1}, {0, 1}, {2}, {2}});  // dsᵀ·(Q/√dh)
    Value* dvb = bb.dot_general(t[0], dO, {{0, 1}, {0, 1}, {2}, {2}});   // pᵀ·dO
    Value* dkn = put_row_block(bb, s[2], dkb, start);
    Value* dvn = put_row_block(bb, s[3], dvb, start);
    return {bb.add(j, i32(bb, 1)), dqn, dkn, dvn, s[4], s[5], s[6], s[7], s[8], s[9]};
  };
  std::vector<Value*> r = b.while_(init, cond, body);
  Value* dq = b.multiply(r[1], b.constant_splat(g.scale, q->type));
  return {a.wants[0] ? dq : nullptr, a.wants[1] ? r[2] : nullptr, a.wants[2] ? r[3] : nullptr};
}

// The callee is @flash_attention_b<block>[_causal]__<signature>: everything the backward needs
// beyond the argument types is in the prefix before "__", which is also registered for every
// block <= kMaxBlock (below), so a module printed and parsed again in another process still
// finds its custom backward.
std::string vjp_key(int64_t block, bool causal) {
  return fmt::format("flash_attention_b{}{}", block, causal ? "_causal" : "");
}

autodiff::CustomVjpFn make_backward(int64_t block, bool causal) {
  return [block, causal](Builder& bb, const autodiff::CustomVjpArgs& a) {
    return flash_backward(bb, make_geo(a.args.at(0)->type, block), a, causal);
  };
}

const bool kKeysRegistered = [] {
  for (int64_t blk = 1; blk <= kMaxBlock; ++blk)
    for (bool causal : {false, true})
      autodiff::register_custom_vjp(vjp_key(blk, causal), make_backward(blk, causal));
  return true;
}();

}  // namespace

int64_t flash_block(int64_t t) {
  for (int64_t blk = std::min<int64_t>(t, kMaxBlock); blk > 1; --blk)
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
