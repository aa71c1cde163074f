// Prior-bias init: detPriorPi puts every objectness bias of a detector's pred conv at
// -ln((1-π)/π) and drops the first step's objectness loss accordingly; headPriorBias puts a
// classifier's (or a detector's class channels') biases at ln(class frequency), and the first
// step's CE on zero inputs becomes the label entropy.
#include "tasks/prior_bias.h"

#include <gtest/gtest.h>

#include <cmath>

#include "emit/det_probes.h"
#include "emit/emit.h"
#include "exec/backend.h"
#include "hlo/passes.h"
#include "layers/param_table.h"
#include "train/trainer.h"
#include "train_test_util.h"

namespace netspec::train {
namespace {

double first_loss(const NetSpec& net, const ParamTable& t, const emit::EmitOptions& o,
                  const std::vector<Tensor>& params, const Tensor& x, const Tensor& y) {
  emit::Emitted e = emit::emit_module(net, t, ModuleKind::loss, o);
  auto exe =
      exec::make_backend("cpu")->load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
  std::vector<Tensor> in = params;
  in.push_back(x);
  in.push_back(y);
  return exe->run("main", in).at(0).as_double(0);
}

TEST(PriorBias, DetPriorPiSetsObjectnessBiasesAndTheFirstLoss) {
  emit::DetProbe p;
  p.grid = 8;
  p.anchors = 2;
  p.classes = 2;
  NetSpec net = emit::det_probe_net(p, 1);
  ParamTable t = build_param_table(net);
  TrainConfig c;
  c.lossKind = LossKind::yoloAnchor;
  c.detPriorPi = 0.01;
  std::vector<Tensor> zero = init_params(t, InitKind::he, 1);
  std::vector<Tensor> prior = init_params(t, InitKind::he, 1);
  data::Dataset none;
  const std::string said = apply_prior_bias(net, t, c, none, prior);
  EXPECT_NE(said.find("detPriorPi 0.01"), std::string::npos) << said;
  size_t k = 0;
  while (t.params[k].name != "layers.3.pred.bias") ++k;
  const float want = float(-std::log(99.0));
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t ch = 0; ch < 7; ++ch)
      EXPECT_EQ(prior[k].data<float>()[a * 7 + ch], ch == 4 ? want : 0.0f) << a << " " << ch;
  // First step, no objects: the loss is the mean objectness BCE, ~softplus(-4.6) with the prior
  // against >= ln 2 on average for the zero-bias head.
  emit::EmitOptions o;
  o.batch = 2;
  o.loss = losses::for_net(emit::det_probe_loss(p, 3, 2), net);
  o.loss.obj_focal_gamma = 0;  // plain BCE: the first loss reads the bias directly
  const Tensor x = test_util::uniform_noise({2, 2, 16, 16}, 3);
  const Tensor y(DType::kF32, {2, 2 * (64 + 16 + 4), 6});  // all rows negative
  const double l0 = first_loss(net, t, o, zero, x, y), l1 = first_loss(net, t, o, prior, x, y);
  EXPECT_GT(l0, 0.5);
  EXPECT_LT(l1, 0.05);
  EXPECT_GT(l1, std::log1p(0.01 / 0.99) * 0.5);  // near softplus(-4.595) = 0.01005
  // headPriorBias on the detector: class channels at ln(prior) of the positive rows' classes.
  c.headPriorBias = true;
  Tensor rows(DType::kF32, {1, 4, 6});
  for (int r = 0; r < 4; ++r) rows.data<float>()[r * 6] = 1, rows.data<float>()[r * 6 + 5] = r == 0;
  data::Dataset det_train(Tensor(DType::kF32, {1, 2, 16, 16}), rows);
  apply_prior_bias(net, t, c, det_train, prior);
  EXPECT_FLOAT_EQ(prior[k].data<float>()[5], float(std::log(0.75)));  // class 0: 3 of 4
  EXPECT_FLOAT_EQ(prior[k].data<float>()[7 + 6], float(std::log(0.25)));
}

TEST(PriorBias, HeadPriorBiasMakesTheFirstLossTheLabelEntropy) {
  NetSpec net = NetBuilder("prior_mlp").input(1, 1, 4).add(Flatten{}).add(Dense{4, 3}).build();
  ParamTable t = build_param_table(net);
  TrainConfig c;
  c.headPriorBias = true;
  Tensor labels(DType::kI32, {10});
  for (int i = 0; i < 10; ++i) labels.data<int32_t>()[i] = i < 8 ? 0 : i - 7;  // .8 .1 .1
  data::Dataset train(Tensor(DType::kF32, {10, 1, 1, 4}), labels);
  std::vector<Tensor> params = init_params(t, InitKind::he, 0);
  std::vector<Tensor> plain = init_params(t, InitKind::he, 0);
  for (float& v : std::span(plain[1].data<float>(), 3)) v = 0;  // a zero-bias head
  EXPECT_NE(apply_prior_bias(net, t, c, train, params).find("layers.1.bias"), std::string::npos);
  emit::EmitOptions o;
  o.batch = 10;
  const Tensor x(DType::kF32, {10, 1, 1, 4});  // zero inputs: logits = the bias
  const double h = -(0.8 * std::log(0.8) + 0.2 * std::log(0.1));
  EXPECT_NEAR(first_loss(net, t, o, params, x, labels), h, 1e-6);
  EXPECT_NEAR(first_loss(net, t, o, plain, x, labels), std::log(3.0), 1e-6);
  c.lossKind = LossKind::bce;
  EXPECT_THROW(apply_prior_bias(net, t, c, train, params), Error);
}

}  // namespace
}  // namespace netspec::train
