// groupNorm and the `norm: gn` option of convBn / residualBlock / unetDown / unetUp: forward
// values against torch.nn.GroupNorm and torchvision's BasicBlock with GroupNorm (Debian torch,
// f64), f64 gradcheck of the train-step loss on ref and cpu, refusals that name the layer and
// field, parameter names and counts (same as BN, no running statistics).
#include "emit_test_util.h"
#include "error_of.h"
#include "spec/spec_json.h"
#include "torch_script.h"

namespace netspec::emit::testing {
namespace {

using test_util::error_of;

// Forward (f64, batch 2) of `net` at small_params(seed) on a deterministic input.
struct Fwd {
  std::vector<Tensor> args;  // params then x
  Tensor y;
};
Fwd forward_f64(const NetSpec& net, ModuleKind kind = ModuleKind::forward) {
  ParamTable t = build_param_table(net);
  Fwd f;
  f.args = small_params(t, DType::kF64, 0.5, 7);
  Shape in{2, net.inputChannels, net.inputHeight, net.inputWidth};
  f.args.push_back(random_tensor(hlo::Type::tensor(DType::kF64, in), 3));
  EmitOptions o;
  o.batch = 2;
  o.dtype = DType::kF64;
  Emitted e = emit_module(net, t, kind, o);
  f.y = run_main(*e.module, f.args).at(0);
  return f;
}

// y = act(GroupNorm(G, 6)(x)) for G in {1, 3, 6} (one group = LayerNorm over C·H·W, six =
// InstanceNorm), the affine γ, β random; torch.nn.GroupNorm with the same weights.
TEST(EmitGroupNorm, EqualsTorchGroupNorm) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  for (int g : {1, 3, 6}) {
    for (Activation a : {Activation::identity, Activation::swish}) {
      SCOPED_TRACE(fmt::format("groups {} act {}", g, enum_name(a)));
      NetSpec net = NetBuilder("gn").input(6, 3, 4).add(GroupNorm{6, g, a}).build();
      Fwd f = forward_f64(net);
      ASSERT_EQ(f.y.shape(), (Shape{2, 6, 3, 4}));
      std::string script = fmt::format(R"(
gn = torch.nn.GroupNorm({}, 6)
gn.weight.data = load(0)
gn.bias.data = load(1)
y = gn(load(2))
save(0, torch.nn.functional.silu(y) if {} else y)
)",
                                       g, a == Activation::swish ? "True" : "False");
      reference::expect_matches(fmt::format("groupNorm G={} {}", g, enum_name(a)), f.y,
                                reference::run_torch_script(script, f.args).at(0), 1e-12);
    }
  }
}

// residualBlock 2 -> 4 (a 1x1 downsample) with norm gn, groups 2 == torchvision's BasicBlock
// built with norm_layer = GroupNorm(2, c), weights loaded by name (the gn takes the bn names).
TEST(EmitGroupNorm, ResidualBlockEqualsTorchvisionBasicBlockWithGroupNorm) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  NetSpec net =
      NetBuilder("res_gn")
          .input(2, 5, 5)
          .add(ResidualBlock{.ic = 2, .oc = 4, .nBlocks = 1, .norm = Norm::gn, .normGroups = 2})
          .build();
  ParamTable t = build_param_table(net);
  std::string names;
  for (const auto& p : t.params) names += "'" + p.name.substr(16) + "', ";  // "layers.0.block0."
  EXPECT_EQ(names,
            "'conv1.weight', 'bn1.weight', 'bn1.bias', 'conv2.weight', 'bn2.weight', 'bn2.bias', "
            "'downsample.0.weight', 'downsample.1.weight', 'downsample.1.bias', ");
  Fwd f = forward_f64(net);
  std::string script = "import torchvision\nfrom torch import nn\nnames = [" + names + R"(]
gn = lambda c: nn.GroupNorm(2, c)
ds = nn.Sequential(nn.Conv2d(2, 4, 1, bias=False), gn(4))
m = torchvision.models.resnet.BasicBlock(2, 4, downsample=ds, norm_layer=gn).double()
m.load_state_dict({n: load(i) for i, n in enumerate(names)})
save(0, m(load(len(names))))
)";
  reference::expect_matches("residualBlock gn", f.y,
                            reference::run_torch_script(script, f.args).at(0), 1e-12);
}

// No running statistics: the eval module of a gn net equals its (train-mode) forward.
TEST(EmitGroupNorm, EvalEqualsForward) {
  NetSpec net = NetBuilder("gn_eval")
                    .input(2, 4, 4)
                    .add(ConvBn{.ic = 2, .oc = 4, .k = 3, .norm = Norm::gn, .normGroups = 2})
                    .add(GroupNorm{4, 4, Activation::swish})
                    .build();
  EXPECT_TRUE(build_param_table(net).bns.empty());
  Tensor fwd = forward_f64(net).y, ev = forward_f64(net, ModuleKind::eval).y;
  EXPECT_EQ(max_abs_diff(fwd, ev), 0);
  double mx = 0;
  for (int64_t i = 0; i < fwd.numel(); ++i) mx = std::max(mx, std::abs(fwd.as_double(i)));
  EXPECT_GT(mx, 0.1);
}

std::vector<NetSpec> gn_nets() {
  std::vector<NetSpec> v;
  v.push_back(NetBuilder("groupNorm")
                  .input(2, 3, 3)
                  .add(Conv2d{2, 4, 3})
                  .add(GroupNorm{4, 2, Activation::swish})
                  .add(GlobalAvgPool{})
                  .add(Flatten{})
                  .add(Dense{4, 3})
                  .build());
  v.push_back(NetBuilder("convBn_gn")
                  .input(2, 4, 4)
                  .add(ConvBn{.ic = 2, .oc = 4, .k = 3, .norm = Norm::gn, .normGroups = 2})
                  .add(Flatten{})
                  .add(Dense{64, 3})
                  .build());
  v.push_back(
      NetBuilder("res_gn")
          .input(2, 4, 4)
          .add(ResidualBlock{
              .ic = 2, .oc = 4, .nBlocks = 2, .firstStride = 2, .norm = Norm::gn, .normGroups = 2})
          .add(GlobalAvgPool{})
          .add(Flatten{})
          .add(Dense{4, 3})
          .build());
  v.push_back(NetBuilder("unet_gn")
                  .input(2, 4, 4)
                  .add(UnetDown{.ic = 2, .oc = 4, .norm = Norm::gn, .normGroups = 2})
                  .add(UnetUp{.ic = 4, .oc = 2, .norm = Norm::gn, .normGroups = 1})
                  .add(Flatten{})
                  .add(Dense{32, 3})
                  .build());
  return v;
}

TEST(EmitGroupNorm, NetsPassGradcheckOnRef) {
  for (const NetSpec& n : gn_nets()) {
    SCOPED_TRACE(n.name);
    expect_loss_grads(n, opts(), "ref");
  }
}

TEST(EmitGroupNorm, NetsPassGradcheckOnCpu) {
  for (const NetSpec& n : gn_nets()) {
    SCOPED_TRACE(n.name);
    expect_loss_grads(n, opts(), "cpu");
  }
}

// gn keeps the BN parameter names and shapes (so the same count) and has no BN list.
TEST(EmitGroupNorm, ParamsAsBnWithoutRunningStats) {
  auto res = [](Norm n) {
    return NetBuilder("r")
        .input(2, 4, 4)
        .add(ResidualBlock{.ic = 2, .oc = 4, .nBlocks = 1, .norm = n, .normGroups = 4})
        .build();
  };
  ParamTable bn = build_param_table(res(Norm::bn)), gn = build_param_table(res(Norm::gn));
  // conv1 4·2·9 + bn1 8 + conv2 4·4·9 + bn2 8 + downsample.0 4·2 + downsample.1 8
  EXPECT_EQ(gn.total_params(), 72 + 8 + 144 + 8 + 8 + 8);
  EXPECT_EQ(bn.total_params(), gn.total_params());
  ASSERT_EQ(bn.params.size(), gn.params.size());
  for (size_t i = 0; i < bn.params.size(); ++i) {
    EXPECT_EQ(bn.params[i].name, gn.params[i].name);
    EXPECT_EQ(bn.params[i].init, gn.params[i].init);
  }
  EXPECT_EQ(bn.bns.size(), 3u);
  EXPECT_TRUE(gn.bns.empty());
  ParamTable g = build_param_table(NetBuilder("g").input(6, 2, 2).add(GroupNorm{6, 3}).build());
  ASSERT_EQ(g.params.size(), 2u);
  EXPECT_EQ(g.params[0].name, "layers.0.weight");
  EXPECT_EQ(g.params[0].init, ParamInit::ones);
  EXPECT_EQ(g.params[1].name, "layers.0.bias");
  EXPECT_EQ(g.params[1].init, ParamInit::zeros);
  EXPECT_EQ(g.total_params(), 12);
}

TEST(EmitGroupNorm, RefusalsNameLayerAndField) {
  auto table_error = [](const NetSpec& n) { return error_of([&] { build_param_table(n); }); };
  EXPECT_EQ(table_error(NetBuilder("x").input(6, 2, 2).add(GroupNorm{6, 4}).build()),
            "[layer 0 groupNorm] groups must divide the channels (got 4 groups for 6 channels)");
  EXPECT_EQ(table_error(NetBuilder("x").input(6, 2, 2).add(GroupNorm{6, 0}).build()),
            "[layer 0 groupNorm] groups must be >= 1 (got 0)");
  EXPECT_EQ(table_error(NetBuilder("x").input(6, 2, 2).add(GroupNorm{5}).build()),
            "[layer 0 groupNorm] input channels (got 6, expected 5)");
  EXPECT_EQ(table_error(NetBuilder("x").input(2, 4, 4).add(Flatten{}).add(GroupNorm{32}).build()),
            "[layer 1 groupNorm] expects an image [C, H, W] input (got [32])");
  EXPECT_EQ(table_error(NetBuilder("x")
                            .input(2, 4, 4)
                            .add(ConvBn{2, 8, 3})
                            .add(UnetDown{.ic = 8, .oc = 12, .norm = Norm::gn, .normGroups = 8})
                            .build()),
            "[layer 1 unetDown] normGroups must divide the channels (got 8 groups for 12 "
            "channels)");
  EXPECT_EQ(table_error(NetBuilder("x")
                            .input(2, 4, 4)
                            .add(ConvBn{.ic = 2, .oc = 8, .k = 3, .norm = Norm::ln})
                            .build()),
            "[layer 0 convBn] norm must be bn or gn (got ln)");
  EXPECT_EQ(table_error(NetBuilder("x")
                            .input(8, 4, 4)
                            .add(ConvNextDownsample{.ic = 8, .oc = 8, .norm = Norm::gn})
                            .build()),
            "[layer 0 convNextDownsample] norm must be ln or bn (got gn)");
}

// Spec files: norm / normGroups and groupNorm read, written back only when set; an unknown norm
// name is refused with the choices.
TEST(EmitGroupNorm, SpecFileFields) {
  const std::string text = R"({"name": "s", "inputChannels": 2, "inputHeight": 4,
    "inputWidth": 4, "layers": [
    {"kind": "convBn", "ic": 2, "oc": 8, "k": 3, "norm": "gn", "normGroups": 4},
    {"kind": "groupNorm", "ch": 8, "groups": 2, "act": "swish"},
    {"kind": "convBn", "ic": 8, "oc": 8, "k": 3}]})";
  SpecFile s = parse_spec(text);
  const auto& c = std::get<ConvBn>(s.net.layers[0]);
  EXPECT_EQ(c.norm, Norm::gn);
  EXPECT_EQ(c.normGroups, 4);
  EXPECT_EQ(std::get<GroupNorm>(s.net.layers[1]), (GroupNorm{8, 2, Activation::swish}));
  EXPECT_EQ(std::get<ConvBn>(s.net.layers[2]).norm, Norm::bn);
  EXPECT_EQ(dump_layer(s.net.layers[0]),
            "{\"kind\":\"convBn\",\"ic\":2,\"oc\":8,\"k\":3,\"norm\":\"gn\",\"normGroups\":4}");
  EXPECT_EQ(dump_layer(s.net.layers[2]), "{\"kind\":\"convBn\",\"ic\":8,\"oc\":8,\"k\":3}");
  EXPECT_EQ(parse_spec(dump_spec(s)), s);
  std::string bad = text;
  bad.replace(bad.find("\"gn\""), 4, "\"group\"");
  const std::string e = error_of([&] { parse_spec(bad); });
  EXPECT_NE(e.find("[layer 0 convBn] unknown Norm 'group' for field 'norm' (expected one of bn, "
                   "ln, gn)"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace netspec::emit::testing
