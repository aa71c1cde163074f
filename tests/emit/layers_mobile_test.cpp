// The mobile block kinds (invertedResidual, mbConv, mbConvV3, fusedMbConv, uib): a tiny net with
// each passes gradcheck of its train-step loss (f64) on ref and cpu, covering skip / no skip,
// expand == 1 (no expand conv), SE on / off, stride 2 and every uib family. The mobile zoo nets
// (and resnet18-cifar) emit every module, and four SGD steps on cpu on one batch reach a loss below
// the first.
#include <algorithm>

#include "emit_test_util.h"
#include "hlo/text/printer.h"
#include "layers/param_table.h"
#include "spec/zoo.h"

namespace netspec::emit::testing {
namespace {

// Body on a c x h x h input (torchvision padding, the given convBnAct), then globalAvgPool +
// flatten + dense(oc -> 3).
NetSpec pooled(const char* name, int c, int h, Layer body, int oc,
               Activation act = Activation::relu6) {
  return NetBuilder(name)
      .input(c, h, h)
      .pad_style(PadStyle::symmetric)
      .conv_bn_act(act)
      .add(std::move(body))
      .add(GlobalAvgPool{})
      .add(Flatten{})
      .add(Dense{oc, 3})
      .build();
}

std::vector<NetSpec> mobile_cases() {
  const Activation relu = Activation::relu, swish = Activation::swish;
  const Activation hswish = Activation::hSwish;
  std::vector<NetSpec> v;
  // invertedResidual{ic, oc, expand, stride, nBlocks}
  v.push_back(pooled("ir_skip", 4, 3, InvertedResidual{4, 4, 2, 1, 1}, 4));
  v.push_back(pooled("ir_e1_s2", 4, 5, InvertedResidual{4, 6, 1, 2, 2}, 6));
  // mbConv{ic, oc, expand, k, stride, nBlocks, useSE, act}: ic 8 expand 1 -> no expand conv
  v.push_back(pooled("mb_e1_se_skip", 8, 3, MbConv{8, 8, 1, 3, 1, 1, true, swish}, 8, swish));
  v.push_back(pooled("mb_s2_k5_nose", 2, 5, MbConv{2, 3, 2, 5, 2, 2, false, swish}, 3, swish));
  // mbConvV3{ic, oc, expandCh, k, stride, useSE, act}
  v.push_back(pooled("v3_se_hswish_skip", 4, 3, MbConvV3{4, 4, 8, 3, 1, true, hswish}, 4, hswish));
  v.push_back(pooled("v3_noexp_s2_k5", 4, 5, MbConvV3{4, 6, 4, 5, 2, false, relu}, 6, hswish));
  v.push_back(pooled("v3_noexp_se_s2", 4, 4, MbConvV3{4, 4, 4, 3, 2, true, relu}, 4, hswish));
  // fusedMbConv{ic, oc, expand, k, stride, nBlocks, useSE}: ic 8 expand 1 -> one kxk conv
  v.push_back(pooled("fused_e1_skip", 8, 3, FusedMbConv{8, 8, 1, 3, 1, 2, false}, 8, swish));
  v.push_back(pooled("fused_e4_s2_se", 2, 4, FusedMbConv{2, 3, 4, 3, 2, 2, true}, 3, swish));
  // uib{ic, oc, expand, stride, preDWk, postDWk}: ExtraDW, ConvNeXt-like, FFN, IB
  v.push_back(pooled("uib_extradw_s2", 2, 5, Uib{2, 3, 4, 2, 3, 5}, 3, relu));
  v.push_back(pooled("uib_cnx_skip", 4, 3, Uib{4, 4, 2, 1, 3, 0}, 4, relu));
  v.push_back(pooled("uib_cnx_s2", 4, 4, Uib{4, 4, 2, 2, 3, 0}, 4, relu));
  v.push_back(pooled("uib_ffn_skip", 4, 2, Uib{4, 4, 2, 1, 0, 0}, 4, relu));
  v.push_back(pooled("uib_ib_s2", 4, 4, Uib{4, 6, 2, 2, 0, 3}, 6, relu));
  return v;
}

// A uib with a pre-depthwise conv: dw_start's BN has no activation and feeds the 1x1 pw_exp
// conv and its BN, so a per-channel shift (dw_start's β) cancels exactly: its gradient is 0 in
// exact arithmetic (in timm too) and a relative check of rounding noise is meaningless. That
// β (param 2: dw_start conv, γ, β come first) is checked in absolute terms instead:
// |vjp - finite difference| < 1e-9 (the other gradients here are O(0.01-1)).
bool beta_has_zero_grad(const NetSpec& net) {
  return std::holds_alternative<Uib>(net.layers[0]) && std::get<Uib>(net.layers[0]).preDWk > 0;
}

void check_case(const NetSpec& net, const std::string& backend) {
  if (!beta_has_zero_grad(net)) return expect_loss_grads(net, opts(), backend);
  Emitted e = emit_module(net, ModuleKind::loss, opts());
  const size_t n = build_param_table(net).params.size();
  autodiff::GradcheckOptions g;
  g.backend = backend;
  g.zero_abs = 1e-9;
  for (size_t i = 0; i <= n; ++i) g.wrt.push_back(i);  // params and x; not the labels
  autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
  ASSERT_EQ(r.inputs.size(), n + 1);
  EXPECT_TRUE(r.ok) << net.name << " on " << backend << "\n" << r.str();
  for (const auto& in : r.inputs) {  // only that β may pass by the absolute bound
    if (in.index != 2) {
      EXPECT_LE(in.max_rel, r.tolerance) << "input " << in.index << "\n" << r.str();
    }
  }
}

TEST(EmitMobile, EveryCasePassesGradcheckOnRef) {
  for (const NetSpec& net : mobile_cases()) {
    SCOPED_TRACE(net.name);
    check_case(net, "ref");
  }
}

TEST(EmitMobile, EveryCasePassesGradcheckOnCpu) {
  for (const NetSpec& net : mobile_cases()) {
    SCOPED_TRACE(net.name);
    check_case(net, "cpu");
  }
}

// The parameter slices the emitters consume match the ParamTable (finish() would throw) and the
// expand conv is absent exactly when the accounting says so.
TEST(EmitMobile, ExpandConvSkippedWhenWidthKept) {
  ParamTable with = build_param_table(pooled("a", 8, 3, MbConv{8, 8, 2, 3}, 8));
  ParamTable without = build_param_table(pooled("b", 8, 3, MbConv{8, 8, 1, 3}, 8));
  auto has = [](const ParamTable& t, const std::string& leaf) {
    for (const auto& p : t.params)
      if (p.name.find(leaf) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has(with, ".expand.conv.weight"));
  EXPECT_FALSE(has(without, ".expand.conv.weight"));
  // SE squeeze: max(1, 8 / 4) = 2 of the block input width, not of the expanded 16.
  int found = 0;
  for (const auto& p : with.params) {
    if (p.name.find("se.fc1.weight") == std::string::npos) continue;
    EXPECT_EQ(p.shape, (Shape{2, 16, 1, 1}));
    ++found;
  }
  EXPECT_EQ(found, 1);
}

// He-uniform conv/linear weights (fan-in), BN γ = 1 and β = 0, biases 0.
std::vector<Tensor> he_params(const ParamTable& t, uint64_t seed) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < t.params.size(); ++i) {
    const ParamDesc& p = t.params[i];
    Tensor w(DType::kF32, p.shape);
    if (p.shape.size() >= 2) {
      w = random_tensor(hlo::Type::tensor(DType::kF32, p.shape), seed + i);
      double fan_in = static_cast<double>(p.numel() / p.shape[0]);
      float s = static_cast<float>(std::sqrt(6.0 / fan_in));
      for (float& v : w.span<float>()) v *= s;
    } else if (p.name.size() > 7 && p.name.rfind(".weight") == p.name.size() - 7) {
      for (float& v : w.span<float>()) v = 1;
    }
    out.push_back(std::move(w));
  }
  return out;
}

// Every module of the zoo net emits and prints; four SGD steps (lr 0.005) on cpu (10 classes) on
// one repeated batch lower the loss. Inputs are small (32x32; efficientnet-v2-s 64x64), so the
// ImageNet nets end at 1x1 maps where each BN sees only the batch: with 2 values a BN outputs
// about ±1 and the loss surface is too sharp for any fixed lr (mobilenet-v3-small rose at lr
// 1e-5 and fell at 1e-3 there). These take batch 8 (4 where the last maps are 2x2 or larger).
void expect_zoo_net_trains(const std::string& name, int size = 32, int64_t batch = 4) {
  SCOPED_TRACE(name);
  SpecFile sf = resolve_net(name);
  NetSpec net = sf.net;
  net.inputHeight = net.inputWidth = size;
  set_num_classes(net, 10);
  TrainConfig tc = sf.train.value_or(TrainConfig{});
  tc.lossKind = LossKind::classCE;
  tc.optimizer = OptimizerKind::sgd;
  tc.learningRate = 0.005;
  tc.weightDecay = 0;
  EmitOptions o = EmitOptions::from_train(tc, batch);
  for (ModuleKind k : {ModuleKind::forward, ModuleKind::eval, ModuleKind::cam, ModuleKind::loss,
                       ModuleKind::vjp, ModuleKind::optimizer}) {
    Emitted e = emit_module(net, k, o);
    EXPECT_FALSE(e.manifest.outputs.empty()) << enum_name(k);
    std::string text = hlo::print_module(*e.module);  // the optimizer module has no conv
    if (k != ModuleKind::optimizer) {
      EXPECT_NE(text.find("stablehlo.convolution"), std::string::npos) << enum_name(k);
    }
  }
  Tensor x = random_tensor(hlo::Type::tensor(DType::kF32, {batch, 3, size, size}), 7);
  Tensor labels(DType::kI32, {batch});
  for (int64_t i = 0; i < batch; ++i)
    labels.data<int32_t>()[i] = static_cast<int32_t>(i * 7 + 1) % 10;
  // Several steps on the repeated batch: one step of a deep net with batch-statistics BN over a
  // few values per channel can overshoot from some inits: some later step must be lower.
  std::vector<double> losses =
      train_step_losses(net, o, he_params(build_param_table(net), 17), x, labels, tc.learningRate);
  ASSERT_EQ(losses.size(), 4u);
  EXPECT_LT(*std::min_element(losses.begin() + 1, losses.end()), losses[0]);
}

TEST(EmitMobile, ZooMobileNetV2Trains) {
  expect_zoo_net_trains("mobilenet-v2", 32, 8);
  expect_zoo_net_trains("mobilenet-v2-cifar");
}
TEST(EmitMobile, ZooMobileNetV3Trains) {
  expect_zoo_net_trains("mobilenet-v3-large", 32, 8);
  expect_zoo_net_trains("mobilenet-v3-small", 32, 8);
}
TEST(EmitMobile, ZooEfficientNetTrains) {
  expect_zoo_net_trains("efficientnet-b0", 32, 8);
  // 15 blocks of its last stage would run at 1x1 from a 32x32 input: 64x64 keeps them at 2x2.
  expect_zoo_net_trains("efficientnet-v2-s", 64, 4);
}
TEST(EmitMobile, ZooMobileNetV4Trains) { expect_zoo_net_trains("mobilenet-v4-conv-medium", 32, 8); }
TEST(EmitMobile, ZooResnet18CifarTrains) { expect_zoo_net_trains("resnet18-cifar"); }

}  // namespace
}  // namespace netspec::emit::testing
