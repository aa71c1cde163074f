// structureModule: AlphaFold-2's structure module (openfold StructureModule, AF2 supplement
// Alg. 20) without the side-chain angle resnet: single s = the residue track [L, singleCh],
// pair z = the input [pairCh, L, L];  s = linear_in(LN_s(s)), z = LN_z(z), frames T_i = (R_i, t_i)
// = identity, then nBlocks iterations with SHARED weights of
//   s = LN_ipa(s + IPA(s, z, T));  s = LN(s + l3(relu(l2(relu(l1(s))))));  T = T ∘ bb(s)
// IPA (Alg. 22): 12 heads of 16 channels, 4 query/key and 8 value points. bb (Alg. 23): linear ->
// (b, c, d, t); R_upd = rot((1, b, c, d)/√(1 + b² + c² + d²)), T ∘ T_upd = (R·R_upd, R·t + t).
// Output: Cα positions t·10 [L, 3] (openfold's trans_scale_factor); with `frames` the final frames
// [L, 12] = (R row-major, t·10), and with distogramBins K > 0 also AF2's distogram head
// (Alg. 1 line 19, openfold DistogramHead: logits = W·z_ij + W·z_ji on the un-normalised pair
// input, W zero-initialised) appended per residue i as [j·K + k]: [L, 12 + L·K]. As openfold, the
// rotations carry no gradient from one iteration into the next (stop_rot_gradient; translations
// do). openfold's final (zero) inits of linear_out, transition.linear_3 and bb_update: T starts at
// the identity and stays there until bb_update learns.
#include <cmath>

#include "autodiff/vjp.h"
#include "layers/af2.h"

namespace netspec::layers {
namespace {

using af2::declare_linear;
using af2::Lin;
using hlo::Builder;

constexpr int64_t kH = 12, kC = 16, kQp = 4, kVp = 8;
constexpr double kTransScale = 10, kIpaEps = 1e-8;

struct Frames {
  Value* r;  // [B, L, 3, 3]
  Value* t;  // [B, L, 3]
};

struct Ipa {
  Lin q, kv, q_pts, kv_pts, b, out;
  Value* head_weights;
};

// Points [B, L, 3·P] (openfold: 3 chunks of P = x, y, z) to global [B, L, 3, P]: R_i·p + t_i.
Value* points_to_global(Builder& b, Value* p, const Frames& f) {
  const Shape& s = p->type.shape();
  Value* local = b.reshape(p, {s[0], s[1], 3, s[2] / 3});
  Value* g = b.dot_general(f.r, local, {{0, 1}, {0, 1}, {3}, {2}});  // [B, L, 3, P]
  return b.add(g, b.broadcast_in_dim(f.t, g->type.shape(), {0, 1, 2}));
}

Value* scale(Builder& b, Value* x, double s) { return b.multiply(x, b.constant_splat(s, x->type)); }

// Σ over dims `dims` of x·x.
Value* sum_sq(Builder& b, Value* x, hlo::I64s dims) {
  return b.reduce(b.multiply(x, x), b.scalar(0, x->type.dtype()), dims, hlo::OpKind::kAdd);
}

// Invariant point attention (Alg. 22) on s [B, L, cs], z [B, L, L, cz] (normalised).
Value* ipa(Builder& b, const Ipa& w, Value* s, Value* z, const Frames& f) {
  const int64_t bt = s->type.dim(0), n = s->type.dim(1), cz = z->type.dim(3);
  Value* q = b.reshape(w.q(b, s), {bt, n, kH, kC});
  Value* kv = b.reshape(w.kv(b, s), {bt, n, kH, 2 * kC});
  Value* k = b.slice(kv, {0, 0, 0, 0}, {bt, n, kH, kC});
  Value* v = b.slice(kv, {0, 0, 0, kC}, {bt, n, kH, 2 * kC});
  Value* qp = b.reshape(points_to_global(b, w.q_pts(b, s), f), {bt, n, 3, kH, kQp});
  Value* kvp = b.reshape(points_to_global(b, w.kv_pts(b, s), f), {bt, n, 3, kH, kQp + kVp});
  Value* kp = b.slice(kvp, {0, 0, 0, 0, 0}, {bt, n, 3, kH, kQp});
  Value* vp = b.slice(kvp, {0, 0, 0, 0, kQp}, {bt, n, 3, kH, kQp + kVp});
  // scores [B, H, I, J] = √(1/3C) q_i·k_j + √(1/3) b_ij - γ_h/2 Σ_p |qp_i - kp_j|²
  Value* a = scale(b, b.dot_general(q, k, {{0, 2}, {0, 2}, {3}, {3}}), std::sqrt(1.0 / (3 * kC)));
  Value* pb = b.transpose(w.b(b, z), {0, 3, 1, 2});
  a = b.add(a, scale(b, pb, std::sqrt(1.0 / 3)));
  // |qp_i - kp_j|² summed over points = |qp_i|² + |kp_j|² - 2 qp_i·kp_j
  Shape s4{bt, kH, n, n};
  Value* qq = b.broadcast_in_dim(sum_sq(b, qp, {2, 4}), s4, {0, 2, 1});  // [B, I, H]
  Value* kk = b.broadcast_in_dim(sum_sq(b, kp, {2, 4}), s4, {0, 3, 1});  // [B, J, H]
  Value* qk = b.dot_general(qp, kp, {{0, 3}, {0, 3}, {2, 4}, {2, 4}});   // [B, H, I, J]
  Value* d2 = b.subtract(b.add(qq, kk), scale(b, qk, 2));
  Value* gamma = scale(b, softplus(b, w.head_weights), std::sqrt(1.0 / (3 * (kQp * 9.0 / 2))));
  Value* pt = b.multiply(d2, b.broadcast_in_dim(gamma, s4, {1}));
  Value* att = af2::softmax_last(b, b.subtract(a, scale(b, pt, 0.5)));  // [B, H, I, J]
  // o = Σ_j a v_j [B, I, H·C]; o_pt = T_i⁻¹(Σ_j a vp_j) [B, I, 3, H·Pv]; o_pair = Σ_j a z_ij
  Value* o = b.dot_general(att, v, {{0, 1}, {0, 2}, {3}, {1}});  // [B, H, I, C]
  o = b.reshape(b.transpose(o, {0, 2, 1, 3}), {bt, n, kH * kC});
  Value* op = b.dot_general(att, vp, {{0, 1}, {0, 3}, {3}, {1}});  // [B, H, I, 3, Pv]
  op = b.transpose(op, {0, 2, 3, 1, 4});                           // [B, I, 3, H, Pv]
  op = b.subtract(op, b.broadcast_in_dim(f.t, op->type.shape(), {0, 1, 2}));
  op = b.dot_general(f.r, op, {{0, 1}, {0, 1}, {2}, {2}});  // Rᵀ(g - t): [B, I, 3, H, Pv]
  op = b.reshape(op, {bt, n, 3, kH * kVp});
  Value* sq = sum_sq(b, op, {2});  // [B, I, H·Pv]
  Value* norm = b.sqrt(b.add(sq, b.constant_splat(kIpaEps, sq->type)));
  Value* opair = b.dot_general(att, z, {{0, 2}, {0, 1}, {3}, {2}});  // [B, I, H, cz]
  opair = b.reshape(opair, {bt, n, kH * cz});
  std::vector<Value*> cat{o};
  for (int64_t x = 0; x < 3; ++x)
    cat.push_back(
        b.reshape(b.slice(op, {0, 0, x, 0}, {bt, n, x + 1, kH * kVp}), {bt, n, kH * kVp}));
  cat.push_back(norm);
  cat.push_back(opair);
  return w.out(b, b.concatenate(cat, 2));
}

// The rotation of the unit quaternion (a, b, c, d), each [B, L] -> [B, L, 3, 3].
Value* quat_to_rot(Builder& b, Value* qa, Value* qb, Value* qc, Value* qd) {
  auto mul = [&](Value* x, Value* y) { return b.multiply(x, y); };
  auto two = [&](Value* x, Value* y, Value* u, Value* v, bool plus) {
    Value* r = plus ? b.add(mul(x, y), mul(u, v)) : b.subtract(mul(x, y), mul(u, v));
    return scale(b, r, 2);
  };
  Value *aa = mul(qa, qa), *bb = mul(qb, qb), *cc = mul(qc, qc), *dd = mul(qd, qd);
  std::vector<Value*> e{
      b.subtract(b.add(aa, bb), b.add(cc, dd)),
      two(qb, qc, qa, qd, false),
      two(qb, qd, qa, qc, true),  // row 0
      two(qb, qc, qa, qd, true),
      b.subtract(b.add(aa, cc), b.add(bb, dd)),
      two(qc, qd, qa, qb, false),  // row 1
      two(qb, qd, qa, qc, false),
      two(qc, qd, qa, qb, true),
      b.subtract(b.add(aa, dd), b.add(bb, cc)),  // row 2
  };
  const Shape& s = qa->type.shape();
  for (Value*& x : e) x = b.reshape(x, {s[0], s[1], 1});
  return b.reshape(b.concatenate(e, 2), {s[0], s[1], 3, 3});
}

// Backbone update (Alg. 23): T ∘ (rot(normalised (1, b, c, d)), t_upd).
Frames backbone_update(Builder& b, const Lin& lin, Value* s, const Frames& f) {
  Value* p = lin(b, s);  // [B, L, 6]
  const int64_t bt = p->type.dim(0), n = p->type.dim(1);
  auto comp = [&](int64_t i) { return b.reshape(b.slice(p, {0, 0, i}, {bt, n, i + 1}), {bt, n}); };
  Value* inv = b.rsqrt(b.add(sum_sq(b, b.slice(p, {0, 0, 0}, {bt, n, 3}), {2}),
                             b.constant_splat(1, hlo::Type::tensor(p->type.dtype(), {bt, n}))));
  Value* r_upd = quat_to_rot(b, inv, b.multiply(comp(0), inv), b.multiply(comp(1), inv),
                             b.multiply(comp(2), inv));
  Value* t_upd = b.slice(p, {0, 0, 3}, {bt, n, 6});
  Value* r = b.dot_general(f.r, r_upd, {{0, 1}, {0, 1}, {3}, {2}});  // R·R_upd
  Value* t = b.add(b.dot_general(f.r, t_upd, {{0, 1}, {0, 1}, {3}, {2}}), f.t);
  return {r, t};
}

}  // namespace

Value* lower_structure_module(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<StructureModule>(layer);
  Fm f = af2::pair_map(c, l.pairCh);
  Builder& b = c.b;
  const int64_t bt = x->type.dim(0), n = f.h, cs = l.singleCh, cz = l.pairCh, h = kH;
  Value* s = af2::residue_track(c, n, cs);
  af2::Ln ln_s = af2::declare_ln(c, "layer_norm_s", cs);
  af2::Ln ln_z = af2::declare_ln(c, "layer_norm_z", cz);
  Lin lin_in = declare_linear(c, "linear_in", cs, cs, true);
  Ipa w;
  w.q = declare_linear(c, "ipa.linear_q", cs, h * kC, true);
  w.kv = declare_linear(c, "ipa.linear_kv", cs, 2 * h * kC, true);
  w.q_pts = declare_linear(c, "ipa.linear_q_points", cs, h * kQp * 3, true);
  w.kv_pts = declare_linear(c, "ipa.linear_kv_points", cs, h * (kQp + kVp) * 3, true);
  w.b = declare_linear(c, "ipa.linear_b", cz, h, true);
  w.head_weights = c.param("ipa.head_weights", {h}, ParamInit::zeros, false);
  w.out = declare_linear(c, "ipa.linear_out", h * (cz + kC + kVp * 4), cs, true, af2::Init::final_);
  af2::Ln ln_ipa = af2::declare_ln(c, "layer_norm_ipa", cs);
  Lin t1 = declare_linear(c, "transition.linear_1", cs, cs, true);
  Lin t2 = declare_linear(c, "transition.linear_2", cs, cs, true);
  Lin t3 = declare_linear(c, "transition.linear_3", cs, cs, true, af2::Init::final_);
  af2::Ln ln_t = af2::declare_ln(c, "transition.layer_norm", cs);
  Lin bb = declare_linear(c, "bb_update.linear", cs, 6, true, af2::Init::final_);
  const int64_t bins = l.distogramBins;
  if (bins < 0 || (bins > 0 && !l.frames))
    c.fail("distogramBins {} needs frames: true and >= 0 (the distogram follows the frames)", bins);
  Lin dist;
  if (bins > 0) dist = declare_linear(c, "distogram.linear", cz, bins, true, af2::Init::final_);

  DType dt = x->type.dtype();
  s = lin_in(b, ln_s(c, s));
  Value* z = ln_z(c, af2::to_channels_last(b, x));
  hlo::Type rt = hlo::Type::tensor(DType::kI32, {bt, n, 3, 3});
  Frames fr{b.convert(b.compare(b.iota(rt, 2), b.iota(rt, 3), "EQ"), dt),
            b.constant_splat(0, hlo::Type::tensor(dt, {bt, n, 3}))};
  for (int i = 0; i < l.nBlocks; ++i) {
    s = ln_ipa(c, b.add(s, ipa(b, w, s, z, fr)));
    Value* u = activation(b, t1(b, s), Activation::relu);
    u = t3(b, activation(b, t2(b, u), Activation::relu));
    s = ln_t(c, b.add(s, u));
    fr = backbone_update(b, bb, s, fr);
    if (i + 1 < l.nBlocks) fr.r = autodiff::stop_gradient(b, fr.r);
  }
  Value* t = scale(b, fr.t, kTransScale);
  if (!l.frames) return t;
  std::vector<Value*> cat{b.reshape(fr.r, {bt, n, 9}), t};
  if (bins > 0) {
    Value* lg = dist(b, af2::to_channels_last(b, x));  // [B, I, J, K]
    lg = b.add(lg, b.transpose(lg, {0, 2, 1, 3}));     // symmetric in (i, j)
    cat.push_back(b.reshape(lg, {bt, n, n * bins}));
  }
  return b.concatenate(cat, 2);
}

NETSPEC_REGISTER_LAYER(structureModule, lower_structure_module,
                       {.field_min = {{"distogramBins", 0}}})

}  // namespace netspec::layers
