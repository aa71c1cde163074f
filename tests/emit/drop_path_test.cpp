// Stochastic depth (dropPath) and classifier dropout as host-drawn keep-mask inputs: the train
// step with all-ones masks equals the no-drop train step bit for bit, a zero mask removes a
// block's branch for that sample, gradcheck (f64) through masked blocks, the per-block rates
// follow torchvision's / timm's ramps, and the forward / eval modules take no masks.
#include "emit_test_util.h"
#include "layers/param_table.h"

namespace netspec::emit::testing {
namespace {

constexpr Activation swish = Activation::swish;

NetSpec convnext(int blocks1 = 2, int blocks2 = 0) {
  NetBuilder nb("convnext");
  nb.input(2, 4, 4).ln_eps(1e-6).add(ConvNextStem{2, 4, 2}).add(ConvNextStage{4, blocks1});
  if (blocks2 > 0) nb.add(ConvNextStage{4, blocks2});
  return nb.add(ConvNextDownsample{4, 6}).add(Flatten{}).add(Dense{6, 3}).build();
}

EmitOptions opts(double drop_path, double dropout, int64_t batch = 3, DType dt = DType::kF32) {
  EmitOptions o;
  o.batch = batch;
  o.dtype = dt;
  o.drop_path = drop_path;
  o.dropout = dropout;
  return o;
}

// Train-step inputs by role; masks from `mask` (index among the mask inputs -> tensor).
std::vector<Tensor> step_inputs(const Manifest& m,
                                const std::function<Tensor(size_t, const TensorInfo&)>& mask) {
  std::vector<Tensor> in;
  size_t k = 0, mi = 0;
  for (const auto& ti : m.inputs) {
    hlo::Type t = hlo::Type::tensor(ti.dtype, ti.shape);
    if (ti.role == "mask")
      in.push_back(mask(mi++, ti));
    else if (ti.name == "lr")
      in.push_back(Tensor::scalar_f32(0.1f));
    else if (ti.name == "step")
      in.push_back(Tensor::from<int>(DType::kI32, {}, {1}));
    else
      in.push_back(random_tensor(t, 100 + k));
    ++k;
  }
  return in;
}

Tensor filled(const TensorInfo& ti, double v) {
  Tensor t(ti.dtype, ti.shape);
  for (int64_t e = 0; e < t.numel(); ++e) t.data<float>()[e] = static_cast<float>(v);
  return t;
}

std::vector<const TensorInfo*> masks_of(const Manifest& m) {
  std::vector<const TensorInfo*> v;
  for (const auto& ti : m.inputs)
    if (ti.role == "mask") v.push_back(&ti);
  return v;
}

TEST(DropPath, AllOnesMasksEqualNoDropTrainStepExactly) {
  NetSpec net = convnext();
  Emitted plain = emit_module(net, ModuleKind::train_step, opts(0, 0));
  Emitted drop = emit_module(net, ModuleKind::train_step, opts(0.3, 0.2));
  ASSERT_EQ(masks_of(plain.manifest).size(), 0u);
  ASSERT_EQ(masks_of(drop.manifest).size(), 3u);  // 2 blocks + dropout
  auto ones = [](size_t, const TensorInfo& ti) { return filled(ti, 1.0); };
  std::vector<Tensor> in = step_inputs(drop.manifest, ones);
  std::vector<Tensor> in_plain(in.begin(), in.end() - 3);
  for (const std::string be : {"ref", "cpu"}) {
    std::vector<Tensor> a = run_main(*plain.module, in_plain, be);
    std::vector<Tensor> b = run_main(*drop.module, in, be);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(max_abs_diff(a[i], b[i]), 0.0) << be << " " << drop.manifest.outputs[i].name;
  }
  // A real mask changes the step (the masks are wired in).
  std::vector<Tensor> in2 = in;
  in2[in2.size() - 3] = Tensor::from<float>(DType::kF32, {3}, {0.f, 1 / 0.7f, 1 / 0.7f});
  std::vector<Tensor> c = run_main(*drop.module, in2);
  std::vector<Tensor> a = run_main(*plain.module, in_plain);
  EXPECT_GT(max_abs_diff(a[0], c[0]), 1e-6);
}

// The stage alone: out = x + Σ branches, so a zero mask gives out[b] = x[b] exactly and a mask
// of 1/(1-p) scales the branch: out[b] - x[b] = 2·(out1[b] - x[b]) for p = 0.5.
TEST(DropPath, ZeroMaskRemovesTheBranchForThatSample) {
  NetSpec net = NetBuilder("stage").input(4, 3, 3).add(ConvNextStage{4, 1}).build();
  ParamTable t = build_param_table(net);
  hlo::Module m;
  std::vector<hlo::Type> types;
  for (const auto& p : t.params) types.push_back(hlo::Type::tensor(DType::kF32, p.shape));
  types.push_back(hlo::Type::tensor(DType::kF32, {3, 4, 3, 3}));
  types.push_back(hlo::Type::tensor(DType::kF32, {3}));
  hlo::Func* f = m.add_func("main", types);
  hlo::Builder b(f->body.get());
  const size_t np = t.params.size();
  std::vector<hlo::Value*> params;
  for (size_t i = 0; i < np; ++i) params.push_back(f->arg(i));
  layers::DropPath drop;
  drop.masks.push_back(f->arg(np + 1));
  ForwardOut fo = emit_forward_graph(b, net, t, params, f->arg(np), true, {}, &drop);
  b.func_return({fo.logits});
  ASSERT_EQ(drop.used, 1u);
  std::vector<Tensor> in;
  for (size_t i = 0; i < np; ++i) in.push_back(random_tensor(types[i], 7 + i));
  in.push_back(random_tensor(types[np], 3));
  const Tensor& x = in[np];
  in.push_back(Tensor::from<float>(DType::kF32, {3}, {1.f, 0.f, 2.f}));
  Tensor y = run_main(m, in)[0];
  in.back() = Tensor::from<float>(DType::kF32, {3}, {1.f, 1.f, 1.f});
  Tensor y1 = run_main(m, in)[0];
  const int64_t per = 4 * 3 * 3;
  double branch = 0;
  for (int64_t e = 0; e < per; ++e) {
    EXPECT_EQ(y.data<float>()[per + e], x.data<float>()[per + e]) << e;  // sample 1 dropped
    EXPECT_EQ(y.data<float>()[e], y1.data<float>()[e]);                  // sample 0 kept
    const double b1 = y1.as_double(2 * per + e) - x.as_double(2 * per + e);
    EXPECT_NEAR(y.as_double(2 * per + e) - x.as_double(2 * per + e), 2 * b1, 1e-5);
    branch = std::max(branch, std::abs(b1));
  }
  EXPECT_GT(branch, 1e-3);  // the branch is not trivially zero
}

TEST(DropPath, GradcheckThroughMaskedBlocks) {
  for (const NetSpec& net : {convnext(2), NetBuilder("mb")
                                              .input(4, 3, 3)
                                              .conv_bn_act(swish)
                                              .add(MbConv{4, 4, 2, 3, 1, 2, true, swish})
                                              .add(GlobalAvgPool{})
                                              .add(Flatten{})
                                              .add(Dense{4, 3})
                                              .build()}) {
    EmitOptions o = opts(0.4, 0.5, 3, DType::kF64);
    Emitted e = emit_module(net, ModuleKind::loss, o);
    autodiff::GradcheckOptions g;
    std::vector<const TensorInfo*> mk = masks_of(e.manifest);
    ASSERT_FALSE(mk.empty());
    for (size_t i = 0; i < e.manifest.inputs.size(); ++i) {
      const TensorInfo& ti = e.manifest.inputs[i];
      if (ti.role == "label") continue;
      if (ti.role == "mask") {  // a real keep mask: one sample dropped, the others scaled
        Tensor m(DType::kF64, ti.shape);
        for (int64_t j = 0; j < m.numel(); ++j)
          m.data<double>()[j] = (j % 3 == 1) ? 0.0 : 1 / (1 - ti.rate);
        g.fixed_inputs[i] = m;
      } else {
        g.wrt.push_back(i);
      }
    }
    autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
    EXPECT_TRUE(r.ok) << net.name << "\n" << r.str();
  }
}

TEST(DropPath, RatesFollowTheRamps) {
  const double p = 0.3;
  // ConvNeXt (torchvision CNBlock): p · i / (N - 1) over all 5 blocks of the net.
  Emitted c = emit_module(convnext(2, 3), ModuleKind::train_step, opts(p, 0));
  auto mc = masks_of(c.manifest);
  ASSERT_EQ(mc.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(mc[i]->rate, p * static_cast<double>(i) / 4.0);
    EXPECT_EQ(mc[i]->shape, Shape{3});
  }
  EXPECT_EQ(mc[0]->name, "layer1.block0.drop_path");
  EXPECT_EQ(mc[4]->name, "layer2.block2.drop_path");
  // EfficientNet (torchvision MBConv): p · i / N over every block, the non-residual first block
  // of a stage (4 -> 6 channels) counted but given no mask.
  NetSpec mb = NetBuilder("mb")
                   .input(4, 3, 3)
                   .conv_bn_act(swish)
                   .add(MbConv{4, 6, 1, 3, 1, 2, false, swish})
                   .add(FusedMbConv{6, 6, 1, 3, 1, 2, false})
                   .add(GlobalAvgPool{})
                   .add(Flatten{})
                   .add(Dense{6, 3})
                   .build();
  Emitted e = emit_module(mb, ModuleKind::loss, opts(p, 0));
  auto me = masks_of(e.manifest);
  ASSERT_EQ(me.size(), 3u);
  EXPECT_EQ(me[0]->name, "layer0.block1.drop_path");
  for (size_t i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(me[i]->rate, p * static_cast<double>(i + 1) / 4);
  // MobileNetV4 (timm UniversalInvertedResidual after an EdgeResidual): p · i / N over the
  // blocks of both kinds, a mask on each residual uib only (timm: drop_path(x) + shortcut).
  NetSpec v4 = NetBuilder("v4")
                   .input(4, 4, 4)
                   .add(FusedMbConv{4, 6, 2, 3, 1, 1, false})
                   .add(Uib{6, 6, 2, 1, 3, 3})
                   .add(Uib{6, 6, 2, 1, 0, 0})
                   .add(Uib{6, 8, 2, 2, 3, 0})
                   .add(GlobalAvgPool{})
                   .add(Flatten{})
                   .add(Dense{8, 3})
                   .build();
  Emitted e4 = emit_module(v4, ModuleKind::train_step, opts(p, 0));
  auto m4 = masks_of(e4.manifest);
  ASSERT_EQ(m4.size(), 2u);
  EXPECT_EQ(m4[0]->name, "layer1.block0.drop_path");
  EXPECT_DOUBLE_EQ(m4[0]->rate, p * 1 / 4);
  EXPECT_EQ(m4[1]->name, "layer2.block0.drop_path");
  EXPECT_DOUBLE_EQ(m4[1]->rate, p * 2 / 4);
  // ViT (timm linspace(0, p, depth)): two masks per block (attn, mlp) at the block's rate.
  NetSpec vit = NetBuilder("vit")
                    .input(2, 4, 4)
                    .add(PatchEmbed{2, 4, 2, 4})
                    .add(TransformerEncoder{4, 2, 6, 3})
                    .add(Dense{4, 3})
                    .build();
  Emitted v = emit_module(vit, ModuleKind::train_step, opts(p, 0.1));
  auto mv = masks_of(v.manifest);
  ASSERT_EQ(mv.size(), 7u);
  for (size_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(mv[i]->rate, p * static_cast<double>(i / 2) / 2);
  EXPECT_EQ(mv[1]->name, "layer1.block0.drop_path1");
  EXPECT_EQ(mv[6]->name, "dropout");
  EXPECT_EQ(mv[6]->shape, (Shape{3, 4}));
  EXPECT_DOUBLE_EQ(mv[6]->rate, 0.1);
  EXPECT_NE(v.manifest.to_json().find("\"role\": \"mask\""), std::string::npos);
  EXPECT_NE(v.manifest.to_json().find("\"rate\": 0.1"), std::string::npos);
  // The inference modules never take masks.
  for (ModuleKind k : {ModuleKind::forward, ModuleKind::eval, ModuleKind::vjp})
    EXPECT_TRUE(masks_of(emit_module(vit, k, opts(p, 0.1)).manifest).empty()) << enum_name(k);
}

TEST(DropPath, RefusesNetsWithoutDropPathBlocks) {
  NetSpec mlp = NetBuilder("mlp").input(3).add(Dense{3, 4, Activation::relu}).build();
  EXPECT_THROW(emit_module(mlp, ModuleKind::train_step, opts(0.2, 0)), Error);
  EXPECT_NO_THROW(emit_module(mlp, ModuleKind::train_step, opts(0, 0.2)));
}

}  // namespace
}  // namespace netspec::emit::testing
