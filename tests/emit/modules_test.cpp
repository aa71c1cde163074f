// Losses gradcheck; train-step updates against the optimizer formulas on the checked gradient;
// eval vs forward with BN fixed; train-step BN stats vs forward's; zoo modules print, parse back
// and run.
#include "autodiff/vjp.h"
#include "emit_test_util.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "spec/zoo.h"
#include "layers/param_table.h"

namespace netspec::emit::testing {
namespace {

TEST(EmitLosses, EveryLossPassesGradcheck) {
  NetSpec net = NetBuilder("lossnet").input(4).add(Dense{4, 3}).build();
  for (auto [kind, smooth, gamma] : std::vector<std::tuple<LossKind, double, double>>{
           {LossKind::classCE, 0.0, 0.0}, {LossKind::classCE, 0.1, 0.0},
           {LossKind::classCE, 0.0, 2.0}, {LossKind::softLabelCE, 0, 0},
           {LossKind::bce, 0, 0}, {LossKind::floatTargetMse, 0, 0}}) {
    SCOPED_TRACE(std::string(enum_name(kind)) + " smoothing " + std::to_string(smooth));
    EmitOptions o;
    o.batch = 3;
    o.loss = {kind, smooth, gamma};
    expect_loss_grads(net, o, "ref");
    expect_loss_grads(net, o, "cpu");
  }
}

TEST(EmitLosses, ClassCeValueByHand) {
  // One sample, logits (1, 2, 3) = the net's bias (weights 0), label 2, smoothing 0.1:
  // log p = z - log Σ e^z; loss = -Σ q log p, q = 0.9·onehot + 0.1/3.
  NetSpec net = NetBuilder("ce").input(1).add(Dense{1, 3}).build();
  EmitOptions o;
  o.loss = {LossKind::classCE, 0.1, 0};
  Emitted e = emit_module(net, ModuleKind::loss, o);
  Tensor w(DType::kF32, {3, 1});
  Tensor b = Tensor::from<double>(DType::kF32, {3}, {1, 2, 3});
  Tensor x = Tensor::from<double>(DType::kF32, {1, 1}, {0.5});
  Tensor y = Tensor::from<int>(DType::kI32, {1}, {2});
  double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  double want = 0;
  for (int j = 0; j < 3; ++j) want -= ((j == 2 ? 0.9 : 0.0) + 0.1 / 3) * (j + 1 - lse);
  EXPECT_NEAR(run_main(*e.module, {w, b, x, y})[0].as_double(0), want, 1e-6);
}

// lossKind focal takes γ from TrainConfig.focalGamma; classCE ignores focalGamma (default 2).
// One sample, logits (1, 2, 3), label 2, γ = 2: loss = -(1-p_2)^2 log p_2.
TEST(EmitLosses, FocalFromTrainConfigValueByHandAndGradcheck) {
  NetSpec net = NetBuilder("focal").input(1).add(Dense{1, 3}).build();
  TrainConfig tc;
  tc.lossKind = LossKind::focal;
  tc.focalGamma = 2.0;
  EmitOptions o = EmitOptions::from_train(tc, 1);
  EXPECT_EQ(o.loss.focal_gamma, 2.0);
  Tensor w(DType::kF32, {3, 1});
  Tensor b = Tensor::from<double>(DType::kF32, {3}, {1, 2, 3});
  Tensor x = Tensor::from<double>(DType::kF32, {1, 1}, {0.5});
  Tensor y = Tensor::from<int>(DType::kI32, {1}, {2});
  double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  double p2 = std::exp(3.0 - lse);
  Emitted e = emit_module(net, ModuleKind::loss, o);
  EXPECT_NEAR(run_main(*e.module, {w, b, x, y})[0].as_double(0), -(1 - p2) * (1 - p2) * std::log(p2),
              1e-6);
  tc.lossKind = LossKind::classCE;
  EXPECT_EQ(EmitOptions::from_train(tc, 1).loss.focal_gamma, 0.0);
  Emitted ce = emit_module(net, ModuleKind::loss, EmitOptions::from_train(tc, 1));
  EXPECT_NEAR(run_main(*ce.module, {w, b, x, y})[0].as_double(0), -std::log(p2), 1e-6);
  EmitOptions g = EmitOptions::from_train(TrainConfig{}, 3);
  g.loss = {LossKind::focal, 0.1, 1.5};
  expect_loss_grads(NetBuilder("lossnet").input(4).add(Dense{4, 3}).build(), g, "ref");
  expect_loss_grads(NetBuilder("lossnet").input(4).add(Dense{4, 3}).build(), g, "cpu");
}

TEST(EmitTrainStep, SgdMomentumNesterovClipDecayHeadMatchesFormula) {
  StepSetup s;
  EmitOptions o;
  o.batch = 4;
  o.optim.kind = OptimizerKind::sgd;
  o.optim.momentum = 0.9;
  o.optim.nesterov = true;
  o.optim.weight_decay = 0.1;
  o.optim.wd_exclude_norm_bias = true;
  o.optim.grad_clip_norm = 0.05;
  o.optim.head_lr_mult = 2;
  std::vector<Tensor> g = loss_grads(s.net, o, s.params, s.x, s.labels);
  double norm = 0;
  for (const auto& gi : g)
    for (int64_t j = 0; j < gi.numel(); ++j) norm += gi.as_double(j) * gi.as_double(j);
  norm = std::sqrt(norm);
  double coef = std::min(1.0, 0.05 / (norm + 1e-6));
  ASSERT_LT(coef, 1.0);  // the clip is active
  Emitted e = emit_module(s.net, ModuleKind::train_step, o);
  std::vector<Tensor> in = s.params;
  std::vector<Tensor> bufs;
  for (size_t i = 0; i < s.params.size(); ++i)
    bufs.push_back(random_tensor(hlo::Type::tensor(DType::kF32, s.params[i].shape()), 50 + i));
  in.insert(in.end(), bufs.begin(), bufs.end());
  in.push_back(s.x);
  in.push_back(s.labels);
  in.push_back(Tensor::scalar_f32(0.1f));
  in.push_back(Tensor::from<int>(DType::kI32, {}, {1}));
  std::vector<Tensor> out = run_main(*e.module, in);
  const size_t n = s.params.size();
  ASSERT_EQ(out.size(), 2 * n + 2);  // P', momentum, loss, correct
  for (size_t i = 0; i < n; ++i) {
    double d = s.t.params[i].decay ? 0.1 : 0.0;
    double lr = s.t.params[i].layer == 1 ? 0.2 : 0.1;
    for (int64_t j = 0; j < s.params[i].numel(); ++j) {
      double p = s.params[i].as_double(j);
      double gj = g[i].as_double(j) * coef + d * p;
      double buf = 0.9 * bufs[i].as_double(j) + gj;
      double want_p = p - lr * (gj + 0.9 * buf);
      EXPECT_NEAR(out[i].as_double(j), want_p, 1e-5) << s.t.params[i].name << " " << j;
      EXPECT_NEAR(out[n + i].as_double(j), buf, 1e-5);
    }
  }
}

TEST(EmitTrainStep, AdamWMatchesFormula) {
  StepSetup s;
  EmitOptions o;
  o.batch = 4;
  o.optim.kind = OptimizerKind::adam;
  o.optim.momentum = 0.9;
  o.optim.weight_decay = 0.01;
  std::vector<Tensor> g = loss_grads(s.net, o, s.params, s.x, s.labels);
  Emitted e = emit_module(s.net, ModuleKind::train_step, o);
  const size_t n = s.params.size();
  std::vector<Tensor> in = s.params, m, v;
  for (size_t i = 0; i < n; ++i) {
    m.push_back(random_tensor(hlo::Type::tensor(DType::kF32, s.params[i].shape()), 70 + i));
    v.push_back(random_tensor(hlo::Type::tensor(DType::kF32, s.params[i].shape()), 90 + i, true));
  }
  in.insert(in.end(), m.begin(), m.end());
  in.insert(in.end(), v.begin(), v.end());
  in.push_back(s.x);
  in.push_back(s.labels);
  in.push_back(Tensor::scalar_f32(0.01f));
  in.push_back(Tensor::from<int>(DType::kI32, {}, {3}));
  std::vector<Tensor> out = run_main(*e.module, in);
  ASSERT_EQ(out.size(), 3 * n + 2);  // P', m, v, loss, correct
  for (size_t i = 0; i < n; ++i) {
    double d = s.t.params[i].decay ? 0.01 : 0.0;
    for (int64_t j = 0; j < s.params[i].numel(); ++j) {
      double p = s.params[i].as_double(j), gj = g[i].as_double(j);
      double mj = 0.9 * m[i].as_double(j) + 0.1 * gj;
      double vj = 0.999 * v[i].as_double(j) + 0.001 * gj * gj;
      double mhat = mj / (1 - std::pow(0.9, 3)), vhat = vj / (1 - std::pow(0.999, 3));
      double want = p - 0.01 * d * p - 0.01 * mhat / (std::sqrt(vhat) + 1e-8);
      EXPECT_NEAR(out[i].as_double(j), want, 1e-6) << s.t.params[i].name << " " << j;
      EXPECT_NEAR(out[n + i].as_double(j), mj, 1e-6);
      EXPECT_NEAR(out[2 * n + i].as_double(j), vj, 1e-6);
    }
  }
}

NetSpec bn_net() {
  return NetBuilder("bnnet").input(2, 4, 4).add(ConvBn{2, 3, 3, 2})
      .add(ResidualBlock{3, 4, 1, 1}).add(GlobalAvgPool{}).add(Flatten{}).add(Dense{4, 3})
      .build();
}

TEST(EmitModules, EvalWithBatchStatsEqualsForwardAndTrainStepStatsEqualForward) {
  NetSpec net = bn_net();
  ParamTable t = build_param_table(net);
  EmitOptions o;
  o.batch = 3;
  std::vector<Tensor> params;
  for (size_t i = 0; i < t.params.size(); ++i)
    params.push_back(random_tensor(hlo::Type::tensor(DType::kF32, t.params[i].shape), i + 1));
  Tensor x = random_tensor(hlo::Type::tensor(DType::kF32, {3, 2, 4, 4}), 99);
  std::vector<Tensor> in = params;
  in.push_back(x);
  Emitted fwd = emit_module(net, ModuleKind::forward, o);
  std::vector<Tensor> f = run_main(*fwd.module, in);
  ASSERT_EQ(f.size(), 1 + 2 * t.bns.size());
  // eval with running stats := the forward's batch stats gives the forward's logits.
  std::vector<Tensor> ein = params;
  for (size_t k = 0; k < 2 * t.bns.size(); ++k) ein.push_back(f[1 + k]);
  ein.push_back(x);
  Emitted ev = emit_module(net, ModuleKind::eval, o);
  std::vector<Tensor> el = run_main(*ev.module, ein);
  EXPECT_LT(max_abs_diff(el[0], f[0]), 1e-5);
  // and with other running stats it differs.
  std::vector<Tensor> ein2 = ein;
  ein2[params.size()] = random_tensor(ein2[params.size()].dtype() == DType::kF32
                                          ? hlo::Type::tensor(DType::kF32, ein2[params.size()].shape())
                                          : hlo::Type::tensor(DType::kF32, {}), 5);
  EXPECT_GT(max_abs_diff(run_main(*ev.module, ein2)[0], f[0]), 1e-4);
  // the train step's batch stats equal the forward's (sgd, no state).
  EmitOptions so = o;
  so.optim.kind = OptimizerKind::sgd;
  Emitted ts = emit_module(net, ModuleKind::train_step, so);
  std::vector<Tensor> tin = params;
  tin.push_back(x);
  tin.push_back(Tensor::from<int>(DType::kI32, {3}, {0, 2, 1}));
  tin.push_back(Tensor::scalar_f32(0.1f));
  tin.push_back(Tensor::from<int>(DType::kI32, {}, {1}));
  std::vector<Tensor> tr = run_main(*ts.module, tin);
  ASSERT_EQ(tr.size(), params.size() + 1 + 2 * t.bns.size() + 1);
  for (size_t k = 0; k < 2 * t.bns.size(); ++k)
    EXPECT_LT(max_abs_diff(tr[params.size() + 1 + k], f[1 + k]), 1e-6) << k;
  // Last: the running-accuracy count Σ [argmax logits = label] of the forward's logits.
  const int32_t labels[3] = {0, 2, 1};
  int64_t right = 0;
  for (int64_t i = 0; i < 3; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < 3; ++j)
      if (f[0].as_double(i * 3 + j) > f[0].as_double(i * 3 + best)) best = j;
    right += best == labels[i];
  }
  EXPECT_EQ(tr.back().dtype(), DType::kI32);
  EXPECT_EQ(tr.back().as_double(0), static_cast<double>(right));
  EXPECT_EQ(ts.manifest.outputs.back().name, "correct");
  EXPECT_EQ(ts.manifest.outputs.back().role, "metric");
  // manifest roles and BN counts (first BN: batch 3 x 2x2 positions).
  EXPECT_EQ(ts.manifest.outputs[params.size()].role, "loss");
  EXPECT_EQ(ts.manifest.outputs[params.size() + 1].role, "bn_batch_stat");
  EXPECT_EQ(ts.manifest.outputs[params.size() + 1].count, 12);
  EXPECT_EQ(ts.manifest.outputs[params.size() + 1].name, "layers.0.bn.batch_mean");
}

TEST(EmitModules, ZooModulesPrintParseBackAndRun) {
  for (const char* name : {"linear", "mlp", "mnist-cnn"}) {
    NetSpec net = resolve_net(name).net;
    for (ModuleKind k : {ModuleKind::forward, ModuleKind::eval, ModuleKind::train_step,
                         ModuleKind::vjp, ModuleKind::optimizer}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(enum_name(k)));
      EmitOptions o;
      o.batch = 2;
      o.optim.kind = OptimizerKind::adam;
      o.optim.momentum = 0.9;
      Emitted e = emit_module(net, k, o);
      std::string text = hlo::print_module(*e.module);
      std::unique_ptr<hlo::Module> back = hlo::parse_module(text, name);
      EXPECT_EQ(hlo::print_module(*back), text);
      EXPECT_EQ(hlo::print_module(*hlo::parse_module(hlo::print_module(*e.module, {true}))), text);
      expect_module_runs(*back, e.manifest, "cpu");
    }
  }
}

}  // namespace
}  // namespace netspec::emit::testing
