// AlphaFold-2 helpers (af2.h): residue track lookup, declare-then-apply Linear / LayerNorm,
// openfold's gated attention, softmax, pair-map layout changes.
#include "layers/af2.h"

#include <cmath>

#include "autodiff/vjp.h"
#include "layers/attention.h"

namespace netspec::layers::af2 {

constexpr int64_t kHeadC = 32;  // openfold c_hidden of MSA and triangle attention

Fm pair_map(const LowerCtx& c, int64_t pair_ch) {
  Fm f = c.image(pair_ch);
  c.check(f.h == f.w, "pair representation must be square (got {}x{})", f.h, f.w);
  return f;
}

Value* residue_track(const LowerCtx& c, int64_t l, int64_t ch) {
  for (int i = c.info.index - 1; i >= 0; --i) {
    if (layer_kind(c.net.layers[static_cast<size_t>(i)]) != "pairTile") continue;
    Value* m = c.history->at(static_cast<size_t>(i));
    const Shape& s = m->type.shape();
    if (s.size() != 3 || s[1] != l || s[2] != ch)
      c.fail("the residue track (the input of layer {} pairTile) is [{}] (expected [{}, {}])", i,
             fmt::join(s.begin() + 1, s.end(), ", "), l, ch);
    return m;
  }
  c.fail("needs the residue track [{}, {}] of an earlier pairTile (got none)", l, ch);
}

Lin declare_linear(LowerCtx& c, const std::string& name, int64_t in, int64_t out, bool bias,
                   Init init) {
  Lin r;
  r.w = c.param(dot(name, "weight"), {out, in},
                init == Init::standard ? ParamInit::linearWeight : ParamInit::zeros, true);
  if (bias)
    r.b = c.param(dot(name, "bias"), {out},
                  init == Init::gating ? ParamInit::ones : ParamInit::zeros, false);
  return r;
}

Ln declare_ln(LowerCtx& c, const std::string& name, int64_t d) {
  return {c.param(dot(name, "weight"), {d}, ParamInit::ones, false),
          c.param(dot(name, "bias"), {d}, ParamInit::zeros, false)};
}

Value* gated_attention(LowerCtx& c, const std::string& name, Value* x, int64_t heads, Value* bias) {
  hlo::Builder& b = c.b;
  const Shape sh = x->type.shape();  // [B, R, T, C]
  const int64_t bt = sh[0], r = sh[1], t = sh[2], ch = sh[3], hc = heads * kHeadC;
  Lin q = declare_linear(c, name + ".linear_q", ch, hc, false);
  Lin k = declare_linear(c, name + ".linear_k", ch, hc, false);
  Lin v = declare_linear(c, name + ".linear_v", ch, hc, false);
  Lin o = declare_linear(c, name + ".linear_o", hc, ch, true, Init::final_);
  Lin g = declare_linear(c, name + ".linear_g", ch, hc, true, Init::gating);
  Value* rows = b.reshape(x, {bt * r, t, ch});
  auto heads_of = [&](const Lin& p) { return head_split(b, p(b, rows), 0, 1, heads); };
  Value* s = attention_scores(b, heads_of(q), heads_of(k));  // [B·R, H, T, T], /√32
  if (bias) {
    Shape s5{bt, r, heads, t, t};
    s = b.reshape(b.add(b.reshape(s, s5), b.broadcast_in_dim(bias, s5, {0, 2, 3, 4})),
                  {bt * r, heads, t, t});
  }
  Value* att = b.reshape(attention_softmax_v_merged(b, s, heads_of(v)), {bt, r, t, hc});
  return o(b, b.multiply(att, b.logistic(g(b, x))));
}

Value* softmax_last(hlo::Builder& b, Value* s) {
  const int64_t last = s->type.rank() - 1;
  hlo::I64s keep;
  for (int64_t i = 0; i < last; ++i) keep.push_back(i);
  DType dt = s->type.dtype();
  // p / Σp does not depend on the max m subtracted for range: its gradient path is stopped.
  Value* m = autodiff::stop_gradient(
      b, b.reduce(s, b.scalar(-INFINITY, dt), {last}, hlo::OpKind::kMaximum));
  Value* p = b.exponential(b.subtract(s, b.broadcast_in_dim(m, s->type.shape(), keep)));
  Value* l = b.reduce(p, b.scalar(0, dt), {last}, hlo::OpKind::kAdd);
  return b.divide(p, b.broadcast_in_dim(l, s->type.shape(), keep));
}

Value* to_channels_last(hlo::Builder& b, Value* x) { return b.transpose(x, {0, 2, 3, 1}); }
Value* to_channels_first(hlo::Builder& b, Value* x) { return b.transpose(x, {0, 3, 1, 2}); }

}  // namespace netspec::layers::af2
