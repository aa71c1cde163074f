// AlphaFold-2 kinds pairTile, evoformerBlock, structureModule: tiny trunks pass gradcheck of the
// floatTargetMse train-step loss in f64 on ref and cpu; their forward equals a PyTorch reference
// written here from the AF2 supplement's algorithms in openfold's form (f64, Debian's torch,
// weights looked up by name); parameter counts equal openfold's module definitions at the zoo's
// sizes; the zoo's protein-fold emits every module and cpu train steps lower its loss.
#include "../engine_util.h"
#include "emit_test_util.h"
#include "error_of.h"
#include "torch_script.h"

namespace netspec::emit::testing {
namespace {

EmitOptions mse_opts(int64_t batch = 2, DType dt = DType::kF32) {
  EmitOptions o;
  o.batch = batch;
  o.loss.kind = LossKind::floatTargetMse;
  o.dtype = dt;
  return o;
}

// ids [L] (vocab 5) -> embed [L, d] -> pairTile [c, L, L] -> `body`.
NetSpec trunk(const std::string& name, int64_t l, int64_t d, int64_t c, int64_t planes,
              const std::vector<Layer>& body) {
  NetBuilder nb(name);
  nb.input(static_cast<int>(l))
      .add(TokenPositionEmbed{5, static_cast<int>(l), static_cast<int>(d), true, true, false})
      .add(PairTile{static_cast<int>(l), static_cast<int>(d), static_cast<int>(c),
                    static_cast<int>(planes)});
  for (const Layer& x : body) nb.add(x);
  return nb.build();
}

NetSpec tiny_evoformer(int blocks = 1) {
  return trunk("evoformer_case", 3, 4, 3, 3, {EvoformerBlock{4, 3, blocks}});
}
// One iteration: the rotation's gradient stop sits between iterations, so finite differences
// see the exact gradient; with more, the gradients are checked against torch's autograd.
NetSpec tiny_structure(int iterations = 1) {
  return trunk("structure_case", 3, 4, 3, 2, {StructureModule{4, 3, iterations}});
}

// Every parameter is checked on up to 12 sampled coordinates (the fixed head widths make even
// a tiny block ~20k parameters). Two biases have an exact zero gradient: a per-head constant
// added to every score of a softmax row (msa_att_row.layer_norm_z.bias through the bias-free
// linear_z, ipa.linear_b.bias); their finite differences are noise of ~1e-8.
void expect_grads(const NetSpec& net) {
  for (const char* backend : {"ref", "cpu"}) {
    SCOPED_TRACE(backend);
    expect_loss_grads(net, mse_opts(), backend, 5, 12, 2e-8);
  }
}

TEST(EmitAf2, PairTilePassesGradcheckOnRefAndCpu) {
  expect_grads(trunk("pair_case", 4, 3, 2, 5, {}));
}
TEST(EmitAf2, EvoformerPassesGradcheckOnRefAndCpu) { expect_grads(tiny_evoformer()); }
TEST(EmitAf2, StructureModulePassesGradcheckOnRefAndCpu) { expect_grads(tiny_structure()); }

// frames + distogram head under the af2Fold loss (FAPE + distogram CE): every parameter's
// gradient against finite differences in f64 (labels are not differentiated: the distogram bins
// are a step function of them).
TEST(EmitAf2, FramesAndDistogramUnderAf2FoldPassGradcheckOnRefAndCpu) {
  NetSpec net = trunk("fold_case", 3, 4, 3, 2, {StructureModule{4, 3, 1, true, 4}});
  EmitOptions o = mse_opts();
  o.loss.kind = LossKind::af2Fold;
  Emitted e = emit_module(net, ModuleKind::loss, o);
  const ParamTable t = build_param_table(net);
  EXPECT_EQ(t.output, (Shape{3, 12 + 3 * 4}));
  for (const char* backend : {"ref", "cpu"}) {
    SCOPED_TRACE(backend);
    autodiff::GradcheckOptions g;
    g.backend = backend;
    g.int_max = 5;
    g.max_coords = 12;
    g.zero_abs = 2e-8;
    for (size_t i = 0; i < t.params.size(); ++i) g.wrt.push_back(i);
    autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
    EXPECT_EQ(r.inputs.size(), t.params.size());
    EXPECT_TRUE(r.ok) << r.str();
  }
  // distogramBins without frames is refused by name
  NetSpec bad = trunk("fold_bad", 3, 4, 3, 2, {StructureModule{4, 3, 1, false, 4}});
  EXPECT_NE(test_util::error_of([&] {
              build_param_table(bad);
            }).find("distogramBins 4 needs frames: true"),
            std::string::npos)
      << test_util::error_of([&] { build_param_table(bad); });
}

// Parameter counts of openfold's modules (model/evoformer.py, structure_module.py) written out
// from their Linear / LayerNorm / Parameter definitions.
int64_t lin(int64_t in, int64_t out, bool bias = true) { return in * out + (bias ? out : 0); }
int64_t attention(int64_t c, int64_t heads) {  // Attention(c, c, c, 32, heads), gated
  int64_t hc = heads * 32;
  return 3 * lin(c, hc, false) + lin(hc, c) + lin(c, hc);
}
int64_t openfold_evoformer_block(int64_t cm, int64_t cz) {
  int64_t row = 2 * cm + 2 * cz + lin(cz, 8, false) + attention(cm, 8);
  int64_t col = 2 * cm + attention(cm, 8);
  auto transition = [](int64_t c) { return 2 * c + lin(c, 4 * c) + lin(4 * c, c); };
  int64_t opm = 2 * cm + 2 * lin(cm, 32) + lin(32 * 32, cz);
  int64_t tri_mul = 4 * lin(cz, 128) + lin(cz, cz) + lin(128, cz) + 2 * cz + 2 * 128;
  int64_t tri_att = 2 * cz + lin(cz, 4, false) + attention(cz, 4);
  return row + col + transition(cm) + opm + 2 * tri_mul + 2 * tri_att + transition(cz);
}
int64_t openfold_structure_module(int64_t cs, int64_t cz) {  // without the angle resnet
  int64_t ipa = lin(cs, 12 * 16) + lin(cs, 2 * 12 * 16) + lin(cs, 12 * 4 * 3) +
                lin(cs, 12 * 12 * 3) + lin(cz, 12) + 12 + lin(12 * (cz + 16 + 8 * 4), cs);
  return 2 * cs + 2 * cz + lin(cs, cs) + ipa + 2 * cs + 3 * lin(cs, cs) + 2 * cs + lin(cs, 6);
}

TEST(EmitAf2, ParameterCountsEqualOpenfoldModules) {
  SpecFile sf = resolve_net("protein-fold");
  ParamTable t = build_param_table(sf.net);
  auto layer_params = [&](size_t index) { return t.layers.at(index).params; };
  EXPECT_EQ(layer_params(1), lin(2 * 64 + 16, 32));  // pairTile: Linear(2D + planes -> C)
  EXPECT_EQ(layer_params(2), 2 * openfold_evoformer_block(64, 32));
  // + openfold's DistogramHead: Linear(c_z, 64 bins)
  EXPECT_EQ(layer_params(3), openfold_structure_module(64, 32) + lin(32, 64));
}

// "P = {'layers.1.proj.weight': 1, ...}": the script finds each weight by its name.
std::string param_index(const ParamTable& t) {
  std::string s = "P = {";
  for (size_t i = 0; i < t.params.size(); ++i) s += fmt::format("'{}': {}, ", t.params[i].name, i);
  return s + "}\n";
}

// The reference: openfold's modules as plain functions of named weights (AF2 supplement Alg. 6-14
// and 20-23), with the MSA as [B, S, L, C] (S = 1) and the distances of IPA taken directly.
constexpr const char* kAf2Reference = R"(
import torch.nn.functional as F
def p(n): return load(P[n])
def lin(x, n, bias=True):
    y = x @ p(n + '.weight').T
    return y + p(n + '.bias') if bias else y
def ln(x, n): return F.layer_norm(x, x.shape[-1:], p(n + '.weight'), p(n + '.bias'), 1e-5)
def mha(x, n, H, bias):                      # x [B, R, T, C]; bias [B, H, T, T]
    B, R, T, C = x.shape
    heads = lambda w: lin(x, n + w, False).view(B, R, T, H, 32).transpose(2, 3)
    a = heads('.linear_q') @ heads('.linear_k').transpose(-1, -2) / 32 ** 0.5
    if bias is not None: a = a + bias[:, None]
    o = (torch.softmax(a, -1) @ heads('.linear_v')).transpose(2, 3).reshape(B, R, T, H * 32)
    return lin(o * torch.sigmoid(lin(x, n + '.linear_g')), n + '.linear_o')
def transition(x, n): return lin(torch.relu(lin(ln(x, n + '.layer_norm'), n + '.linear_1')), n + '.linear_2')
def tri_mul(z, n, outgoing):
    zn = ln(z, n + '.layer_norm_in')
    a = lin(zn, n + '.linear_a_p') * torch.sigmoid(lin(zn, n + '.linear_a_g'))
    b = lin(zn, n + '.linear_b_p') * torch.sigmoid(lin(zn, n + '.linear_b_g'))
    x = torch.einsum('bikc,bjkc->bijc' if outgoing else 'bkic,bkjc->bijc', a, b)
    return lin(ln(x, n + '.layer_norm_out'), n + '.linear_z') * torch.sigmoid(lin(zn, n + '.linear_g'))
def tri_att(z, n, starting):
    if not starting: z = z.transpose(1, 2)
    zn = ln(z, n + '.layer_norm')
    y = mha(zn, n + '.mha', 4, lin(zn, n + '.linear', False).permute(0, 3, 1, 2))
    return y if starting else y.transpose(1, 2)
def evoformer_block(m, z, n):
    mn = ln(m, n + 'msa_att_row.layer_norm_m')
    bias = lin(ln(z, n + 'msa_att_row.layer_norm_z'), n + 'msa_att_row.linear_z', False).permute(0, 3, 1, 2)
    m = m + mha(mn, n + 'msa_att_row.mha', 8, bias)
    mt = ln(m, n + 'msa_att_col.layer_norm_m').transpose(1, 2)
    m = m + mha(mt, n + 'msa_att_col.mha', 8, None).transpose(1, 2)
    m = m + transition(m, n + 'msa_transition')
    mn = ln(m, n + 'outer_product_mean.layer_norm')
    a, b = lin(mn, n + 'outer_product_mean.linear_1'), lin(mn, n + 'outer_product_mean.linear_2')
    outer = torch.einsum('bsic,bsje->bijce', a, b).flatten(-2)
    z = z + lin(outer, n + 'outer_product_mean.linear_out') / (m.shape[1] + 1e-3)
    z = z + tri_mul(z, n + 'tri_mul_out', True)
    z = z + tri_mul(z, n + 'tri_mul_in', False)
    z = z + tri_att(z, n + 'tri_att_start', True)
    z = z + tri_att(z, n + 'tri_att_end', False)
    return m, z + transition(z, n + 'pair_transition')
def pair_tile(f, n, planes):                  # f [B, L, D] -> z [B, L, L, C]
    B, L, D = f.shape
    i, j = torch.meshgrid(torch.arange(L), torch.arange(L), indexing='ij')
    rel = F.one_hot((i - j + planes // 2).clamp(0, planes - 1), planes).double()
    x = torch.cat([f[:, :, None].expand(B, L, L, D), f[:, None, :].expand(B, L, L, D),
                   rel[None].expand(B, L, L, planes)], -1)
    return lin(x, n + 'proj')
def quat_rot(q):
    a, b, c, d = q.unbind(-1)
    return torch.stack([a*a + b*b - c*c - d*d, 2*(b*c - a*d), 2*(b*d + a*c),
                        2*(b*c + a*d), a*a - b*b + c*c - d*d, 2*(c*d - a*b),
                        2*(b*d - a*c), 2*(c*d + a*b), a*a - b*b - c*c + d*d], -1).view(*q.shape[:-1], 3, 3)
def ipa(s, z, R, t, n):
    B, L, _ = s.shape
    H, C, Pq, Pv = 12, 16, 4, 8
    q = lin(s, n + 'linear_q').view(B, L, H, C)
    k, v = lin(s, n + 'linear_kv').view(B, L, H, 2 * C).split(C, -1)
    glob = lambda pts: torch.einsum('blxy,blyp->blpx', R, pts.view(B, L, 3, -1)) + t[:, :, None]
    qp = glob(lin(s, n + 'linear_q_points')).view(B, L, H, Pq, 3)
    kp, vp = glob(lin(s, n + 'linear_kv_points')).view(B, L, H, Pq + Pv, 3).split([Pq, Pv], -2)
    a = torch.einsum('bihc,bjhc->bhij', q, k) * (1 / (3 * C)) ** 0.5
    a = a + (1 / 3) ** 0.5 * lin(z, n + 'linear_b').permute(0, 3, 1, 2)
    d2 = ((qp[:, :, None] - kp[:, None, :]) ** 2).sum((-1, -2))          # [B, I, J, H]
    w = F.softplus(p(n + 'head_weights')) * (1 / (3 * Pq * 9 / 2)) ** 0.5
    a = torch.softmax(a - 0.5 * (d2 * w).permute(0, 3, 1, 2), -1)
    o = torch.einsum('bhij,bjhc->bihc', a, v).reshape(B, L, H * C)
    og = torch.einsum('bhij,bjhpx->bihpx', a, vp) - t[:, :, None, None]
    ol = torch.einsum('bixy,bihpx->bihpy', R, og)                         # R_i^T (g - t_i)
    norm = (ol ** 2).sum(-1).add(1e-8).sqrt().reshape(B, L, H * Pv)
    ol = ol.reshape(B, L, H * Pv, 3)
    opair = torch.einsum('bhij,bijc->bihc', a, z).reshape(B, L, -1)
    return lin(torch.cat([o, ol[..., 0], ol[..., 1], ol[..., 2], norm, opair], -1), n + 'linear_out')
def structure_module(s, z, n, iters):
    s = lin(ln(s, n + 'layer_norm_s'), n + 'linear_in')
    z = ln(z, n + 'layer_norm_z')
    B, L, _ = s.shape
    R = torch.eye(3).expand(B, L, 3, 3)
    t = torch.zeros(B, L, 3)
    for it in range(iters):
        s = ln(s + ipa(s, z, R, t, n + 'ipa.'), n + 'layer_norm_ipa')
        u = lin(torch.relu(lin(torch.relu(lin(s, n + 'transition.linear_1')), n + 'transition.linear_2')), n + 'transition.linear_3')
        s = ln(s + u, n + 'transition.layer_norm')
        upd = lin(s, n + 'bb_update.linear')
        quat = torch.cat([torch.ones(B, L, 1), upd[..., :3]], -1)
        quat = quat / quat.norm(dim=-1, keepdim=True)
        R, t = R @ quat_rot(quat), (R @ upd[..., 3:, None])[..., 0] + t
        if it < iters - 1: R = R.detach()       # openfold's stop_rot_gradient
    return t * 10
)";

// Forward of `net` (eval, f64) on ids against the reference `tail` run after kAf2Reference with
// f (the residue track) and z (the pair map after pairTile) defined.
void expect_matches_reference(const NetSpec& net, const std::string& tail, uint64_t seed) {
  ParamTable pt = build_param_table(net);
  std::vector<Tensor> params = small_params(pt, DType::kF64, 0.4, seed);
  const int64_t l = pt.input.at(0);
  Tensor ids(DType::kI32, {2, l});
  for (int64_t i = 0; i < ids.numel(); ++i)
    ids.data<int32_t>()[i] = static_cast<int32_t>((i * 3 + seed) % 5);
  for (const char* backend : {"ref", "cpu"}) {
    Emitted e = emit_module(net, ModuleKind::eval, mse_opts(2, DType::kF64));
    std::vector<Tensor> in = params;
    in.push_back(ids);
    Tensor y = run_main(*e.module, in, backend).at(0);
    std::vector<Tensor> args = params;
    Tensor idsf(DType::kF64, ids.shape());
    for (int64_t i = 0; i < ids.numel(); ++i) idsf.data<double>()[i] = ids.data<int32_t>()[i];
    args.push_back(idsf);
    const auto& tile = std::get<PairTile>(net.layers.at(1));
    std::string script = param_index(pt) + kAf2Reference +
                         fmt::format(
                             "f = p('layers.0.tok_emb.weight')[load({}).long()]\n"
                             "z = pair_tile(f, 'layers.1.', {})\n",
                             args.size() - 1, tile.pairPlanes) +
                         tail;
    reference::expect_matches(net.name + " on " + backend, y,
                              reference::run_torch_script(script, args).at(0), 1e-10);
  }
}

TEST(EmitAf2, EvoformerEqualsTorchReference) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  NetSpec net = trunk("evoformer_ref", 5, 6, 4, 4, {EvoformerBlock{6, 4, 2}});
  expect_matches_reference(net, R"(
m = f[:, None]
for blk in range(2): m, z = evoformer_block(m, z, f'layers.2.blocks.{blk}.')
save(0, z.permute(0, 3, 1, 2))
)",
                           3);
}

TEST(EmitAf2, TrunkWithStructureModuleEqualsTorchReference) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  NetSpec net =
      trunk("structure_ref", 5, 6, 4, 5, {EvoformerBlock{6, 4, 1}, StructureModule{6, 4, 3}});
  expect_matches_reference(net, R"(
m, z = evoformer_block(f[:, None], z, 'layers.2.blocks.0.')
save(0, structure_module(f, z, 'layers.3.', 3))
)",
                           7);
}

// With the rotation gradient stopped between iterations the loss gradient is not the finite
// difference one: every parameter's gradient equals torch autograd's through the reference
// (R.detach() between iterations), f64.
TEST(EmitAf2, StructureModuleGradientsEqualTorchAutograd) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  NetSpec net = trunk("structure_grad", 4, 6, 4, 3, {StructureModule{6, 4, 3}});
  ParamTable pt = build_param_table(net);
  std::vector<Tensor> params = small_params(pt, DType::kF64, 0.4, 13);
  Tensor ids = Tensor::from<int>(DType::kI32, {2, 4}, {0, 3, 1, 4, 2, 2, 4, 1});
  Tensor target = random_tensor(hlo::Type::tensor(DType::kF64, {2, 4, 3}), 9);
  std::vector<Tensor> grads = loss_grads(net, mse_opts(2, DType::kF64), params, ids, target);
  std::vector<Tensor> args = params;
  Tensor idsf(DType::kF64, ids.shape());
  for (int64_t i = 0; i < ids.numel(); ++i) idsf.data<double>()[i] = ids.data<int32_t>()[i];
  args.push_back(idsf);
  args.push_back(target);
  std::string script = param_index(pt) + kAf2Reference +
                       fmt::format(R"(
W = {{n: load(i).requires_grad_() for n, i in P.items()}}
def p(n): return W[n]
f = p('layers.0.tok_emb.weight')[load({0}).long()]
y = structure_module(f, pair_tile(f, 'layers.1.', 3), 'layers.2.', 3)
((y - load({1})) ** 2).mean().backward()
for n, i in P.items(): save(i, W[n].grad if W[n].grad is not None else torch.zeros_like(W[n]))
)",
                                   params.size(), params.size() + 1);
  std::vector<Tensor> want =
      reference::run_torch_script(script, args, static_cast<int>(params.size()));
  ASSERT_EQ(grads.size(), want.size());
  double err = 0, mx = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(pt.params[i].name);
    err = std::max(err, max_abs_diff(grads[i], want[i]));
    for (int64_t j = 0; j < want[i].numel(); ++j) mx = std::max(mx, std::abs(want[i].as_double(j)));
  }
  std::cout << "[ reference ] structure gradients: max|Δ| " << err << ", max|ref| " << mx << "\n";
  EXPECT_GT(mx, 1e-3);
  EXPECT_LE(err, 1e-10 * mx);
}

// XLA (PJRT CPU) runs the same StableHLO: a trunk's eval forward equals the cpu executor's (f32).
TEST(EmitAf2, TrunkOnXlaEqualsCpu) {
  REQUIRE_ENGINE(xla, "xla");
  NetSpec net = trunk("xla_case", 5, 6, 4, 5, {EvoformerBlock{6, 4, 1}, StructureModule{6, 4, 2}});
  ParamTable pt = build_param_table(net);
  std::vector<Tensor> in = small_params(pt, DType::kF32, 0.3, 5);
  Tensor ids(DType::kI32, {2, 5});
  for (int64_t i = 0; i < ids.numel(); ++i) ids.data<int32_t>()[i] = static_cast<int32_t>(i % 5);
  in.push_back(ids);
  Emitted e = emit_module(net, ModuleKind::eval, mse_opts());
  auto m = std::shared_ptr<const hlo::Module>(hlo::clone_module(*e.module));
  Tensor want = exec::make_backend("cpu")->load(m)->run("main", in).at(0);
  Tensor got = xla->load(m)->run("main", in).at(0);
  double mx = 0;
  for (int64_t i = 0; i < want.numel(); ++i) mx = std::max(mx, std::abs(want.as_double(i)));
  std::cout << "[ xla ] trunk forward max|Δ| " << max_abs_diff(got, want) << ", max " << mx << "\n";
  EXPECT_GT(mx, 0.1);
  EXPECT_LE(max_abs_diff(got, want), 1e-4 * mx);
}

// The zoo's protein-fold: every module emits; cpu train steps on fixed synthetic frames (identity
// rotations on a helix-like Cα curve) lower its af2Fold loss.
TEST(EmitAf2, ZooNetEmitsEveryModuleAndTrains) {
  SpecFile sf = resolve_net("protein-fold");
  TrainConfig tc = sf.train.value_or(TrainConfig{});
  expect_emits_every_module(sf.net, tc, 2);
  EmitOptions o = EmitOptions::from_train(tc, 2);
  o.optim.kind = OptimizerKind::adam;
  o.optim.weight_decay = 0;
  ParamTable t = build_param_table(sf.net);
  const int64_t l = t.input.at(0);
  Tensor ids(DType::kI32, {2, l});
  for (int64_t i = 0; i < ids.numel(); ++i)
    ids.data<int32_t>()[i] = static_cast<int32_t>(i * 7 % 21);
  // targets: an α-helix-like curve (radius 2.3 Å, 100° and 1.5 Å rise per residue), centred,
  // identity rotations, every residue present: (R, t, mask) per residue
  Tensor target(DType::kF32, {2, l, 13});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < l; ++i) {
      float* r = target.data<float>() + (b * l + i) * 13;
      for (int k = 0; k < 9; ++k) r[k] = k % 4 == 0 ? 1.0f : 0.0f;
      r[12] = 1;
      float* p = r + 9;
      double a = (100.0 * static_cast<double>(i) + 40.0 * static_cast<double>(b)) * M_PI / 180;
      p[0] = static_cast<float>(2.3 * std::cos(a));
      p[1] = static_cast<float>(2.3 * std::sin(a));
      p[2] = static_cast<float>(1.5 * (static_cast<double>(i) - static_cast<double>(l) / 2) / 8);
    }
  // openfold's init: zeros and ones exact (final and gating linears, biases, LN), the rest small
  std::vector<Tensor> params = small_params(t, DType::kF32, 0.05, 11);
  for (size_t i = 0; i < params.size(); ++i) {
    ParamInit init = t.params[i].init;
    if (init == ParamInit::zeros || init == ParamInit::ones)
      for (float& v : params[i].span<float>()) v = init == ParamInit::ones ? 1.0f : 0.0f;
  }
  std::vector<double> losses = train_step_losses(sf.net, o, params, ids, target, 3e-4, 6);
  ASSERT_EQ(losses.size(), 6u);
  EXPECT_LT(losses[5], 0.95 * losses[0]);  // af2Fold: 1.780 -> 1.651 (FAPE clamps at 10 Å)
}

}  // namespace
}  // namespace netspec::emit::testing
