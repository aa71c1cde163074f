// The grad_cam module: logits and features equal the cam module's, and d.features — the gradient
// of logits[n, K[n]] w.r.t. the cam features — matches central finite differences in f64 of the
// head (the layers after the feature map, built as a net of their own with the same parameters)
// and, for a linear head, the closed form W[K, c] / (H·W). Without a globalAvgPool the feature
// map is the last convolution's output (mnist-cnn's case), checked the same way.
#include "emit_test_util.h"
#include "layers/param_table.h"
#include "spec/zoo.h"

namespace netspec::emit::testing {
namespace {

NetSpec trunk_with(bool nonlinear_head, NetBuilder nb) {
  nb.add(GlobalAvgPool{}).add(Flatten{});
  if (nonlinear_head)
    nb.add(Dense{4, 5, Activation::swish}).add(Dense{5, 3});
  else
    nb.add(Dense{4, 3});
  return nb.build();
}

NetSpec full_net(bool nonlinear) {
  NetBuilder nb("gcnet");
  nb.input(2, 6, 6).add(ConvBn{2, 3, 3, 2}).add(ResidualBlock{3, 4, 1, 1});
  return trunk_with(nonlinear, nb);
}

NetSpec head_net(bool nonlinear) {  // input: the features [4, 3, 3]
  NetBuilder nb("gchead");
  nb.input(4, 3, 3);
  return trunk_with(nonlinear, nb);
}

struct Inputs {
  std::vector<Tensor> params, running;
  Tensor x;
  std::vector<Tensor> args() const {  // the module's inputs before the class
    std::vector<Tensor> a = params;
    a.insert(a.end(), running.begin(), running.end());
    a.push_back(x);
    return a;
  }
};

Inputs inputs_for(const ParamTable& t, DType dt, int64_t batch) {
  Inputs in;
  for (size_t i = 0; i < t.params.size(); ++i)
    in.params.push_back(random_tensor(hlo::Type::tensor(dt, t.params[i].shape), i + 1));
  for (size_t k = 0; k < t.bns.size(); ++k) {
    Shape c{t.bns[k].channels};
    in.running.push_back(random_tensor(hlo::Type::tensor(dt, c), 200 + k));
    in.running.push_back(random_tensor(hlo::Type::tensor(dt, c), 300 + k, true));
  }
  Shape xs = t.input;
  xs.insert(xs.begin(), batch);
  in.x = random_tensor(hlo::Type::tensor(dt, xs), 7);
  return in;
}

Tensor classes(std::vector<int32_t> k) {
  Tensor t(DType::kI32, {static_cast<int64_t>(k.size())});
  for (size_t i = 0; i < k.size(); ++i) t.data<int32_t>()[i] = k[i];
  return t;
}

TEST(EmitGradCam, ManifestAndOutputsMatchTheCamModule) {
  NetSpec net = full_net(true);
  ParamTable t = build_param_table(net);
  EmitOptions o;
  o.batch = 2;
  Emitted g = emit_module(net, ModuleKind::grad_cam, o);
  ASSERT_EQ(g.manifest.outputs.size(), 3u);
  EXPECT_EQ(g.manifest.outputs[0].name, "logits");
  EXPECT_EQ(g.manifest.outputs[1].name, "features");
  EXPECT_EQ(g.manifest.outputs[2].name, "d.features");
  EXPECT_EQ(g.manifest.outputs[2].shape, (Shape{2, 4, 3, 3}));
  EXPECT_EQ(g.manifest.inputs.back().name, "class");
  Inputs in = inputs_for(t, DType::kF32, 2);
  std::vector<Tensor> args = in.args();
  std::vector<Tensor> cam = run_main(*emit_module(net, ModuleKind::cam, o).module, args);
  args.push_back(classes({1, 2}));
  for (const char* be : {"ref", "cpu"}) {
    std::vector<Tensor> r = run_main(*g.module, args, be);
    EXPECT_LT(max_abs_diff(r[0], cam[1]), 1e-6) << be;
    EXPECT_LT(max_abs_diff(r[1], cam[0]), 1e-6) << be;
  }
}

// d.features against finite differences of the head net's logit K at the module's features.
void expect_fd(const NetSpec& net, const NetSpec& head, bool linear_gap_head) {
  ParamTable t = build_param_table(net), ht = build_param_table(head);
  EmitOptions o;
  o.batch = 2;
  o.dtype = DType::kF64;
  Inputs in = inputs_for(t, DType::kF64, 2);
  std::vector<Tensor> args = in.args();
  const std::vector<int32_t> k = {2, 0};
  args.push_back(classes(k));
  std::vector<Tensor> r = run_main(*emit_module(net, ModuleKind::grad_cam, o).module, args);
  const Tensor& feat = r[1];
  const Tensor& grad = r[2];
  Shape fs = ht.input;  // the features per sample: the head's input
  fs.insert(fs.begin(), 2);
  ASSERT_EQ(feat.shape(), fs);
  const int64_t per = feat.numel() / 2, hw = fs[2] * fs[3];
  // The head's parameters are the full net's last ones (the layers after the feature map).
  std::vector<Tensor> hp(in.params.end() - static_cast<long>(ht.params.size()), in.params.end());
  Emitted he = emit_module(head, ModuleKind::eval, o);
  auto logit = [&](const Tensor& f, int n) {
    std::vector<Tensor> a = hp;
    a.push_back(f);
    return run_main(*he.module, a)[0].as_double(n * 3 + k[n]);
  };
  Tensor f0 = feat;
  for (int n = 0; n < 2; ++n) EXPECT_NEAR(logit(f0, n), r[0].as_double(n * 3 + k[n]), 1e-12);
  const double h = 1e-6;
  double max_err = 0, max_g = 0;
  for (int64_t i = 0; i < feat.numel(); ++i) {
    const int n = static_cast<int>(i / per);
    Tensor fp = feat.clone(), fm = feat.clone();
    fp.data<double>()[i] += h;
    fm.data<double>()[i] -= h;
    const double fd = (logit(fp, n) - logit(fm, n)) / (2 * h);
    max_err = std::max(max_err, std::abs(fd - grad.as_double(i)));
    max_g = std::max(max_g, std::abs(fd));
    if (linear_gap_head) {  // logit_K = Σ_c W[K, c] · mean_hw(f[c]) + b[K]
      const int64_t c = (i % per) / hw;
      EXPECT_NEAR(
          grad.as_double(i),
          in.params[in.params.size() - 2].as_double(k[n] * fs[1] + c) / static_cast<double>(hw),
          1e-14);
    }
  }
  std::cout << fmt::format(
      "[ grad-cam fd ] {}: max |fd - vjp| / max |fd| = {:.2e} over {} values\n", net.name,
      max_err / max_g, feat.numel());
  EXPECT_GT(max_g, 1e-3);
  EXPECT_LT(max_err / max_g, 1e-7) << "abs " << max_err;
}

TEST(EmitGradCam, GradientMatchesFiniteDifferencesNonlinearHead) {
  expect_fd(full_net(true), head_net(true), false);
}
TEST(EmitGradCam, GradientMatchesClosedFormLinearHead) {
  expect_fd(full_net(false), head_net(false), true);
}

// No globalAvgPool (mnist-cnn's shape: convolutions, max pool, flatten, dense): the feature map
// is the last convolution's output, here [4, 4, 4], and the head is max pool + the dense layers.
NetSpec pool_head(NetBuilder nb) {
  nb.add(MaxPool{2, 2}).add(Flatten{}).add(Dense{16, 5, Activation::swish}).add(Dense{5, 3});
  return nb.build();
}

TEST(EmitGradCam, WithoutGlobalAvgPoolTheLastConvolutionMatchesFiniteDifferences) {
  NetBuilder nb("gcconv"), hb("gcconvhead");
  // The last convolution smooth (swish): ReLU's exact zeros would tie in the max pool, where
  // central differences see half a subgradient.
  nb.input(2, 8, 8)
      .add(ConvBn{2, 3, 3, 1})
      .add(Conv2d{3, 4, 3, 2, Padding::same, Activation::swish});
  hb.input(4, 4, 4);
  const NetSpec net = pool_head(nb), head = pool_head(hb);
  EXPECT_EQ(grad_cam_layer(build_param_table(net)), 2u);  // the max pool's input
  Emitted g = emit_module(net, ModuleKind::grad_cam, EmitOptions{});
  EXPECT_EQ(g.manifest.outputs[1].shape, (Shape{1, 4, 4, 4}));
  expect_fd(net, head, false);
}

TEST(EmitGradCam, TheFeatureMapIsTheLastGlobalAvgPoolInputElseTheLastConvolution) {
  EXPECT_EQ(grad_cam_layer(build_param_table(full_net(true))), 2u);  // the globalAvgPool
  EXPECT_EQ(grad_cam_layer(build_param_table(resolve_net("mnist-cnn").net)), 5u);  // 2nd pool
  NetBuilder mlp("mlp");
  mlp.input(1, 4, 4).add(Flatten{}).add(Dense{16, 3});
  EXPECT_EQ(grad_cam_layer(build_param_table(mlp.build())), 2u);  // none: layers.size()
}

// A per-pixel net (segmentation: logits [B, C, H, W] from a 1x1 head): the feature map is the
// head's input, and d.features is the gradient of Σ_p mask[n, p] · logits[n, K, p] — against
// finite differences in f64 and the closed form W[K, c] · mask[n, p] of the linear 1x1 head.
TEST(EmitGradCam, PerPixelNetExplainsTheMaskedClassLogits) {
  NetBuilder nb("gcseg"), hb("gcseghead");
  nb.input(2, 5, 5)
      .add(ConvBn{2, 3, 3, 1})
      .add(Conv2d{3, 4, 3, 1, Padding::same, Activation::swish})
      .add(Conv2d{4, 3, 1, 1, Padding::same, Activation::identity});
  hb.input(4, 5, 5).add(Conv2d{4, 3, 1, 1, Padding::same, Activation::identity});
  const NetSpec net = nb.build(), head = hb.build();
  ParamTable t = build_param_table(net), ht = build_param_table(head);
  EXPECT_EQ(grad_cam_layer(t), 2u);  // the head's input, not the net's own output
  EmitOptions o;
  o.batch = 2;
  o.dtype = DType::kF64;
  Emitted g = emit_module(net, ModuleKind::grad_cam, o);
  ASSERT_EQ(g.manifest.inputs.back().name, "mask");
  EXPECT_EQ(g.manifest.inputs.back().shape, (Shape{2, 5, 5}));
  Inputs in = inputs_for(t, DType::kF64, 2);
  std::vector<Tensor> args = in.args();
  const std::vector<int32_t> k = {2, 0};
  args.push_back(classes(k));
  Tensor mask(DType::kF64, {2, 5, 5});
  for (int64_t i = 0; i < mask.numel(); ++i) mask.data<double>()[i] = (i * 7 % 3 == 0) ? 1 : 0;
  args.push_back(mask);
  std::vector<Tensor> r = run_main(*g.module, args);
  const Tensor &feat = r[1], &grad = r[2];
  ASSERT_EQ(feat.shape(), (Shape{2, 4, 5, 5}));
  std::vector<Tensor> hp(in.params.end() - static_cast<long>(ht.params.size()), in.params.end());
  Emitted he = emit_module(head, ModuleKind::eval, o);
  const int64_t hw = 25, per = 4 * hw;
  auto target = [&](const Tensor& f, int n) {  // Σ_p mask[n, p] · logits[n, K, p]
    std::vector<Tensor> a = hp;
    a.push_back(f);
    Tensor out = run_main(*he.module, a)[0];
    double s = 0;
    for (int64_t p = 0; p < hw; ++p)
      s += mask.as_double(n * hw + p) * out.as_double((n * 3 + k[n]) * hw + p);
    return s;
  };
  const double h = 1e-6;
  double max_err = 0, max_g = 0;
  for (int64_t i = 0; i < feat.numel(); ++i) {
    const int n = static_cast<int>(i / per);
    const int64_t c = (i % per) / hw, p = i % hw;
    Tensor fp = feat.clone(), fm = feat.clone();
    fp.data<double>()[i] += h;
    fm.data<double>()[i] -= h;
    const double fd = (target(fp, n) - target(fm, n)) / (2 * h);
    max_err = std::max(max_err, std::abs(fd - grad.as_double(i)));
    max_g = std::max(max_g, std::abs(fd));
    const double w = hp[0].as_double(k[n] * 4 + c);  // W [3, 4, 1, 1]
    EXPECT_NEAR(grad.as_double(i), w * mask.as_double(n * hw + p), 1e-14) << i;
  }
  EXPECT_GT(max_g, 1e-3);
  EXPECT_LT(max_err / max_g, 1e-7) << "abs " << max_err;
}

TEST(EmitGradCam, NetWithoutAFeatureMapIsRefused) {
  NetBuilder nb("nofm");
  nb.input(2, 6, 6).add(Flatten{}).add(Dense{72, 3});
  try {
    emit_module(nb.build(), ModuleKind::grad_cam, EmitOptions{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("globalAvgPool"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace netspec::emit::testing
