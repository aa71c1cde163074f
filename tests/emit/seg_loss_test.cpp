// Per-pixel segmentation losses: values against a plain-loop implementation written here,
// gradcheck (f64) on ref and cpu, focal γ = 0 emitting the same module as perPixelCE, and the
// seg-loss probe (loss, d_logits) against CE's closed-form gradient (p - y)/N.
#include <numbers>

#include "emit/probes.h"
#include "emit_test_util.h"
#include "hlo/text/printer.h"

namespace netspec::emit::testing {
namespace {

constexpr int64_t kB = 2, kC = 3, kH = 2, kW = 3;

// main(logits [B, C, H, W], labels [B, H, W]) -> loss, in f64.
std::unique_ptr<hlo::Module> loss_module(const losses::LossOptions& o) {
  auto m = std::make_unique<hlo::Module>();
  hlo::Type lt = hlo::Type::tensor(DType::kF64, {kB, kC, kH, kW});
  hlo::Func* f = m->add_func("main", {lt, losses::label_type(o, lt)});
  hlo::Builder b(f->body.get());
  b.func_return({losses::emit_loss(b, o, f->arg(0), f->arg(1))});
  return m;
}

struct Pixels {  // softmax probabilities and labels of a deterministic batch
  Tensor logits = random_tensor(hlo::Type::tensor(DType::kF64, {kB, kC, kH, kW}), 7);
  Tensor labels =
      Tensor::from<int>(DType::kI32, {kB, kH, kW}, {0, 1, 2, 2, 1, 0, 1, 1, 0, 0, 1, 1});
  // p[k][c] for pixel k = (b, h, w) in row-major order.
  std::vector<std::vector<double>> p;
  std::vector<int> y;
  Pixels() {
    for (int64_t b = 0; b < kB; ++b)
      for (int64_t i = 0; i < kH * kW; ++i) {
        std::vector<double> z(kC);
        double s = 0;
        for (int64_t c = 0; c < kC; ++c) s += std::exp(z[size_t(c)] = at(b, c, i));
        for (double& v : z) v = std::exp(v) / s;
        p.push_back(z);
        y.push_back(labels.data<int32_t>()[b * kH * kW + i]);
      }
  }
  double at(int64_t b, int64_t c, int64_t i) const {
    return logits.data<double>()[(b * kC + c) * kH * kW + i];
  }
};

double run_loss(const losses::LossOptions& o, const Pixels& px) {
  return run_main(*loss_module(o), {px.logits, px.labels}).at(0).as_double(0);
}

TEST(SegLosses, ValuesAgainstPlainLoops) {
  Pixels px;
  const double n = double(px.y.size());
  double ce = 0, ce_smooth = 0, focal = 0, wnum = 0, wden = 0;
  std::vector<double> w{0.5, 2, 1};
  for (size_t k = 0; k < px.y.size(); ++k) {
    double pt = px.p[k][size_t(px.y[k])];
    ce -= std::log(pt) / n;
    for (int c = 0; c < kC; ++c)
      ce_smooth -= ((c == px.y[k] ? 0.9 : 0) + 0.1 / kC) * std::log(px.p[k][size_t(c)]) / n;
    focal -= std::pow(1 - pt, 2.0) * std::log(pt) / n;
    wnum -= w[size_t(px.y[k])] * std::log(pt);
    wden += w[size_t(px.y[k])];
  }
  double dsum = 0;  // batch Dice, smoothing 1
  for (int c = 0; c < kC; ++c) {
    double i = 0, ps = 0, ys = 0;
    for (size_t k = 0; k < px.y.size(); ++k) {
      i += px.p[k][size_t(c)] * (px.y[k] == c);
      ps += px.p[k][size_t(c)];
      ys += px.y[k] == c;
    }
    dsum += (2 * i + 1) / (ps + ys + 1);
  }
  double dice = 1 - dsum / kC;
  using L = LossKind;
  EXPECT_NEAR(run_loss({.kind = L::perPixelCE}, px), ce, 1e-12);
  EXPECT_NEAR(run_loss({.kind = L::perPixelCE, .label_smoothing = 0.1}, px), ce_smooth, 1e-12);
  EXPECT_NEAR(run_loss({.kind = L::perPixelFocalCE, .focal_gamma = 2}, px), focal, 1e-12);
  EXPECT_NEAR(run_loss({.kind = L::perPixelWeightedCE, .class_weights = w}, px), wnum / wden,
              1e-12);
  EXPECT_NEAR(run_loss({.kind = L::perPixelDice}, px), dice, 1e-12);
  // diceCE: smoothing on the CE half only.
  EXPECT_NEAR(run_loss({.kind = L::perPixelDiceCE, .label_smoothing = 0.1}, px), dice + ce_smooth,
              1e-12);
}

TEST(SegLosses, GradcheckOnRefAndCpu) {
  using L = LossKind;
  for (const losses::LossOptions& o : std::vector<losses::LossOptions>{
           {.kind = L::perPixelCE},
           {.kind = L::perPixelCE, .label_smoothing = 0.1},
           {.kind = L::perPixelDice},
           {.kind = L::perPixelDiceCE, .label_smoothing = 0.1},
           {.kind = L::perPixelWeightedCE, .class_weights = {0.5, 2, 1}},
           {.kind = L::perPixelFocalCE, .focal_gamma = 2},
           {.kind = L::perPixelFocalCE, .focal_gamma = 0.5}}) {
    SCOPED_TRACE(std::string(enum_name(o.kind)));
    for (const char* backend : {"ref", "cpu"}) {
      autodiff::GradcheckOptions g;
      g.backend = backend;
      g.int_max = kC;
      autodiff::GradcheckReport r = autodiff::gradcheck(*loss_module(o), g);
      EXPECT_FALSE(r.inputs.empty());
      EXPECT_TRUE(r.ok) << backend << "\n" << r.str();
    }
  }
}

TEST(SegLosses, FocalGammaZeroIsPerPixelCeByteForByte) {
  SegLossProbe ce, focal;
  focal.loss = {.kind = LossKind::perPixelFocalCE, .focal_gamma = 0};
  EXPECT_EQ(hlo::print_module(*emit_seg_loss_probe(focal).module),
            hlo::print_module(*emit_seg_loss_probe(ce).module));
  focal.loss.focal_gamma = 2;
  EXPECT_NE(hlo::print_module(*emit_seg_loss_probe(focal).module),
            hlo::print_module(*emit_seg_loss_probe(ce).module));
}

// The probe's d_logits for perPixelCE is (softmax - onehot)/N, the closed form of the seed.
TEST(SegLosses, ProbeGradientIsCeClosedForm) {
  Pixels px;
  SegLossProbe p;
  p.batch = kB;
  p.classes = kC;
  p.height = kH;
  p.width = kW;
  p.dtype = DType::kF64;
  Emitted e = emit_seg_loss_probe(p);
  ASSERT_EQ(e.manifest.outputs.size(), 2u);
  EXPECT_EQ(e.manifest.outputs[1].name, "d_logits");
  for (const char* backend : {"ref", "cpu"}) {
    std::vector<Tensor> out = run_main(*e.module, {px.logits, px.labels}, backend);
    const double n = double(px.y.size());
    for (int64_t b = 0; b < kB; ++b)
      for (int64_t c = 0; c < kC; ++c)
        for (int64_t i = 0; i < kH * kW; ++i) {
          size_t k = size_t(b * kH * kW + i);
          double want = (px.p[k][size_t(c)] - (px.y[k] == c)) / n;
          EXPECT_NEAR(out[1].data<double>()[(b * kC + c) * kH * kW + i], want, 1e-12);
        }
  }
}

// Focal with γ < 1 on a saturated pixel (p = 1 in f32): (1-p)^γ has an infinite derivative at
// 1-p = 0 that meets a zero log-probability (0·inf = NaN); the weight's base is floored at 1e-6
// for γ < 1 so the gradient stays finite (and ~0 there, as the loss's true limit).
TEST(SegLosses, FocalGammaBelowOneHasFiniteGradientsOnSaturatedPixels) {
  SegLossProbe p;
  p.batch = kB;
  p.classes = kC;
  p.height = kH;
  p.width = kW;
  p.loss = {.kind = LossKind::perPixelFocalCE, .focal_gamma = 0.5};
  Emitted e = emit_seg_loss_probe(p);
  Tensor logits(DType::kF32, {kB, kC, kH, kW});
  for (int64_t i = 0; i < logits.numel(); ++i) logits.data<float>()[i] = (i % 5) * 0.1f;
  logits.data<float>()[0] = 100;  // pixel (0, 0, 0): class 0 saturated, its label 0
  Tensor labels =
      Tensor::from<int>(DType::kI32, {kB, kH, kW}, {0, 1, 2, 2, 1, 0, 1, 1, 0, 0, 1, 1});
  for (const char* backend : {"ref", "cpu"}) {
    std::vector<Tensor> out = run_main(*e.module, {logits, labels}, backend);
    EXPECT_TRUE(std::isfinite(out[0].as_double(0))) << backend;
    for (int64_t i = 0; i < out[1].numel(); ++i)
      EXPECT_TRUE(std::isfinite(out[1].as_double(i))) << backend << " d_logits[" << i << "]";
    for (int64_t c = 0; c < kC; ++c)  // the saturated, correct pixel: gradient ~0
      EXPECT_LT(std::abs(out[1].as_double(c * kH * kW)), 1e-4) << backend << " class " << c;
  }
}

TEST(SegLosses, RefusalsNameTheProblem) {
  SegLossProbe p;
  p.loss.kind = LossKind::classCE;
  EXPECT_THROW(emit_seg_loss_probe(p), Error);
  p.loss = {.kind = LossKind::perPixelWeightedCE, .class_weights = {1, 2}};  // 3 classes
  try {
    emit_seg_loss_probe(p);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lossWeights count (got 2, expected 3"), std::string::npos)
        << e.what();
  }
  p.loss = {.kind = LossKind::perPixelDice, .label_smoothing = 0.1};
  EXPECT_THROW(emit_seg_loss_probe(p), Error);
}

}  // namespace
}  // namespace netspec::emit::testing
