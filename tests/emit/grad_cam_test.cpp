// The grad_cam module: logits and features equal the cam module's, and d.features — the gradient
// of logits[n, K[n]] w.r.t. the cam features — matches central finite differences in f64 of the
// head (the layers after the feature map, built as a net of their own with the same parameters)
// and, for a linear head, the closed form W[K, c] / (H·W).
#include "emit_test_util.h"
#include "layers/param_table.h"

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
  std::vector<Tensor> args = in.params;
  args.insert(args.end(), in.running.begin(), in.running.end());
  args.push_back(in.x);
  std::vector<Tensor> cam = run_main(*emit_module(net, ModuleKind::cam, o).module, args);
  args.push_back(classes({1, 2}));
  for (const char* be : {"ref", "cpu"}) {
    std::vector<Tensor> r = run_main(*g.module, args, be);
    EXPECT_LT(max_abs_diff(r[0], cam[1]), 1e-6) << be;
    EXPECT_LT(max_abs_diff(r[1], cam[0]), 1e-6) << be;
  }
}

// d.features against finite differences of the head net's logit K at the module's features.
void expect_fd(bool nonlinear) {
  NetSpec net = full_net(nonlinear), head = head_net(nonlinear);
  ParamTable t = build_param_table(net), ht = build_param_table(head);
  EmitOptions o;
  o.batch = 2;
  o.dtype = DType::kF64;
  Inputs in = inputs_for(t, DType::kF64, 2);
  std::vector<Tensor> args = in.params;
  args.insert(args.end(), in.running.begin(), in.running.end());
  args.push_back(in.x);
  const std::vector<int32_t> k = {2, 0};
  args.push_back(classes(k));
  std::vector<Tensor> r = run_main(*emit_module(net, ModuleKind::grad_cam, o).module, args);
  const Tensor& feat = r[1];
  const Tensor& grad = r[2];
  // The head's parameters are the full net's last ones (the dense layers).
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
    const int n = static_cast<int>(i / 36);
    Tensor fp = feat.clone(), fm = feat.clone();
    fp.data<double>()[i] += h;
    fm.data<double>()[i] -= h;
    const double fd = (logit(fp, n) - logit(fm, n)) / (2 * h);
    max_err = std::max(max_err, std::abs(fd - grad.as_double(i)));
    max_g = std::max(max_g, std::abs(fd));
    if (!nonlinear) {  // logit_K = Σ_c W[K, c] · mean_hw(f[c]) + b[K]
      const int c = static_cast<int>(i % 36) / 9;
      EXPECT_NEAR(grad.as_double(i), in.params[in.params.size() - 2].as_double(k[n] * 4 + c) / 9,
                  1e-14);
    }
  }
  EXPECT_GT(max_g, 1e-3);
  EXPECT_LT(max_err / max_g, 1e-7) << "abs " << max_err;
}

TEST(EmitGradCam, GradientMatchesFiniteDifferencesNonlinearHead) { expect_fd(true); }
TEST(EmitGradCam, GradientMatchesClosedFormLinearHead) { expect_fd(false); }

TEST(EmitGradCam, NetWithoutGlobalAvgPoolIsRefused) {
  NetBuilder nb("nogap");
  nb.input(2, 6, 6).add(ConvBn{2, 3, 3, 2}).add(Flatten{}).add(Dense{27, 3});
  try {
    emit_module(nb.build(), ModuleKind::grad_cam, EmitOptions{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("globalAvgPool"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace netspec::emit::testing
