// Grad-CAM against PyTorch (issue 18): the zoo's resnet18 with torchvision's resnet18 weights
// (random, randomised BN: tools/torchvision_reference.py --grad-cam) gives, through the grad_cam
// module on the cpu executor (f32) and report::grad_cam_map, PyTorch's float64 Grad-CAM of each
// sample's top class within max|Δ| <= 1e-4 · max|ref|; the gradient d.features likewise.
#include "layers/param_table.h"
#include "reference_util.h"
#include "report/heatmap.h"

namespace netspec::reference {
namespace {

double max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::abs(t.as_double(i)));
  return m;
}

TEST(ReferenceGradCam, Resnet18MatchesPyTorch) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  RefOptions o;
  o.size = 128;  // 4x4 feature maps
  o.extra_args = "--grad-cam";
  TempDir dir;
  RefFiles f = run_torchvision_reference("resnet18", o, dir.path);
  Tensor want_cam = read_npy(dir.path + "/gradcam.npy");    // [B, 4, 4] f64
  Tensor want_grad = read_npy(dir.path + "/grads.npy");     // [B, 512, 4, 4]
  Tensor want_feat = read_npy(dir.path + "/features.npy");  // [B, 512, 4, 4]
  Tensor classes = read_npy(dir.path + "/classes.npy");     // [B] i32
  NetSpec net = zoo_net("resnet18", o);
  ParamTable t = build_param_table(net);
  std::vector<Tensor> in = eval_weights(t, f.weights);
  in.push_back(f.x);
  in.push_back(classes);
  emit::EmitOptions eo;
  eo.batch = f.x.shape()[0];
  emit::Emitted e = emit::emit_module(net, ModuleKind::grad_cam, eo);
  auto exe =
      exec::make_backend("cpu")->load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
  std::vector<Tensor> r = exe->run("main", in);
  const Tensor& feat = r[1];
  const Tensor& grad = r[2];
  ASSERT_EQ(grad.shape(), want_grad.shape());
  auto rel = [](const Tensor& a, const Tensor& b) {
    double d = 0;
    for (int64_t i = 0; i < a.numel(); ++i)
      d = std::max(d, std::abs(a.as_double(i) - b.as_double(i)));
    return d / max_abs(b);
  };
  EXPECT_LE(rel(feat, want_feat), 1e-4);
  EXPECT_LE(rel(grad, want_grad), 1e-4);
  const int64_t b = grad.shape()[0], c = grad.shape()[1], h = grad.shape()[2], w = grad.shape()[3];
  double d = 0, ref = 0;
  for (int64_t n = 0; n < b; ++n) {
    std::vector<double> cam = report::grad_cam_map(feat.data<float>() + n * c * h * w,
                                                   grad.data<float>() + n * c * h * w, c, h, w);
    for (int64_t i = 0; i < h * w; ++i) {
      d = std::max(d, std::abs(cam[i] - want_cam.as_double(n * h * w + i)));
      ref = std::max(ref, std::abs(want_cam.as_double(n * h * w + i)));
    }
  }
  std::cout << fmt::format(
      "[ reference ] grad-cam resnet18: max|Δ| {:.3g}, max|ref| {:.4g}; d.features max|Δ|/max|ref| "
      "{:.3g}\n",
      d, ref, rel(grad, want_grad));
  EXPECT_GT(ref, 0);
  EXPECT_LE(d, 1e-4 * ref);
}

}  // namespace
}  // namespace netspec::reference
