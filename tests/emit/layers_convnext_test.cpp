// The modern-ConvNet kinds (fireModule, shuffleBlock, shuffleV2Block, denseBlock,
// transitionLayer, inceptionModule, darknetBlock, cspBlock, convNextStem/Stage/Downsample):
// a tiny net with each passes gradcheck of its train-step loss (f64) on ref and cpu, including
// the stride-2 / concat units; channel shuffle and count_include_pad pooling against hand values.
#include <algorithm>
#include <functional>

#include "emit_test_util.h"
#include "hlo/builder.h"
#include "hlo/text/printer.h"
#include "layers/convnet_blocks.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"

namespace netspec::emit::testing {
namespace {

// Body on a c x h x h input, then globalAvgPool + flatten + dense(oc -> 3).
NetSpec pooled(const char* name, int c, int h, Layer body, int oc, PadStyle ps = PadStyle::xlaSame,
               Activation act = Activation::relu) {
  return NetBuilder(name)
      .input(c, h, h)
      .pad_style(ps)
      .conv_bn_act(act)
      .add(std::move(body))
      .add(GlobalAvgPool{})
      .add(Flatten{})
      .add(Dense{oc, 3})
      .build();
}

std::vector<NetSpec> cases() {
  std::vector<NetSpec> v;
  v.push_back(pooled("fire", 2, 4, FireModule{2, 2, 2, 3}, 5));
  // groups 2: ic 2, oc 8 (bottleneck 2); unit 0 stride 2 + avg-pool concat, unit 1 adds.
  v.push_back(pooled("shuffle_v1", 2, 4, ShuffleBlock{2, 8, 2, 2}, 8, PadStyle::symmetric));
  v.push_back(pooled("shuffle_v1_odd", 2, 5, ShuffleBlock{2, 8, 2, 1}, 8));
  // unit 0 both branches (stride 2), unit 1 channel split.
  v.push_back(pooled("shuffle_v2", 2, 4, ShuffleV2Block{2, 4, 2}, 4, PadStyle::symmetric));
  v.push_back(NetBuilder("dense_transition")
                  .input(2, 4, 4)
                  .add(DenseBlock{2, 2, 2})
                  .add(TransitionLayer{6, 3})
                  .add(Flatten{})
                  .add(Dense{12, 3})
                  .build());
  v.push_back(NetBuilder("transition_odd")
                  .input(2, 5, 5)
                  .add(TransitionLayer{2, 2})
                  .add(Flatten{})
                  .add(Dense{8, 3})
                  .build());
  v.push_back(pooled("inception", 3, 3, InceptionModule{3, 2, 2, 2, 1, 2, 1}, 7));
  v.push_back(pooled("darknet", 4, 3, DarknetBlock{4, 2}, 4, PadStyle::xlaSame, Activation::swish));
  v.push_back(pooled("csp", 3, 3, CspBlock{3, 4, 2}, 4, PadStyle::xlaSame, Activation::swish));
  v.push_back(NetBuilder("convnext")
                  .input(2, 4, 4)
                  .ln_eps(1e-6)
                  .add(ConvNextStem{2, 4, 2})
                  .add(ConvNextStage{4, 2})
                  .add(ConvNextDownsample{4, 6})
                  .add(Flatten{})
                  .add(Dense{6, 3})
                  .build());
  v.push_back(NetBuilder("convnext_bn")
                  .input(2, 4, 4)
                  .add(ConvNextStem{2, 4, 2})
                  .add(ConvNextStage{4, 1, Norm::bn, Activation::geluTanh})
                  .add(ConvNextDownsample{4, 6, Norm::bn})
                  .add(Flatten{})
                  .add(Dense{6, 3})
                  .build());
  return v;
}

// Gradcheck with relative tolerance 1e-6, except that an input whose VJP and finite differences
// agree to 1e-9 absolute also passes: these blocks have parameters with an exactly zero gradient
// (a conv bias or BN beta followed by conv + BN, a 1x1 group conv with one input channel per
// group feeding BN, which is scale invariant), where the relative error of two ~1e-11 numbers
// is noise. Real gradients here are >= 1e-4, so a wrong or dropped one still fails.
void expect_grads(const NetSpec& net, const std::string& backend) {
  Emitted e = emit_module(net, ModuleKind::loss, opts());
  autodiff::GradcheckOptions g;
  g.backend = backend;
  g.zero_abs = 1e-9;
  autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
  ASSERT_FALSE(r.inputs.empty());
  EXPECT_TRUE(r.ok) << net.name << " on " << backend << "\n" << r.str();
  int zero = 0;  // inputs that passed only by the absolute bound
  for (const auto& in : r.inputs) zero += in.max_rel > r.tolerance;
  EXPECT_LT(zero, int(r.inputs.size()) / 2) << net.name << ": most gradients vanish";
}

TEST(EmitConvNetLayers, EveryKindPassesGradcheckOnRef) {
  for (const NetSpec& net : cases()) {
    SCOPED_TRACE(net.name);
    expect_grads(net, "ref");
  }
}

TEST(EmitConvNetLayers, EveryKindPassesGradcheckOnCpu) {
  for (const NetSpec& net : cases()) {
    SCOPED_TRACE(net.name);
    expect_grads(net, "cpu");
  }
}

// Runs f(b, x) on a [1, C, H, W] f64 input holding 0, 1, 2, ... in row-major order.
Tensor run_on_iota(Shape s, const std::function<hlo::Value*(hlo::Builder&, hlo::Value*)>& f) {
  hlo::Module m;
  hlo::Func* fn = m.add_func("main", {hlo::Type::tensor(DType::kF64, s)});
  hlo::Builder b(fn->body.get());
  b.func_return({f(b, fn->arg(0))});
  Tensor x(DType::kF64, s);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<double>()[i] = double(i);
  return run_main(m, {x})[0];
}

TEST(EmitConvNetLayers, ChannelShuffleInterleavesGroups) {
  // 6 channels (1x1 each), groups 2: [0 1 2 | 3 4 5] -> [0 3 1 4 2 5]; groups 3 -> [0 2 4 1 3 5].
  Tensor y2 = run_on_iota({1, 6, 1, 1}, [](hlo::Builder& b, hlo::Value* x) {
    return layers::channel_shuffle(b, x, 2);
  });
  Tensor y3 = run_on_iota({1, 6, 1, 1}, [](hlo::Builder& b, hlo::Value* x) {
    return layers::channel_shuffle(b, x, 3);
  });
  std::vector<double> want2 = {0, 3, 1, 4, 2, 5}, want3 = {0, 2, 4, 1, 3, 5};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(y2.as_double(i), want2[i]) << i;
    EXPECT_EQ(y3.as_double(i), want3[i]) << i;
  }
}

TEST(EmitConvNetLayers, AvgPoolCountsPaddingAsTorchDefault) {
  // 4x4 iota, 3x3 stride 2 pad (1, 1): the top-left window holds 0, 1, 4, 5 (sum 10) and
  // five zeros of padding -> 10 / 9 (count_include_pad); interior window (1,1) at rows 1-3,
  // cols 1-3: 5+6+7+9+10+11+13+14+15 = 90 -> 10.
  Tensor y = run_on_iota({1, 1, 4, 4}, [](hlo::Builder& b, hlo::Value* x) {
    return layers::avg_pool(b, x, 3, 2, {1, 1}, {1, 1});
  });
  ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_NEAR(y.as_double(0), 10.0 / 9, 1e-12);
  EXPECT_NEAR(y.as_double(3), 10.0, 1e-12);
  // 2x2 stride 2 unpadded on 5x5 drops the last row/col (floor): window (1,1) = 12+13+17+18.
  Tensor z = run_on_iota({1, 1, 5, 5}, [](hlo::Builder& b, hlo::Value* x) {
    return layers::avg_pool(b, x, 2, 2, {0, 0}, {0, 0});
  });
  ASSERT_EQ(z.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_NEAR(z.as_double(3), (12 + 13 + 17 + 18) / 4.0, 1e-12);
}

// Parameters for a train-step check: conv / linear weights U(±√(3/fan_in)) (variance 1/fan_in),
// BN/LN gamma 1, beta and biases 0, layer scales 0.1 (not 1e-6, so the ConvNeXt blocks learn).
std::vector<Tensor> init_params(const ParamTable& t) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < t.params.size(); ++i) {
    const ParamDesc& p = t.params[i];
    Tensor x = random_tensor(hlo::Type::tensor(DType::kF32, p.shape), 1000 + i);
    int64_t fan_in = p.shape.size() > 1 ? p.numel() / p.shape[0] : 1;
    double scale = 0.02;
    switch (p.init) {
      case ParamInit::convWeight:
      case ParamInit::linearWeight:
        scale = std::sqrt(3.0 / double(fan_in));
        break;
      case ParamInit::zeros:
        scale = 0;
        break;
      case ParamInit::ones:
      case ParamInit::layerScale:
        for (int64_t j = 0; j < x.numel(); ++j)
          x.data<float>()[j] = p.init == ParamInit::ones ? 1.0f : 0.1f;
        out.push_back(std::move(x));
        continue;
      default:
        break;
    }
    for (int64_t j = 0; j < x.numel(); ++j) x.data<float>()[j] *= static_cast<float>(scale);
    out.push_back(std::move(x));
  }
  return out;
}

// A zoo net at 32x32 with 10 classes: every module kind emits and prints; four train steps on
// the cpu executor with the zoo's optimizer (lr 0.01 sgd / 1e-4 adam) on one repeated batch of 2:
// some later loss is below the first. yolo-csp keeps its fpnDetect head and yoloAnchor loss
// (2 classes, 3 anchors per cell: 63 rows at 32x32) and trains on synthetic box labels.
void expect_zoo_net_trains(const std::string& name) {
  SpecFile spec = load_spec_file(std::string(NETSPEC_SOURCE_DIR) + "/models/" + name + ".json");
  NetSpec& net = spec.net;
  net.inputHeight = net.inputWidth = 32;
  const bool det = name == "yolo-csp";
  if (!det) set_num_classes(net, 10);
  TrainConfig tc = spec.train ? *spec.train : TrainConfig{};
  if (!det) tc.lossKind = LossKind::classCE;
  tc.learningRate = tc.optimizer == OptimizerKind::sgd ? 0.01 : 1e-4;
  const int64_t batch = 2;
  EmitOptions o = EmitOptions::from_train(tc, batch);
  if (det) o.loss = losses::for_net(o.loss, net);
  for (ModuleKind k : {ModuleKind::forward, ModuleKind::eval, ModuleKind::cam, ModuleKind::vjp,
                       ModuleKind::optimizer}) {
    Emitted e = emit_module(net, k, o);
    EXPECT_FALSE(hlo::print_module(*e.module).empty()) << name << " " << enum_name(k);
  }
  Tensor x = random_tensor(hlo::Type::tensor(DType::kF32, {batch, 3, 32, 32}), 7);
  Tensor labels = Tensor::from<int>(DType::kI32, {batch}, {1, 7});
  if (det) {  // [B, 63, 6]: an object every 9th row, (1, x, y, log w/aw, log h/ah, class)
    std::vector<float> v;
    for (int64_t i = 0; i < batch * 63; ++i) {
      const float u = 0.1f + 0.08f * float(i % 10);
      if (i % 9 == 4)
        v.insert(v.end(), {1, u, 1 - u, u - 0.5f, 0.3f - u, float(i % 2)});
      else
        v.insert(v.end(), {0, 0, 0, 0, 0, 0});
    }
    labels = Tensor::from<float>(DType::kF32, {batch, 63, 6}, v);
  }
  // Several steps on the repeated batch: one step of a deep net with batch-statistics BN over a
  // few values per channel can overshoot from some inits: some later step must be lower.
  std::vector<double> losses =
      train_step_losses(net, o, init_params(build_param_table(net)), x, labels, tc.learningRate);
  ASSERT_EQ(losses.size(), 4u) << name;
  EXPECT_LT(*std::min_element(losses.begin() + 1, losses.end()), losses[0]) << name;
}

class ZooConvNet : public ::testing::TestWithParam<const char*> {};

TEST_P(ZooConvNet, EmitsEveryModuleAndATrainStepLowersTheLoss) {
  expect_zoo_net_trains(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Emit, ZooConvNet,
                         ::testing::Values("squeezenet", "shufflenet-v1", "shufflenet-v2",
                                           "densenet121", "googlenet", "convnext-tiny", "yolo-csp"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::erase(s, '-');
                           return s;
                         });

}  // namespace
}  // namespace netspec::emit::testing
