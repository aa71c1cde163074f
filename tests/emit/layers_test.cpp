// Each lowered layer kind and activation: a tiny net containing it passes gradcheck of its
// train-step loss (f64) on ref and cpu; padding and activation values against hand results.
#include "emit_test_util.h"
#include "hlo/builder.h"
#include "spec/zoo.h"

namespace netspec::emit::testing {
namespace {

// Head: globalAvgPool + flatten + dense(c -> 3) after an image-producing body.
NetBuilder image_net(const char* name, int c, int h) {
  NetBuilder nb(name);
  nb.input(c, h, h);
  return nb;
}

struct Case {
  const char* name;
  NetSpec net;
};

std::vector<Case> layer_cases() {
  std::vector<Case> v;
  v.push_back({"dense", NetBuilder("dense").input(4).add(Dense{4, 5, Activation::relu})
                            .add(Dense{5, 3}).build()});
  v.push_back({"conv2d", image_net("conv2d", 2, 5).add(Conv2d{2, 3, 3, 2}).add(Flatten{})
                             .add(Dense{27, 3}).build()});
  v.push_back({"conv2d_valid", image_net("conv2d_valid", 2, 5)
                                   .add(Conv2d{2, 2, 3, 1, Padding::valid, Activation::swish})
                                   .add(Flatten{}).add(Dense{18, 3}).build()});
  v.push_back({"conv2d_symmetric", image_net("conv2d_sym", 2, 4).pad_style(PadStyle::symmetric)
                                       .add(Conv2d{2, 3, 3, 2}).add(Flatten{})
                                       .add(Dense{12, 3}).build()});
  v.push_back({"convBn", image_net("convBn", 2, 4).add(ConvBn{2, 3, 3})
                             .add(GlobalAvgPool{}).add(Flatten{}).add(Dense{3, 3}).build()});
  v.push_back({"batchNorm", NetBuilder("bn1d").input(4).add(Dense{4, 3, Activation::relu})
                                .add(BatchNorm{3, Activation::relu}).add(Dense{3, 3}).build()});
  v.push_back({"maxPool", image_net("maxPool", 2, 5).add(MaxPool{3, 2}).add(Flatten{})
                              .add(Dense{18, 3}).build()});
  v.push_back({"maxPool_symmetric", image_net("maxPool_sym", 1, 4).pad_style(PadStyle::symmetric)
                                        .add(MaxPool{3, 2}).add(Flatten{})
                                        .add(Dense{4, 3}).build()});
  // ceilMode: 6x6, k3 s2 -> ceil(3/2) + 1 = 3 (floor mode: 2), the last window half outside.
  v.push_back({"maxPool_ceil", image_net("maxPool_ceil", 1, 6)
                                   .add(MaxPool{3, 2, Padding::valid, true}).add(Flatten{})
                                   .add(Dense{9, 3}).build()});
  v.push_back({"globalAvgPool", image_net("gap", 3, 3).add(GlobalAvgPool{}).add(Flatten{})
                                    .add(Dense{3, 3}).build()});
  v.push_back({"layerNorm", NetBuilder("ln").input(4).add(Dense{4, 5}).add(LayerNorm{5})
                                .add(Dense{5, 3}).build()});
  v.push_back({"layerNorm2d", image_net("ln2d", 3, 2).add(LayerNorm{3}).add(Flatten{})
                                  .add(Dense{12, 3}).build()});
  v.push_back({"residualBlock", image_net("res", 2, 4).add(ResidualBlock{2, 4, 2, 2})
                                    .add(GlobalAvgPool{}).add(Flatten{}).add(Dense{4, 3}).build()});
  v.push_back({"bottleneckBlock", image_net("bottleneck", 4, 4)
                                      .add(BottleneckBlock{4, 8, 1, 2}).add(GlobalAvgPool{})
                                      .add(Flatten{}).add(Dense{8, 3}).build()});
  v.push_back({"separableConv", image_net("sep", 2, 4).conv_bn_act(Activation::relu6)
                                    .add(SeparableConv{2, 4, 2}).add(GlobalAvgPool{})
                                    .add(Flatten{}).add(Dense{4, 3}).build()});
  for (Activation a : {Activation::relu, Activation::relu6, Activation::identity,
                       Activation::swish, Activation::hSwish, Activation::gelu,
                       Activation::geluTanh}) {
    std::string n = "act_" + std::string(enum_name(a));
    v.push_back({"activation", NetBuilder(n).input(4).add(Dense{4, 5, a}).add(Dense{5, 3})
                                   .build()});
  }
  return v;
}

TEST(EmitLayers, EveryLayerKindPassesGradcheckOnRef) {
  for (const auto& c : layer_cases()) {
    SCOPED_TRACE(c.net.name);
    expect_loss_grads(c.net, opts(), "ref");
  }
}

// Nets with a BN layer or a globalAvgPool, checked on cpu in their own test: they once failed
// there (the cpu planner let a reshape-of-reshape outlive its arena buffer, so dot_general's f64
// scratch overwrote the flattened GAP output; see CpuPlanner.ViewOfViewKeepsItsRootBufferAlive).
bool has_bn_or_gap(const std::string& name) {
  for (const char* n : {"convBn", "bn1d", "gap", "res", "bottleneck", "sep"})
    if (name == n) return true;
  return false;
}

TEST(EmitLayers, EveryLayerKindPassesGradcheckOnCpu) {
  for (const auto& c : layer_cases()) {
    if (has_bn_or_gap(c.net.name)) continue;
    SCOPED_TRACE(c.net.name);
    expect_loss_grads(c.net, opts(), "cpu");
  }
}

TEST(EmitLayers, BnAndPoolNetsPassGradcheckOnCpu) {
  for (const auto& c : layer_cases()) {
    if (!has_bn_or_gap(c.net.name)) continue;
    SCOPED_TRACE(c.net.name);
    expect_loss_grads(c.net, opts(), "cpu");
  }
}

// Every kind has IR now (the AlphaFold-2 kinds were the last): the zoo's protein-fold, whose
// pairTile was refused by name before, passes the lowering check.
TEST(EmitLayers, EveryKindIsLowered) {
  for (std::string_view k : layer_kind_names()) EXPECT_TRUE(layers::traits(k).lowered) << k;
  EXPECT_NO_THROW(layers::check_lowerable(resolve_net("protein-fold").net));
}

// Lowering checks each declaration against the ParamTable: a table that disagrees with the
// body (here a renamed and a reshaped entry) is an internal error naming both.
TEST(EmitLayers, DeclarationDisagreeingWithTheTableIsRefused) {
  NetSpec net = NetBuilder("two").input(4).add(Dense{4, 5}).add(Dense{5, 3}).build();
  ParamTable t = build_param_table(net);
  ASSERT_EQ(t.params[2].name, "layers.1.weight");
  ParamTable renamed = t;
  renamed.params[2].name = "layers.1.other";
  try {
    emit_module(net, renamed, ModuleKind::forward, opts());
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[layer 1 dense] internal: parameter 1 declared as "
                                         "layers.1.weight [3, 5] (expected layers.1.other [3, 5]"),
              std::string::npos)
        << e.what();
  }
  ParamTable reshaped = t;
  reshaped.params[3].shape = {4};
  EXPECT_THROW(emit_module(net, reshaped, ModuleKind::forward, opts()), Error);
  EXPECT_NO_THROW(emit_module(net, t, ModuleKind::forward, opts()));
}

// Every kind has a registered body; the lowered ones are those whose traits say so.
TEST(EmitLayers, EveryKindHasABodyAndTraits) {
  size_t lowered = 0;
  for (std::string_view k : layer_kind_names()) {
    EXPECT_NE(layers::find_emitter(k), nullptr) << k;
    lowered += layers::traits(k).lowered;
  }
  EXPECT_EQ(lowered, layers::lowered_kinds().size());
  EXPECT_TRUE(layers::traits("swinStage").lowered);
  EXPECT_TRUE(layers::traits("pairTile").lowered);
  EXPECT_EQ(layers::traits("convNextStage").ramp, layers::Ramp::last);
  EXPECT_EQ(layers::traits("mbConv").ramp, layers::Ramp::count);
  EXPECT_TRUE(layers::traits("globalAvgPool").cam_source);
  Layer det = FpnDetect{.oc = 7, .c3 = 8, .c4 = 8, .c5 = 8, .g5 = 8, .anchors = 2};
  EXPECT_EQ(layers::traits(det).detector(det), (std::pair<int64_t, int64_t>(2, 7)));
}

TEST(EmitLayers, SamePaddingFollowsPadStyle) {
  using layers::spatial_padding;
  using P = std::pair<int64_t, int64_t>;
  // h=4, k=3, s=2: out 2, total = (2-1)·2 + 3 - 4 = 1 -> xlaSame (0, 1), symmetric (1, 1).
  EXPECT_EQ(spatial_padding(4, 3, 2, Padding::same, PadStyle::xlaSame), P(0, 1));
  EXPECT_EQ(spatial_padding(4, 3, 2, Padding::same, PadStyle::symmetric), P(1, 1));
  // h=5, k=3, s=2: total 2 -> (1, 1) both; stride 1 uses the xla split: k=4 -> (1, 2).
  EXPECT_EQ(spatial_padding(5, 3, 2, Padding::same, PadStyle::xlaSame), P(1, 1));
  EXPECT_EQ(spatial_padding(6, 4, 1, Padding::same, PadStyle::symmetric), P(1, 2));
  EXPECT_EQ(spatial_padding(7, 7, 2, Padding::same, PadStyle::xlaSame), P(3, 3));
  EXPECT_EQ(spatial_padding(8, 7, 2, Padding::same, PadStyle::xlaSame), P(2, 3));
  EXPECT_EQ(spatial_padding(8, 3, 2, Padding::valid, PadStyle::symmetric), P(0, 0));
}

TEST(EmitLayers, ActivationValues) {
  const std::vector<double> xs = {-4, -1, 1, 7};
  auto run_act = [&](Activation a) {
    hlo::Module m;
    hlo::Func* f = m.add_func("main", {hlo::Type::tensor(DType::kF64, {4})});
    hlo::Builder b(f->body.get());
    b.func_return({layers::activation(b, f->arg(0), a)});
    return run_main(m, {Tensor::from<double>(DType::kF64, {4}, xs)})[0];
  };
  auto expect = [&](Activation a, std::vector<double> want, double tol = 1e-12) {
    Tensor y = run_act(a);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(y.as_double(static_cast<int64_t>(i)), want[i], tol)
          << enum_name(a) << " at " << xs[i];
  };
  expect(Activation::relu, {0, 0, 1, 7});
  expect(Activation::relu6, {0, 0, 1, 6});
  expect(Activation::identity, xs);
  // swish x·σ(x): σ(1) = 0.7310585786300049, σ(-4) = 0.01798620996209156, σ(7) = 0.9990889488055994
  expect(Activation::swish, {-4 * 0.01798620996209156, -0.2689414213699951, 0.7310585786300049,
                             7 * 0.9990889488055994});
  // hSwish x·relu6(x+3)/6: -4 -> 0, -1 -> -1/3, 1 -> 2/3, 7 -> 7.
  expect(Activation::hSwish, {0, -1.0 / 3, 2.0 / 3, 7});
  // gelu tanh form: 0.5·x·(1 + tanh(0.7978845608·(x + 0.044715·x³))).
  auto gelu = [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  expect(Activation::geluTanh, {gelu(-4), gelu(-1), gelu(1), gelu(7)});
  EXPECT_NEAR(gelu(1), 0.8411919906082768, 1e-12);  // the published tanh-gelu value at 1
  // gelu exact 0.5·x·(1 + erf(x/√2)) with std::erf; the in-graph erf is the f32 rational
  // approximation (error < 1e-6 relative here, far below the 1e-3 gap to the tanh form at 1).
  auto gelu_erf = [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); };
  expect(Activation::gelu, {gelu_erf(-4), gelu_erf(-1), gelu_erf(1), gelu_erf(7)}, 1e-6);
  EXPECT_NEAR(gelu_erf(1), 0.8413447460685429, 1e-12);  // Φ(1) = 0.8413447460685429
}

}  // namespace
}  // namespace netspec::emit::testing
