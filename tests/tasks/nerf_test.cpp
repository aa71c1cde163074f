// The nerf task's rendering: the host volume renderer against hand-computed closed forms, PSNR,
// the stratified ray points, the in-graph nerfRenderMse against the host renderer (ref and cpu),
// and its gradient against central finite differences in f64 (the loss alone and through a tiny
// positionalEncoding + nerfMLP net).
#include <gtest/gtest.h>

#include <cmath>

#include "emit/emit.h"
#include "exec/backend.h"
#include "gradcheck/gradcheck.h"
#include "hlo/builder.h"
#include "losses/loss.h"
#include "spec/layer.h"
#include "tasks/nerf/render.h"
#include "tasks/task.h"

namespace netspec::tasks {
namespace {

using hlo::Type;
using hlo::Value;

// Raw rows [S, 4] with rgb logit 0 (sigmoid 0.5) and the given raw densities.
std::vector<float> raw_rows(const std::vector<float>& sigma, float rgb = 0) {
  std::vector<float> r;
  for (float s : sigma) r.insert(r.end(), {rgb, rgb, rgb, s});
  return r;
}

TEST(NerfRender, HostRenderIsTheQuadratureClosedForm) {
  RaySampling s{4, 2, 6, 1};  // Δ = 1
  // σ = softplus(raw - 1): raw 1 + ln(e^k - 1) is density k exactly; raw -40 is ~e^{-41}.
  const auto raw_for = [](double k) { return float(1 + std::log(std::expm1(k))); };
  // τ = (0, 1, 0, 2): w1 = 1 - e^{-1}, w3 = e^{-1}(1 - e^{-2}), the rest shows the background.
  const auto c = render_raw(raw_rows({-40, raw_for(1), -40, raw_for(2)}).data(), s);
  const double w1 = 1 - std::exp(-1.0), w3 = std::exp(-1.0) * (1 - std::exp(-2.0));
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(c[k], 0.5 * (w1 + w3) + (1 - w1 - w3), 1e-6);
  // A black background and an opaque first sample: the colour is sigmoid(2) exactly.
  s.background = 0;
  const auto d = render_raw(raw_rows({1e4f, 0, 0, 0}, 2).data(), s);
  EXPECT_NEAR(d[0], 1 / (1 + std::exp(-2.0)), 1e-12);
  // Nothing there: the background.
  s.background = 0.25;
  const auto e = render_raw(raw_rows({-40, -40, -40, -40}).data(), s);
  EXPECT_NEAR(e[2], 0.25, 1e-15);
}

TEST(NerfRender, PsnrOfKnownErrors) {
  EXPECT_DOUBLE_EQ(psnr(0.01), 20);
  EXPECT_NEAR(psnr(1e-4), 40, 1e-12);
  EXPECT_NEAR(psnr(0.5), 3.0103, 1e-4);
  EXPECT_TRUE(std::isinf(psnr(0)));
  const Tensor a = Tensor::from<float>(DType::kF32, {2, 3}, {0, 0, 0, 1, 1, 1});
  const Tensor b = Tensor::from<float>(DType::kF32, {2, 3}, {0.1f, 0, 0, 1, 1, 0.8f});
  EXPECT_NEAR(squared_error(a, b), 0.01 + 0.04, 1e-7);
}

TEST(NerfRender, RayPointsSitAtStratifiedDistances) {
  const RaySampling s{4, 2, 6, 1};
  const float ray[6] = {1, 2, 3, 0, 0.6f, -0.8f};
  float pts[4 * 6];
  ray_points(ray, s, 0.25, pts);
  for (int i = 0; i < 4; ++i) {
    const double t = 2 + (i + 0.25) * 1.0;
    EXPECT_FLOAT_EQ(pts[i * 6 + 0], 1);
    EXPECT_FLOAT_EQ(pts[i * 6 + 1], float(2 + 0.6 * t));
    EXPECT_FLOAT_EQ(pts[i * 6 + 2], float(3 - 0.8 * t));
    EXPECT_FLOAT_EQ(pts[i * 6 + 4], 0.6f);  // the direction rides along
  }
}

// @main(raw [R·S, 4], colours [R, 3]) -> nerfRenderMse.
std::unique_ptr<hlo::Module> loss_module(const losses::LossOptions& o, int64_t rays, DType dt) {
  auto m = std::make_unique<hlo::Module>();
  hlo::Func* f = m->add_func("main", {Type::tensor(dt, {rays * o.nerf_samples, 4}),
                                      Type::tensor(dt, {rays, 3})});
  hlo::Builder b(f->body.get());
  b.func_return({losses::nerf_render_mse(b, o, f->arg(0), f->arg(1))});
  return m;
}

losses::LossOptions render_options(int64_t samples, double bg) {
  losses::LossOptions o;
  o.kind = LossKind::nerfRenderMse;
  o.nerf_samples = samples;
  o.nerf_near = 2, o.nerf_far = 5, o.nerf_background = bg;
  return o;
}

TEST(NerfLoss, InGraphRenderEqualsTheHostRenderer) {
  const int64_t rays = 5, s = 7;
  const losses::LossOptions o = render_options(s, 0.8);
  std::vector<float> raw(size_t(rays * s * 4)), col(size_t(rays * 3));
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = float(std::sin(0.7 * double(i)) * 2);
  for (size_t i = 0; i < col.size(); ++i) col[i] = float(0.5 + 0.4 * std::cos(double(i)));
  const RaySampling rs{s, 2, 5, 0.8};
  double want = 0;
  for (int64_t r = 0; r < rays; ++r) {
    const auto c = render_raw(raw.data() + r * s * 4, rs);
    for (int k = 0; k < 3; ++k) want += std::pow(c[k] - col[size_t(r * 3 + k)], 2);
  }
  want /= double(rays * 3);
  for (const char* be : {"ref", "cpu"}) {
    auto exe = exec::make_backend(be)->load(loss_module(o, rays, DType::kF32));
    const std::vector<Tensor> out =
        exe->run("main", {Tensor::from<float>(DType::kF32, {rays * s, 4}, raw),
                          Tensor::from<float>(DType::kF32, {rays, 3}, col)});
    EXPECT_NEAR(out.at(0).as_double(0), want, 1e-6 * want) << be;
  }
}

TEST(NerfLoss, GradientMatchesFiniteDifferencesInF64) {
  for (const char* be : {"ref", "cpu"}) {
    autodiff::GradcheckOptions g;
    g.backend = be;
    const auto m = loss_module(render_options(6, 1), 3, DType::kF64);
    const autodiff::GradcheckReport r = autodiff::gradcheck(*m, g);
    ASSERT_EQ(r.inputs.size(), 2u);  // raw and colours
    EXPECT_TRUE(r.ok) << be << "\n" << r.str();
    for (const auto& in : r.inputs) EXPECT_LE(in.max_rel, 1e-6) << be << "\n" << r.str();
  }
}

TEST(NerfLoss, TinyNerfNetLossPassesGradcheck) {
  const NetSpec net = NetBuilder("nerf_tiny")
                          .input(6)
                          .add(PositionalEncoding{6, 2})
                          .add(NerfMlp{15, 15, 4})
                          .build();
  emit::EmitOptions o;
  o.batch = 2 * 4;  // 2 rays x 4 samples
  o.dtype = DType::kF64;
  o.loss = render_options(4, 1);
  const emit::Emitted e = emit::emit_module(net, ModuleKind::loss, o);
  autodiff::GradcheckOptions g;
  g.max_coords = 40;
  const autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
  EXPECT_FALSE(r.inputs.empty());
  EXPECT_TRUE(r.ok) << r.str();
  // The task: a nerf loss selects it and it owns the nerf fields.
  TrainConfig c;
  c.lossKind = LossKind::nerfRenderMse;
  EXPECT_EQ(task_kind(net, c), TaskKind::nerf);
  c.lossKind = LossKind::classCE;
  c.nerfSamples = 8;
  try {
    refuse_foreign_fields(TaskKind::classification, c);
    ADD_FAILURE() << "nerfSamples on a classifier was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("nerfSamples is read by the nerf task only"),
              std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace netspec::tasks
