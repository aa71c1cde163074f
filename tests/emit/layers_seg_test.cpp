// Segmentation / diffusion layer kinds (unetDown, unetUp, bilinearUpsample, asppModule,
// fpnModule, spatialFlatten, spatialUnflatten, timeCondAdd, positionalEncoding): tiny nets pass
// gradcheck of their train-step loss (f64) on ref and cpu; forward values against hand results;
// the zoo nets of these families emit every module and take cpu train steps.
#include <numbers>

#include "emit_test_util.h"
#include "spec/zoo.h"

namespace netspec::emit::testing {
namespace {

// The layer tests' options (emit_test_util.h) in f64.
EmitOptions f64_opts(int64_t batch = 3) {
  EmitOptions o = opts(batch);
  o.dtype = DType::kF64;
  return o;
}

// A classifier head (globalAvgPool, flatten, dense c -> 3) so the loss is classCE.
NetBuilder& head(NetBuilder& nb, int c) {
  return nb.add(GlobalAvgPool{}).add(Flatten{}).add(Dense{c, 3});
}

std::vector<NetSpec> seg_cases() {
  std::vector<NetSpec> v;
  {  // nested UNet: 4x4 -> 2x2 -> 1x1 -> 2x2 -> 4x4, skips [4, 2, 2] and [2, 4, 4]
    NetBuilder nb("unet");
    nb.input(2, 4, 4).add(UnetDown{2, 4}).add(UnetDown{4, 8}).add(UnetUp{8, 4}).add(UnetUp{4, 3});
    v.push_back(head(nb, 3).build());
  }
  v.push_back(NetBuilder("bilinear")
                  .input(2, 3, 3)
                  .add(Conv2d{2, 2, 1})
                  .add(BilinearUpsample{3})
                  .add(Flatten{})
                  .add(Dense{162, 3})
                  .build());
  {
    NetBuilder nb("aspp");
    nb.input(3, 5, 5).add(AsppModule{3, 4});
    v.push_back(head(nb, 4).build());
  }
  {  // taps C2 [2, 8, 8] (net input), C3 [3, 4, 4], C4 [4, 2, 2]; C5 [5, 1, 1]
    NetBuilder nb("fpn");
    nb.input(2, 8, 8)
        .add(Conv2d{2, 3, 3, 2})
        .add(Conv2d{3, 4, 3, 2})
        .add(Conv2d{4, 5, 3, 2})
        .add(FpnModule{.c2 = 2, .c3 = 3, .c4 = 4, .c5 = 5, .target = 3});
    v.push_back(head(nb, 3).build());
  }
  {
    NetBuilder nb("fpn_no_c2");
    nb.input(3, 4, 4)
        .add(Conv2d{3, 4, 3, 2})
        .add(Conv2d{4, 5, 3, 2})
        .add(FpnModule{.c2 = 0, .c3 = 3, .c4 = 4, .c5 = 5, .target = 2});
    v.push_back(head(nb, 2).build());
  }
  {
    NetBuilder nb("tokens");
    nb.input(2, 2, 3)
        .add(Conv2d{2, 4, 1})
        .add(SpatialFlatten{})
        .add(LayerNorm{4})
        .add(SpatialUnflatten{4, 2, 3});
    v.push_back(head(nb, 4).build());
  }
  {  // channel 2 of the input carries t/T
    NetBuilder nb("time");
    nb.input(3, 3, 3).add(Conv2d{3, 4, 3}).add(TimeCondAdd{4, 3});
    v.push_back(head(nb, 4).build());
  }
  v.push_back(
      NetBuilder("posenc").input(2).add(PositionalEncoding{2, 3}).add(Dense{14, 3}).build());
  return v;
}

TEST(EmitSegLayers, GradcheckOnRef) {
  for (const auto& n : seg_cases()) {
    SCOPED_TRACE(n.name);
    expect_loss_grads(n, f64_opts(), "ref");
  }
}

TEST(EmitSegLayers, GradcheckOnCpu) {
  for (const auto& n : seg_cases()) {
    SCOPED_TRACE(n.name);
    expect_loss_grads(n, f64_opts(), "cpu");
  }
}

// Runs a parameter-free net's forward module on x (f64) on ref and cpu; both must agree.
Tensor forward(const NetSpec& net, const Tensor& x) {
  Emitted e = emit_module(net, ModuleKind::forward, f64_opts(x.shape()[0]));
  Tensor r = run_main(*e.module, {x}, "ref").at(0);
  EXPECT_LE(max_abs_diff(r, run_main(*e.module, {x}, "cpu").at(0)), 1e-12);
  return r;
}

// torch.nn.functional.interpolate([[1, 2], [3, 4]], scale_factor=2, mode="bilinear",
// align_corners=False): rows (1, 1.25, 1.75, 2), (1.5, ...), (2.5, ...), (3, ...).
TEST(EmitSegLayers, BilinearUpsampleValuesByHand) {
  NetSpec net = NetBuilder("up").input(1, 2, 2).add(BilinearUpsample{2}).build();
  Tensor y = forward(net, Tensor::from<double>(DType::kF64, {1, 1, 2, 2}, {1, 2, 3, 4}));
  std::vector<double> want{1,   1.25, 1.75, 2,   1.5, 1.75, 2.25, 2.5,
                           2.5, 2.75, 3.25, 3.5, 3,   3.25, 3.75, 4};
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(y.as_double(i), want[size_t(i)], 1e-12) << i;
}

// γ(p) per coordinate: (p, sin πp, cos πp, sin 2πp, cos 2πp).
TEST(EmitSegLayers, PositionalEncodingIsCoordinateMajor) {
  NetSpec net = NetBuilder("pe").input(2).add(PositionalEncoding{2, 2}).build();
  Tensor y = forward(net, Tensor::from<double>(DType::kF64, {1, 2}, {0.25, -0.5}));
  ASSERT_EQ(y.shape(), (Shape{1, 10}));
  const double pi = std::numbers::pi;
  for (int d = 0; d < 2; ++d) {
    double p = d == 0 ? 0.25 : -0.5;
    std::vector<double> want{p, std::sin(pi * p), std::cos(pi * p), std::sin(2 * pi * p),
                             std::cos(2 * pi * p)};
    for (int j = 0; j < 5; ++j) EXPECT_NEAR(y.as_double(d * 5 + j), want[size_t(j)], 1e-12);
  }
}

// [C, H, W] -> [H·W, C]: token y·W + x holds the channels at (y, x); unflatten inverts it.
TEST(EmitSegLayers, SpatialFlattenOrderAndInverse) {
  std::vector<double> v(12);
  for (int i = 0; i < 12; ++i) v[size_t(i)] = i;
  Tensor x = Tensor::from<double>(DType::kF64, {1, 2, 2, 3}, v);
  Tensor t = forward(NetBuilder("f").input(2, 2, 3).add(SpatialFlatten{}).build(), x);
  ASSERT_EQ(t.shape(), (Shape{1, 6, 2}));
  for (int p = 0; p < 6; ++p)
    for (int c = 0; c < 2; ++c) EXPECT_EQ(t.as_double(p * 2 + c), c * 6 + p);
  Tensor back = forward(
      NetBuilder("fu").input(2, 2, 3).add(SpatialFlatten{}).add(SpatialUnflatten{2, 2, 3}).build(),
      x);
  EXPECT_EQ(max_abs_diff(back, x), 0);
}

// timeCondAdd with zero projection weight adds its bias only; the embedding reads channel C-1.
TEST(EmitSegLayers, TimeCondAddReadsTheLastInputChannel) {
  NetSpec net = NetBuilder("t").input(2, 1, 1).add(TimeCondAdd{2, 1}).build();
  Emitted e = emit_module(net, ModuleKind::forward, f64_opts(1));
  // W [2, 2] = rows (1, 0), (0, 1): out_c = x_c + (sin πs, cos πs)_c + b_c.
  Tensor w = Tensor::from<double>(DType::kF64, {2, 2}, {1, 0, 0, 1});
  Tensor b = Tensor::from<double>(DType::kF64, {2}, {0.5, -1});
  const double s = 0.25;
  Tensor x = Tensor::from<double>(DType::kF64, {1, 2, 1, 1}, {3, s});
  Tensor y = run_main(*e.module, {w, b, x}, "ref").at(0);
  EXPECT_NEAR(y.as_double(0), 3 + std::sin(std::numbers::pi * s) + 0.5, 1e-12);
  EXPECT_NEAR(y.as_double(1), s + std::cos(std::numbers::pi * s) - 1, 1e-12);
}

TEST(EmitSegLayers, UnetUpNeedsAMatchingSkip) {
  NetSpec n = NetBuilder("u")
                  .input(2, 4, 4)
                  .add(UnetDown{2, 4})
                  .add(UnetUp{4, 2})
                  .add(UnetUp{2, 2})
                  .build();
  try {
    build_param_table(n);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[layer 2 unetUp] no skip connection left"),
              std::string::npos)
        << e.what();
  }
}

// Every zoo net of these families (input shrunk) emits every module, and each runs on cpu (the
// train step included: its loss lowers) with finite outputs of the manifest's shapes.
TEST(EmitSegLayers, ZooNetsEmitEveryModuleAndTrainOnCpu) {
  for (auto [name, size] : std::vector<std::pair<const char*, int>>{
           {"unet", 32}, {"deeplab-aspp", 32}, {"fpn-seg", 32}, {"ddpm-unet", 28}}) {
    SpecFile spec = resolve_net(name);
    spec.net.inputHeight = spec.net.inputWidth = size;
    for (ModuleKind k : {ModuleKind::forward, ModuleKind::eval, ModuleKind::train_step,
                         ModuleKind::vjp, ModuleKind::optimizer, ModuleKind::loss}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(enum_name(k)));
      Emitted e = emit_module(spec.net, k, EmitOptions::from_train(*spec.train, 2));
      expect_module_runs(*e.module, e.manifest, "cpu");
    }
  }
}

}  // namespace
}  // namespace netspec::emit::testing
