// The seed's YOLOv1 loss (yolov1Masked) against its formula written out here, the objectness
// focal BCE of yoloAnchor by hand, and every detection probe module: the loss function alone
// passes an f64 gradcheck, and the emitted (loss, gradients) module's gradients equal central
// finite differences of its own loss output.
#include "emit/det_probes.h"

#include <cmath>

#include "emit_test_util.h"

namespace netspec::emit::testing {
namespace {

double sigmoid(double z) { return 1 / (1 + std::exp(-z)); }

// Labels for yolov1Masked [B, 6 + K, g, g] (or the probe-diou target [B, 4, g, g] with mask
// [B, g, g]): every third cell of each image owns a box with varied offsets / sizes; the others
// carry junk (1e30) that must not reach the loss.
Tensor yolov1_labels(int64_t b, int64_t k, int64_t g, DType dt) {
  const int64_t c = 6 + k;
  std::vector<double> v(b * c * g * g, 0.0);
  auto at = [&](int64_t i, int64_t ch, int64_t y, int64_t x) -> double& {
    return v[((i * c + ch) * g + y) * g + x];
  };
  for (int64_t i = 0; i < b; ++i)
    for (int64_t y = 0; y < g; ++y)
      for (int64_t x = 0; x < g; ++x) {
        const int64_t cell = y * g + x + i;
        const double u = 0.15 + 0.7 * std::fmod(0.37 * double(cell + 3), 1.0);
        const bool obj = cell % 3 == 1;
        at(i, c - 1, y, x) = obj ? 1 : 0;
        double vals[5] = {u, 1 - u, 0.1 + 0.5 * u, 0.6 - 0.4 * u, 1};
        for (int ch = 0; ch < 5; ++ch) at(i, ch, y, x) = obj ? vals[ch] : 1e30;
        for (int64_t kk = 0; kk < k; ++kk) at(i, 5 + kk, y, x) = obj && kk == cell % k ? 1 : 0;
      }
  return Tensor::from<double>(dt, {b, c, g, g}, v);
}

// The YOLOv1 loss of one image with one object cell and one empty cell (K = 2, 1x2 grid) by hand.
TEST(Yolov1Masked, ValueByHand) {
  for (bool diou : {false, true}) {
    SCOPED_TRACE(diou ? "diou" : "sqrt-mse");
    losses::LossOptions o;
    o.kind = LossKind::yolov1Masked;
    o.diou_box = diou;
    // pred [1, 7, 1, 2]: cell 0 = object, cell 1 = empty; channel-major.
    const double p0[7] = {0.3, 0.6, 0.2, 0.5, 0.8, 0.9, 0.1};
    const double p1[7] = {9, 9, -0.1, 4, 0.4, 7, 7};  // only conf counts (noobj)
    const double t0[7] = {0.4, 0.5, 0.25, 0.36, 1, 1, 0};
    std::vector<double> pv(14), lv(16);
    for (int ch = 0; ch < 7; ++ch) {
      pv[ch * 2] = p0[ch];
      pv[ch * 2 + 1] = p1[ch];
      lv[ch * 2] = t0[ch];
      lv[ch * 2 + 1] = 1e30;
    }
    lv[14] = 1;  // mask
    lv[15] = 0;
    double box = 0;
    if (diou) {
      // Grid 1x2: cx = σ(x)/2, cy = σ(y)/1, w = e^w, h = e^h against x*/2, y*, w*, h*.
      const double px = sigmoid(p0[0]) / 2, py = sigmoid(p0[1]), pw = std::exp(p0[2]),
                   ph = std::exp(p0[3]);
      const double tx = t0[0] / 2, ty = t0[1], tw = t0[2], th = t0[3];
      double iw =
          std::max(0.0, std::min(px + pw / 2, tx + tw / 2) - std::max(px - pw / 2, tx - tw / 2));
      double ih =
          std::max(0.0, std::min(py + ph / 2, ty + th / 2) - std::max(py - ph / 2, ty - th / 2));
      double inter = iw * ih, uni = pw * ph + tw * th - inter + 1e-7;
      double cw = std::max(px + pw / 2, tx + tw / 2) - std::min(px - pw / 2, tx - tw / 2);
      double chh = std::max(py + ph / 2, ty + th / 2) - std::min(py - ph / 2, ty - th / 2);
      double rho = (px - tx) * (px - tx) + (py - ty) * (py - ty);
      box = 1 - inter / uni + rho / (cw * cw + chh * chh + 1e-7);
    } else {
      box = std::pow(0.3 - 0.4, 2) + std::pow(0.6 - 0.5, 2) +
            std::pow(std::sqrt(0.2) - std::sqrt(0.25), 2) + std::pow(std::sqrt(0.5) - 0.6, 2);
    }
    const double want = 5 * box + std::pow(0.8 - 1, 2) + 0.5 * 0.4 * 0.4 + std::pow(0.9 - 1, 2) +
                        std::pow(0.1 - 0, 2);
    auto m = std::make_unique<hlo::Module>();
    hlo::Type pt = hlo::Type::tensor(DType::kF64, {1, 7, 1, 2});
    hlo::Func* f = m->add_func("main", {pt, losses::label_type(o, pt)});
    hlo::Builder b(f->body.get());
    b.func_return({losses::emit_loss(b, o, f->arg(0), f->arg(1))});
    Tensor pred = Tensor::from<double>(DType::kF64, {1, 7, 1, 2}, pv);
    Tensor lab = Tensor::from<double>(DType::kF64, {1, 8, 1, 2}, lv);
    for (const char* be : {"ref", "cpu"})
      EXPECT_NEAR(run_main(*m, {pred, lab}, be)[0].as_double(0), want, 1e-12) << be;
  }
}

// The √ floor: a predicted width below ε contributes (√ε - √w*)² and no gradient.
TEST(Yolov1Masked, SqrtFloorOnNegativeWidth) {
  losses::LossOptions o;
  o.kind = LossKind::yolov1Masked;
  hlo::Type pt = hlo::Type::tensor(DType::kF64, {1, 5, 1, 1});
  auto m = std::make_unique<hlo::Module>();
  hlo::Func* f = m->add_func("main", {pt, losses::label_type(o, pt)});
  hlo::Builder b(f->body.get());
  b.func_return({losses::emit_loss(b, o, f->arg(0), f->arg(1))});
  Tensor pred = Tensor::from<double>(DType::kF64, {1, 5, 1, 1}, {0.5, 0.5, -0.3, 0.49, 1});
  Tensor lab = Tensor::from<double>(DType::kF64, {1, 6, 1, 1}, {0.5, 0.5, 0.16, 0.49, 1, 1});
  const double want = 5 * std::pow(std::sqrt(1e-6) - 0.4, 2);
  EXPECT_NEAR(run_main(*m, {pred, lab})[0].as_double(0), want, 1e-12);
}

// yoloAnchor's objectness with focal γ: one image, 21 rows (3 levels, 1 anchor), no class, one
// positive row: 1/N Σ focal-BCE + box.
TEST(YoloAnchor, ObjectnessFocalByHand) {
  losses::LossOptions o;
  o.kind = LossKind::yoloAnchor;
  o.anchors = {16, 16};
  o.fpn_scales = {8, 16, 32};
  o.obj_focal_gamma = 2;
  const int64_t n = 21;
  std::vector<double> p(n * 5, 0.0), l(n * 6, 0.0);
  for (int64_t r = 0; r < n; ++r) p[r * 5 + 4] = -1.5 + 0.13 * double(r);
  l[4 * 6] = 1;  // row 4 positive, target = sigmoid of zero logits: centre 0.5, log size 0
  l[4 * 6 + 1] = 0.5;
  l[4 * 6 + 2] = 0.5;
  double obj = 0;
  for (int64_t r = 0; r < n; ++r) {
    const double z = p[r * 5 + 4], q = sigmoid(z);
    obj += r == 4 ? -std::pow(1 - q, 2) * std::log(q) : -std::pow(q, 2) * std::log(1 - q);
  }
  const double box = std::pow(0.5 - 0.5, 2) * 2;  // MSE box: all zero
  auto m = std::make_unique<hlo::Module>();
  hlo::Type pt = hlo::Type::tensor(DType::kF64, {1, n, 5});
  hlo::Func* f = m->add_func("main", {pt, losses::label_type(o, pt)});
  hlo::Builder b(f->body.get());
  b.func_return({losses::emit_loss(b, o, f->arg(0), f->arg(1))});
  Tensor pred = Tensor::from<double>(DType::kF64, {1, n, 5}, p);
  Tensor lab = Tensor::from<double>(DType::kF64, {1, n, 6}, l);
  for (const char* be : {"ref", "cpu"})
    EXPECT_NEAR(run_main(*m, {pred, lab}, be)[0].as_double(0), obj / n + box, 1e-12) << be;
}

// yoloAnchor labels [B, N, 6] with every 5th row positive (class < k).
Tensor anchor_labels(int64_t b, int64_t n, int64_t k, DType dt) {
  std::vector<double> v;
  for (int64_t i = 0; i < b; ++i)
    for (int64_t r = 0; r < n; ++r) {
      const double u = 0.1 + 0.8 * std::fmod(0.37 * double(r + 7 * i), 1.0);
      if ((r + 3 * i) % 5 == 1)
        v.insert(v.end(), {1.0, u, 1 - u, 0.6 * u - 0.3, 0.2 - 0.5 * u, double((r + i) % k)});
      else
        v.insert(v.end(), {0.0, 5.0, -5.0, 1e30, 1e30, 99.0});
    }
  return Tensor::from<double>(dt, {b, n, 6}, v);
}

// The fixed (non-differentiated) inputs of each probe, in f64.
std::map<size_t, Tensor> fixed_inputs(const DetProbe& p, const Manifest& m) {
  std::map<size_t, Tensor> fx;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const TensorInfo& t = m.inputs[i];
    if (t.role != "label") continue;
    if (p.module == "probe-diou") {
      Tensor l = yolov1_labels(p.batch, 0, p.grid, DType::kF64);  // [B, 6, g, g]
      std::vector<double> v(num_elements(t.shape));
      const int64_t g2 = p.grid * p.grid;
      for (int64_t bb = 0; bb < p.batch; ++bb)
        for (int64_t c = 0; c < (t.name == "mask" ? 1 : 4); ++c)
          for (int64_t j = 0; j < g2; ++j)
            v[(bb * (t.name == "mask" ? 1 : 4) + c) * g2 + j] =
                l.as_double((bb * 6 + (t.name == "mask" ? 5 : c)) * g2 + j);
      fx[i] = Tensor::from<double>(DType::kF64, t.shape, v);
    } else if (p.module == "probe-yolov1") {
      fx[i] = yolov1_labels(p.batch, p.classes, p.grid, DType::kF64);
    } else {
      fx[i] = anchor_labels(p.batch, t.shape[1], p.classes, DType::kF64);
    }
  }
  return fx;
}

class DetProbes : public ::testing::TestWithParam<std::string> {};

TEST_P(DetProbes, LossGradcheckAndEmittedGradientsMatchFiniteDifferences) {
  DetProbe p;
  p.module = GetParam();
  p.batch = 2;
  p.grid = 4;
  p.dtype = DType::kF64;
  // 1) The function under test alone: f64 gradcheck w.r.t. its float non-label inputs.
  p.grad = false;
  Emitted plain = emit_det_probe(p);
  autodiff::GradcheckOptions g;
  g.fixed_inputs = fixed_inputs(p, plain.manifest);
  g.max_coords = 24;
  g.zero_abs = 1e-9;  // conv biases before BN have an exact zero gradient
  for (size_t i = 0; i < plain.manifest.inputs.size(); ++i)
    if (!g.fixed_inputs.count(i)) g.wrt.push_back(i);
  for (const char* be : {"ref", "cpu"}) {
    g.backend = be;
    autodiff::GradcheckReport r = autodiff::gradcheck(*plain.module, g);
    EXPECT_TRUE(r.ok) << p.module << " " << be << "\n" << r.str();
  }
  if (p.module == "probe-fpn-neck") return;  // its emitted module is emit's vjp (tested there)
  // 2) The emitted module: (loss, gradients); each gradient against central FD of its loss.
  p.grad = true;
  Emitted e = emit_det_probe(p);
  ASSERT_EQ(e.manifest.outputs.at(0).name, "loss");
  ASSERT_EQ(e.manifest.outputs.size(), g.wrt.size() + 1);
  // Inputs from the gradcheck sampler (distinct magnitudes, away from the ReLU / min / max kinks).
  std::vector<Tensor> in;
  uint64_t state = 11;
  for (size_t i = 0; i < e.manifest.inputs.size(); ++i) {
    const TensorInfo& t = e.manifest.inputs[i];
    in.push_back(
        g.fixed_inputs.count(i)
            ? g.fixed_inputs.at(i)
            : autodiff::sample_input(hlo::Type::tensor(DType::kF64, t.shape), i, g, state));
  }
  std::vector<Tensor> out = run_main(*e.module, in);
  // Five-point central differences (error O(h⁴)), h = 1e-4: small parameter gradients (~1e-5
  // through the BN of the backbone) stay clear of the loss's rounding noise.
  const double h = 1e-4;
  auto loss_at = [&](size_t i, int64_t j, double dx) {
    std::vector<Tensor> a = in;  // Tensor copies share storage: clone the moved one
    a[i] = in[i].clone();
    a[i].data<double>()[j] += dx;
    return run_main(*e.module, a)[0].as_double(0);
  };
  for (size_t w = 0; w < g.wrt.size(); ++w) {
    const size_t i = g.wrt[w];
    const Tensor& grad = out[w + 1];
    double worst = 0, scale = 1e-12;
    for (int64_t j = 0; j < in[i].numel(); j += std::max<int64_t>(1, in[i].numel() / 7)) {
      const double fd = (8 * (loss_at(i, j, h) - loss_at(i, j, -h)) -
                         (loss_at(i, j, 2 * h) - loss_at(i, j, -2 * h))) /
                        (12 * h);
      worst = std::max(worst, std::abs(fd - grad.as_double(j)));
      scale = std::max({scale, std::abs(fd), std::abs(grad.as_double(j))});
    }
    EXPECT_LT(worst / scale, 1e-6) << p.module << " input " << e.manifest.inputs[i].name
                                   << " max |grad| " << scale << " max |fd - grad| " << worst;
  }
}

INSTANTIATE_TEST_SUITE_P(All, DetProbes,
                         ::testing::Values("probe-diou", "probe-yolov1", "probe-anchor-loss",
                                           "probe-fpn-loss", "probe-fpn-neck", "probe-fpn-detect"),
                         [](const auto& info) {
                           std::string s = info.param.substr(6);
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace netspec::emit::testing
