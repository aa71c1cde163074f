// Dense attention (the reference) and rotary embeddings. Flash attention: flash_attention.cpp.
#include "layers/attention.h"

#include <cmath>

#include "autodiff/vjp.h"
#include "core/error.h"

namespace netspec::layers {

namespace {

void check_qkv(Value* q, Value* k, Value* v) {
  if (q->type.rank() != 4 || q->type != k->type || q->type != v->type)
    fail("attention", "q, k, v must share one [B, H, T, dh] type (got {}, {}, {})", q->type.str(),
         k->type.str(), v->type.str());
}

}  // namespace

Value* attention_scores(hlo::Builder& b, Value* q, Value* k) {
  // s = q·kᵀ/√dh : [B, H, Tq, Tk]
  Value* s = b.dot_general(q, k, {{0, 1}, {0, 1}, {3}, {3}});
  return b.multiply(s, b.constant_splat(1.0 / std::sqrt(double(q->type.dim(3))), s->type));
}

namespace {

// The unnormalised p·v [B, H, Tq, dh] and the row sums l = Σp [B, H, Tq] of softmax over keys
// with the max subtracted: p = exp(s - m). The output does not depend on m, so m's gradient
// path (argmax mask, select, a sum) is stopped, not computed.
std::pair<Value*, Value*> softmax_v_parts(hlo::Builder& b, Value* s, Value* v) {
  DType dt = s->type.dtype();
  Value* m = autodiff::stop_gradient(
      b, b.reduce(s, b.scalar(-INFINITY, dt), {3}, hlo::OpKind::kMaximum));
  Value* p = b.exponential(b.subtract(s, b.broadcast_in_dim(m, s->type.shape(), {0, 1, 2})));
  Value* l = b.reduce(p, b.scalar(0, dt), {3}, hlo::OpKind::kAdd);
  return {b.dot_general(p, v, {{0, 1}, {0, 1}, {3}, {2}}), l};
}

Value* masked_scores(hlo::Builder& b, Value* q, Value* k, bool causal) {
  Value* s = attention_scores(b, q, k);
  if (!causal) return s;
  // key j is visible from query i iff j <= i; masked scores get a large finite negative so
  // exp(s - max) underflows to 0 without -inf - -inf = NaN.
  int64_t n = q->type.dim(2);
  hlo::Type it = hlo::Type::tensor(DType::kI32, {n, n});
  Value* keep = b.compare(b.iota(it, 0), b.iota(it, 1), "GE");
  keep = b.broadcast_in_dim(keep, s->type.shape(), {2, 3});
  return b.select(keep, s, b.constant_splat(-1e30, s->type));
}

}  // namespace

Value* attention_softmax_v(hlo::Builder& b, Value* s, Value* v) {
  auto [o, l] = softmax_v_parts(b, s, v);  // out = (p·v) / Σp
  return b.divide(o, b.broadcast_in_dim(l, o->type.shape(), {0, 1, 2}));
}

Value* attention_softmax_v_merged(hlo::Builder& b, Value* s, Value* v) {
  // The same values as head_merge(attention_softmax_v(s, v)), the division after the merge's
  // transpose: p·v then writes [B, Tq, H, dh] directly (the cpu executor folds a dot's only
  // transpose into its output), and the VJP's transposes land on the products' operands, read
  // in place, instead of two copies of a [B, H, Tq, dh] tensor per layer.
  auto [o, l] = softmax_v_parts(b, s, v);
  Value* ot = b.transpose(o, {0, 2, 1, 3});            // [B, Tq, H, dh]
  Value* lt = b.transpose(l, {0, 2, 1});               // [B, Tq, H], small
  Value* y = b.divide(ot, b.broadcast_in_dim(lt, ot->type.shape(), {0, 1, 2}));
  const Shape& sh = ot->type.shape();
  return b.reshape(y, {sh[0], sh[1], sh[2] * sh[3]});
}

Value* dense_attention(hlo::Builder& b, Value* q, Value* k, Value* v, bool causal) {
  check_qkv(q, k, v);
  return attention_softmax_v(b, masked_scores(b, q, k, causal), v);
}

Value* dense_attention_merged(hlo::Builder& b, Value* q, Value* k, Value* v, bool causal) {
  check_qkv(q, k, v);
  return attention_softmax_v_merged(b, masked_scores(b, q, k, causal), v);
}

Value* head_split(hlo::Builder& b, Value* qkv, int64_t s, int64_t parts, int64_t heads) {
  const Shape& sh = qkv->type.shape();
  int64_t d = sh[2] / parts;
  Value* part = b.slice(qkv, {0, 0, s * d}, {sh[0], sh[1], (s + 1) * d});
  return b.transpose(b.reshape(part, {sh[0], sh[1], heads, d / heads}), {0, 2, 1, 3});
}

Value* head_merge(hlo::Builder& b, Value* o) {
  const Shape& sh = o->type.shape();  // [B, H, T, dh] -> [B, T, H, dh] -> [B, T, H·dh]
  return b.reshape(b.transpose(o, {0, 2, 1, 3}), {sh[0], sh[2], sh[1] * sh[3]});
}

Value* apply_rope(hlo::Builder& b, Value* x) {
  if (x->type.rank() != 4 || x->type.dim(3) % 2 != 0)
    fail("rope", "expected [B, H, T, dh] with even dh (got {})", x->type.str());
  const Shape& sh = x->type.shape();
  int64_t n = sh[2], dh = sh[3], half = dh / 2;
  DType dt = x->type.dtype();
  // θ[t, i] = t · 10000^(-2i/dh) for i < dh/2, repeated for the second half (rotate-half layout)
  hlo::Type ft = hlo::Type::tensor(dt, {n, half});
  Value* pos = b.iota(ft, 0);
  Value* idx = b.iota(ft, 1);
  Value* inv_freq =
      b.exponential(b.multiply(idx, b.constant_splat(-2.0 * std::log(10000.0) / double(dh), ft)));
  Value* ang = b.multiply(pos, inv_freq);
  ang = b.concatenate({ang, ang}, 1);  // [T, dh]
  Value* cos = b.broadcast_in_dim(b.cosine(ang), sh, {2, 3});
  Value* sin = b.broadcast_in_dim(b.sine(ang), sh, {2, 3});
  // rotate_half(x) = [-x2, x1];  y = x·cos θ + rotate_half(x)·sin θ
  Value* x1 = b.slice(x, {0, 0, 0, 0}, {sh[0], sh[1], n, half});
  Value* x2 = b.slice(x, {0, 0, 0, half}, {sh[0], sh[1], n, dh});
  Value* rot = b.concatenate({b.negate(x2), x1}, 3);
  return b.add(b.multiply(x, cos), b.multiply(rot, sin));
}

}  // namespace netspec::layers
