// DETR (transformerDecoder + detrHeads + the detrSet loss): the decoder equals
// torch.nn.TransformerDecoder at equal weights (f64 on ref, f32 on cpu); the Hungarian matching
// equals scipy's linear_sum_assignment on random cost matrices; the set loss against values
// computed here by hand; a tiny DETR passes gradcheck of the detrSet loss in f64 on ref and cpu,
// and train steps with host matching between them lower its loss on a fixed tiny set.
#include <random>

#include "emit_test_util.h"
#include "losses/detr_match.h"
#include "losses/loss.h"
#include "torch_script.h"

namespace netspec::emit::testing {
namespace {

using losses::DetrBox;

// 3x8x8 image -> 4 patch tokens (dim 4) -> encoder -> decoder (3 queries) -> heads (2 classes).
NetSpec tiny_detr() {
  return NetBuilder("detr_case")
      .input(3, 8, 8)
      .add(PatchEmbed{3, 4, 4, 4, false})
      .add(TransformerEncoder{4, 2, 6, 1, false, true})
      .add(TransformerDecoder{.dim = 4, .heads = 2, .mlpDim = 6, .nBlocks = 2, .nQueries = 3})
      .add(DetrHeads{4, 2})
      .build();
}

EmitOptions detr_opts(int64_t batch = 2) {
  EmitOptions o;
  o.batch = batch;
  o.loss.kind = LossKind::detrSet;
  return o;
}

// Per-query targets for 2 images x 3 queries (class 2 = no object).
Tensor fixed_targets(DType dt) {
  std::vector<double> v = {1, 0.3, 0.4, 0.2, 0.3, 2, 0.5, 0.5, 1,   1,   0, 0.6, 0.6, 0.3, 0.2,
                           2, 0.5, 0.5, 1,   1,   0, 0.5, 0.7, 0.4, 0.2, 2, 0.5, 0.5, 1,   1};
  return Tensor::from<double>(dt, {2, 3, 5}, v);
}

TEST(EmitDetr, TinyDetrPassesGradcheckOnRefAndCpu) {
  NetSpec net = tiny_detr();
  size_t np = build_param_table(net).params.size();
  Emitted e = emit_module(net, ModuleKind::loss, detr_opts());
  for (const char* backend : {"ref", "cpu"}) {
    autodiff::GradcheckOptions g;
    g.backend = backend;
    g.fixed_inputs[np + 1] = fixed_targets(DType::kF64);
    for (size_t i = 0; i <= np; ++i) g.wrt.push_back(i);
    // the first decoder layer's self-attention sees the same query rows for every image: some
    // in_proj gradients are ~1e-5 with a finite-difference noise of ~1e-11
    g.zero_abs = 1e-9;
    autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
    EXPECT_TRUE(r.ok) << backend << "\n" << r.str();
  }
}

// The set loss of hand-made rows: one image, 2 queries, 1 class (logits [z0, z_noobj]).
TEST(EmitDetr, SetLossHandValues) {
  hlo::Module m;
  hlo::Type pt = hlo::Type::tensor(DType::kF64, {1, 2, 6});
  hlo::Type lt = hlo::Type::tensor(DType::kF64, {1, 2, 5});
  hlo::Func* f = m.add_func("main", {pt, lt});
  hlo::Builder b(f->body.get());
  b.func_return({losses::detr_set_loss(b, f->arg(0), f->arg(1))});
  // query 0: logits (2, 0), box (0.5, 0.5, 0.2, 0.2), target class 0 box (0.55, 0.5, 0.2, 0.2);
  // query 1: logits (0, 1), unmatched.
  Tensor pred = Tensor::from<double>(DType::kF64, {1, 2, 6},
                                     {2, 0, 0.5, 0.5, 0.2, 0.2, 0, 1, 0.3, 0.3, 0.1, 0.1});
  Tensor lab =
      Tensor::from<double>(DType::kF64, {1, 2, 5}, {0, 0.55, 0.5, 0.2, 0.2, 1, 0.5, 0.5, 1, 1});
  double y = run_main(m, {pred, lab}).at(0).as_double(0);
  double ce0 = -(2 - std::log(std::exp(2.0) + 1)), ce1 = -(1 - std::log(1 + std::exp(1.0)));
  double ce = (1 * ce0 + 0.1 * ce1) / 1.1;
  double l1 = 0.05;
  // boxes [0.4, 0.6]x[0.4, 0.6] and [0.45, 0.65]x[0.4, 0.6]: inter 0.15·0.2, union 0.05,
  // enclosing 0.25·0.2 = 0.05 (= union): GIoU = IoU
  double iou = 0.03 / (0.04 + 0.04 - 0.03);
  EXPECT_NEAR(y, ce + 5 * l1 + 2 * (1 - iou), 1e-12);
}

TEST(EmitDetr, GiouOfDisjointBoxesIsNegative) {
  DetrBox a{0, 0.2, 0.2, 0.2, 0.2}, c{0, 0.8, 0.2, 0.2, 0.2};
  // union 0.08, enclosing [0.1, 0.9] x [0.1, 0.3] = 0.16: GIoU = 0 - 0.08 / 0.16
  EXPECT_NEAR(losses::giou(a, c), -0.5, 1e-12);
  EXPECT_NEAR(losses::giou(a, a), 1.0, 1e-12);
}

// Random cost matrices (square, wide, tall) against scipy.optimize.linear_sum_assignment.
TEST(EmitDetr, HungarianEqualsScipy) {
  std::string py = std::string(NETSPEC_BINARY_DIR) + "/venv/bin/python";
  if (std::system((py + " -c 'import scipy.optimize' >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << py << " cannot import scipy (scripts/install-oracles.sh): check skipped";
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 3);
  struct Case {
    int r, c;
  };
  std::vector<Case> cases = {{1, 1}, {3, 3}, {4, 7}, {7, 4}, {10, 20}, {25, 25}, {2, 30}};
  reference::TempDir dir;
  std::string script = dir.path + "/lsa.py";
  {
    std::ofstream f(script);
    f << "import sys, numpy as np\nfrom scipy.optimize import linear_sum_assignment\n"
         "c = np.load(sys.argv[1]); r, k = linear_sum_assignment(c)\n"
         "out = -np.ones(c.shape[0], dtype=np.int64); out[r] = k\n"
         "np.save(sys.argv[2], out.astype(np.float64))\n";
  }
  for (int trial = 0; trial < 3; ++trial)
    for (const Case& cs : cases) {
      SCOPED_TRACE(fmt::format("{}x{} trial {}", cs.r, cs.c, trial));
      std::vector<double> cost(size_t(cs.r) * cs.c);
      for (double& v : cost) v = u(rng);
      std::string in = dir.path + "/c.npy", out = dir.path + "/o.npy";
      write_npy(in, Tensor::from<double>(DType::kF64, {cs.r, cs.c}, cost));
      ASSERT_EQ(std::system(fmt::format("{} {} {} {}", py, script, in, out).c_str()), 0);
      Tensor ref = read_npy(out);
      std::vector<int> got = losses::linear_sum_assignment(cost, cs.r, cs.c);
      double cg = 0, cr = 0;
      for (int i = 0; i < cs.r; ++i) {
        EXPECT_EQ(got[i], int(ref.as_double(i))) << "row " << i;
        if (got[i] >= 0) cg += cost[size_t(i) * cs.c + got[i]];
        if (ref.as_double(i) >= 0) cr += cost[size_t(i) * cs.c + int64_t(ref.as_double(i))];
      }
      EXPECT_NEAR(cg, cr, 1e-9);
    }
}

// The matching puts each target on the query whose prediction is closest to it.
TEST(EmitDetr, TargetsGoToTheirBestQueries) {
  // 3 queries, 1 class: logits (z0, z_noobj), box
  Tensor pred = Tensor::from<double>(
      DType::kF64, {1, 3, 6},
      {0, 0, 0.2, 0.2, 0.1, 0.1, 0, 0, 0.8, 0.8, 0.2, 0.2, 0, 0, 0.5, 0.5, 0.3, 0.3});
  std::vector<std::vector<DetrBox>> t = {{{0, 0.5, 0.5, 0.3, 0.3}, {0, 0.2, 0.25, 0.1, 0.1}}};
  Tensor lab = losses::detr_targets(pred, t);
  std::vector<double> expect = {0, 0.2, 0.25, 0.1, 0.1, 1, 0.5, 0.5, 1, 1, 0, 0.5, 0.5, 0.3, 0.3};
  for (int i = 0; i < 15; ++i) EXPECT_DOUBLE_EQ(lab.as_double(i), expect[size_t(i)]) << i;
}

// memory = embedded ids [B, T, d]; decoder output vs torch.nn.TransformerDecoder(batch_first,
// dropout 0, final LayerNorm) with tgt = query_embed for every image.
TEST(EmitDetr, DecoderEqualsTorchTransformerDecoder) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  NetSpec net =
      NetBuilder("decoder_ref")
          .input(5)
          .add(TokenPositionEmbed{7, 5, 8, true, true, false})
          .add(TransformerDecoder{.dim = 8, .heads = 2, .mlpDim = 12, .nBlocks = 2, .nQueries = 4})
          .build();
  ParamTable pt = build_param_table(net);
  std::vector<Tensor> p64 = small_params(pt, DType::kF64, 0.5, 41);
  std::vector<Tensor> p32 = small_params(pt, DType::kF32, 0.5, 41);
  Tensor ids = Tensor::from<int>(DType::kI32, {2, 5}, {1, 6, 0, 3, 3, 5, 2, 2, 4, 0});
  std::vector<Tensor> args = p64;
  Tensor idsf(DType::kF64, ids.shape());
  for (int64_t i = 0; i < ids.numel(); ++i) idsf.data<double>()[i] = ids.data<int32_t>()[i];
  args.push_back(idsf);
  std::string script = fmt::format(R"(
import torch.nn as nn
layer = nn.TransformerDecoderLayer(8, 2, 12, dropout=0.0, batch_first=True)
dec = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(8)).double().eval()
names = list(dec.state_dict().keys())
assert len(names) == {}, names
dec.load_state_dict({{n: load(i + 2) for i, n in enumerate(names)}})
mem = load(0)[load({}).long()]
tgt = load(1).expand(mem.shape[0], -1, -1)
save(0, dec(tgt, mem))
)",
                                   pt.params.size() - 2, args.size() - 1);
  Tensor ref = reference::run_torch_script(script, args).at(0);
  for (DType dt : {DType::kF64, DType::kF32}) {
    EmitOptions o;
    o.batch = 2;
    o.dtype = dt;
    Emitted e = emit_module(net, ModuleKind::eval, o);
    std::vector<Tensor> in = dt == DType::kF64 ? p64 : p32;
    in.push_back(ids);
    const char* backend = dt == DType::kF64 ? "ref" : "cpu";
    reference::expect_matches(fmt::format("decoder {} on {}", dtype_name(dt), backend),
                              run_main(*e.module, in, backend).at(0), ref,
                              dt == DType::kF64 ? 1e-10 : 1e-4);
  }
}

// Train steps on a fixed tiny set (2 images, 1-2 boxes each): before each step a forward pass's
// rows are matched on the host (detr_targets) and fed as the step's labels; the loss falls.
TEST(EmitDetr, TinyDetrTrainsWithHostMatching) {
  NetSpec net = tiny_detr();
  ParamTable t = build_param_table(net);
  EmitOptions o = detr_opts();
  o.optim.kind = OptimizerKind::adam;
  Emitted fwd = emit_module(net, ModuleKind::eval, o);
  Emitted step = emit_module(net, ModuleKind::train_step, o);
  auto fexe =
      exec::make_backend("cpu")->load(std::shared_ptr<const hlo::Module>(std::move(fwd.module)));
  auto sexe =
      exec::make_backend("cpu")->load(std::shared_ptr<const hlo::Module>(std::move(step.module)));
  std::vector<Tensor> params = small_params(t, DType::kF32, 0.3, 3);
  const size_t np = params.size(), n_state = step.manifest.inputs.size() - 4;
  std::vector<Tensor> state = params;
  for (size_t i = np; i < n_state; ++i)
    state.emplace_back(DType::kF32, step.manifest.inputs[i].shape);
  Tensor x = random_tensor(hlo::Type::tensor(DType::kF32, {2, 3, 8, 8}), 4);
  std::vector<std::vector<DetrBox>> boxes = {{{1, 0.3, 0.4, 0.2, 0.3}},
                                             {{0, 0.6, 0.6, 0.3, 0.2}, {1, 0.25, 0.7, 0.3, 0.3}}};
  std::vector<double> losses;
  for (int s = 1; s <= 30; ++s) {
    std::vector<Tensor> fin(state.begin(), state.begin() + np);
    fin.push_back(x);
    Tensor labels = losses::detr_targets(fexe->run("main", fin).at(0), boxes);
    std::vector<Tensor> in = state;
    in.push_back(x);
    in.push_back(labels);
    in.push_back(Tensor::scalar_f32(1e-2f));
    in.push_back(Tensor::from<int>(DType::kI32, {}, {s}));
    std::vector<Tensor> out = sexe->run("main", in);
    state.assign(out.begin(), out.begin() + std::ptrdiff_t(n_state));
    losses.push_back(out.at(n_state).as_double(0));
    ASSERT_TRUE(std::isfinite(losses.back())) << "step " << s;
  }
  std::cout << "[ train ] tiny detr: loss " << losses.front() << " -> " << losses.back() << "\n";
  EXPECT_LT(losses.back(), 0.7 * losses.front());
}

}  // namespace
}  // namespace netspec::emit::testing
