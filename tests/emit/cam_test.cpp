// The cam module: its features are the activation entering the last globalAvgPool (the eval
// forward of the net cut before that pool) and its logits are the eval module's; the logits are
// also recomputed by hand from the features (spatial mean, then the dense head).
#include "emit_test_util.h"
#include "layers/param_table.h"

namespace netspec::emit::testing {
namespace {

NetSpec cam_net(bool head) {
  NetBuilder nb("camnet");
  nb.input(2, 6, 6).add(ConvBn{2, 3, 3, 2}).add(ResidualBlock{3, 4, 1, 1});
  if (head) nb.add(GlobalAvgPool{}).add(Flatten{}).add(Dense{4, 3});
  return nb.build();
}

TEST(EmitCam, FeaturesAreThePreGapActivationAndLogitsEqualEval) {
  NetSpec net = cam_net(true), trunk = cam_net(false);
  ParamTable t = build_param_table(net), tt = build_param_table(trunk);
  ASSERT_EQ(t.bns.size(), tt.bns.size());
  ASSERT_EQ(t.params.size(), tt.params.size() + 2);  // + the head's weight and bias
  EmitOptions o;
  o.batch = 2;
  std::vector<Tensor> params, running;
  for (size_t i = 0; i < t.params.size(); ++i)
    params.push_back(random_tensor(hlo::Type::tensor(DType::kF32, t.params[i].shape), i + 1));
  for (size_t k = 0; k < t.bns.size(); ++k) {
    Shape c{t.bns[k].channels};
    running.push_back(random_tensor(hlo::Type::tensor(DType::kF32, c), 200 + k));
    running.push_back(random_tensor(hlo::Type::tensor(DType::kF32, c), 300 + k, true));
  }
  Tensor x = random_tensor(hlo::Type::tensor(DType::kF32, {2, 2, 6, 6}), 7);
  auto inputs = [&](size_t nparams) {
    std::vector<Tensor> in(params.begin(), params.begin() + nparams);
    in.insert(in.end(), running.begin(), running.end());
    in.push_back(x);
    return in;
  };
  Emitted cam = emit_module(net, ModuleKind::cam, o);
  ASSERT_EQ(cam.manifest.outputs.size(), 2u);
  EXPECT_EQ(cam.manifest.outputs[0].name, "features");
  EXPECT_EQ(cam.manifest.outputs[0].shape, (Shape{2, 4, 3, 3}));
  EXPECT_EQ(cam.manifest.outputs[1].name, "logits");
  std::vector<Tensor> c = run_main(*cam.module, inputs(params.size()));
  std::vector<Tensor> trunk_out =
      run_main(*emit_module(trunk, ModuleKind::eval, o).module, inputs(tt.params.size()));
  std::vector<Tensor> eval_out =
      run_main(*emit_module(net, ModuleKind::eval, o).module, inputs(params.size()));
  EXPECT_LT(max_abs_diff(c[0], trunk_out[0]), 1e-6);
  EXPECT_LT(max_abs_diff(c[1], eval_out[0]), 1e-6);
  // logits[n][o] = Σ_c W[o][c] · mean_hw(features[n][c]) + b[o]
  const Tensor& w = params[params.size() - 2];
  const Tensor& b = params[params.size() - 1];
  for (int n = 0; n < 2; ++n)
    for (int oc = 0; oc < 3; ++oc) {
      double want = b.as_double(oc);
      for (int ch = 0; ch < 4; ++ch) {
        double mean = 0;
        for (int j = 0; j < 9; ++j) mean += c[0].as_double((n * 4 + ch) * 9 + j) / 9;
        want += w.as_double(oc * 4 + ch) * mean;
      }
      EXPECT_NEAR(c[1].as_double(n * 3 + oc), want, 1e-5) << n << " " << oc;
    }
  // A running stat feeds the features: changing it changes them (eval mode, not batch stats).
  std::vector<Tensor> in2 = inputs(params.size());
  in2[params.size()] = random_tensor(hlo::Type::tensor(DType::kF32, {3}), 999);
  EXPECT_GT(max_abs_diff(run_main(*cam.module, in2)[0], c[0]), 1e-4);
}

TEST(EmitCam, NetWithoutGlobalAvgPoolIsRefused) {
  EmitOptions o;
  try {
    emit_module(cam_net(false), ModuleKind::cam, o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("globalAvgPool"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace netspec::emit::testing
