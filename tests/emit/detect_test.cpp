// fpnDetect and the yoloAnchor loss: output layout against a host FPN, cam features, gradcheck
// (f64, ref and cpu) of a tiny detector net and of the loss alone, the loss value against a
// formula written out here, and the field checks naming anchors / fpnScales / yoloClsWeights.
#include <cmath>

#include "emit_test_util.h"
#include "hlo/builder.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"

namespace netspec::emit::testing {
namespace {

using losses::LossOptions;

double sigmoid(double z) { return 1 / (1 + std::exp(-z)); }
double softplus(double z) { return std::log1p(std::exp(z)); }  // BCE(z, 0); BCE(z, 1) = sp(-z)

// @main(pred, labels) -> yoloAnchor loss.
std::unique_ptr<hlo::Module> loss_module(const LossOptions& o, const Shape& pred) {
  auto m = std::make_unique<hlo::Module>();
  m->name = "yolo_loss";
  hlo::Type pt = hlo::Type::tensor(DType::kF32, pred);
  hlo::Func* f = m->add_func("main", {pt, losses::label_type(o, pt)});
  hlo::Builder b(f->body.get());
  b.func_return({losses::emit_loss(b, o, f->arg(0), f->arg(1))});
  return m;
}

LossOptions yolo_opts(std::vector<double> anchors, std::vector<double> scales, bool diou,
                      std::vector<double> weights = {}, double gamma = 0) {
  LossOptions o;
  o.kind = LossKind::yoloAnchor;
  o.anchors = std::move(anchors);
  o.fpn_scales = std::move(scales);
  o.diou_box = diou;
  o.cls_weights = std::move(weights);
  o.cls_focal_gamma = gamma;
  return o;
}

// Labels [B, N, 6]: every k-th row of each image is an object with varied targets; the other rows
// carry junk targets (1e30: exp would overflow) that the loss must ignore.
Tensor make_labels(int64_t batch, int64_t n, int64_t classes, int64_t every) {
  std::vector<double> v;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < n; ++r) {
      const bool obj = (r + 3 * b) % every == 1;
      const double u = 0.1 + 0.8 * std::fmod(0.37 * double(r + 7 * b), 1.0);
      if (obj)
        v.insert(v.end(), {1.0, u, 1 - u, 0.6 * u - 0.3, 0.2 - 0.5 * u, double((r + b) % classes)});
      else
        v.insert(v.end(), {0.0, 5.0, -5.0, 1e30, 1e30, 99.0});
    }
  return Tensor::from<double>(DType::kF32, {batch, n, 6}, v);
}

// One positive in image 0 (row 17: level 1, stride 16, anchor 32x24 px = 2 x 1.5 cells), none in
// image 1: the loss against the formula written out with doubles.
TEST(YoloAnchor, ValueByHand) {
  const int64_t n = 21, oc = 7;
  for (bool diou : {true, false}) {
    SCOPED_TRACE(diou ? "diou" : "mse");
    LossOptions o = yolo_opts({32, 24}, {8, 16, 32}, diou, {0.5, 2.0}, 1.5);
    std::vector<double> p(2 * n * oc, 0.0), l(2 * n * 6, 0.0);
    const double tx = 0.3, ty = -0.2, tw = 0.1, th = -0.4, obj = 1.5, c0 = 0.2, c1 = -0.7;
    const double gx = 0.6, gy = 0.35, gw = 0.25, gh = -0.1;
    std::copy_n(std::vector<double>{tx, ty, tw, th, obj, c0, c1}.begin(), oc, &p[17 * oc]);
    p[3 * oc + 4] = -1.0;       // a negative row with a non-zero objectness logit
    p[(n + 5) * oc + 4] = 0.8;  // image 1
    p[(n + 5) * oc + 0] = 3.0;  // box logits of a negative row do not count
    std::copy_n(std::vector<double>{1, gx, gy, gw, gh, 1}.begin(), 6, &l[17 * 6]);
    std::copy_n(std::vector<double>{0, 9, 9, 1e30, 1e30, 0}.begin(), 6, &l[4 * 6]);  // junk
    Tensor pred = Tensor::from<double>(DType::kF32, {2, n, oc}, p);
    Tensor lab = Tensor::from<double>(DType::kF32, {2, n, 6}, l);

    const double ln2 = std::log(2.0);
    double obj0 = (19 * ln2 + softplus(-obj) + softplus(-1.0)) / n;
    double box = 0;
    if (diou) {
      const double aw = 32.0 / 16, ah = 24.0 / 16;  // anchor in cells at stride 16
      double pcx = sigmoid(tx), pcy = sigmoid(ty), pw = aw * std::exp(tw), ph = ah * std::exp(th);
      double gcw = aw * std::exp(gw), gch = ah * std::exp(gh);
      double l1 = std::max(pcx - pw / 2, gx - gcw / 2), r1 = std::min(pcx + pw / 2, gx + gcw / 2);
      double t1 = std::max(pcy - ph / 2, gy - gch / 2), b1 = std::min(pcy + ph / 2, gy + gch / 2);
      double inter = std::max(r1 - l1, 0.0) * std::max(b1 - t1, 0.0);
      double iou = inter / (pw * ph + gcw * gch - inter);
      double ew = std::max(pcx + pw / 2, gx + gcw / 2) - std::min(pcx - pw / 2, gx - gcw / 2);
      double eh = std::max(pcy + ph / 2, gy + gch / 2) - std::min(pcy - ph / 2, gy - gch / 2);
      double d2 = (pcx - gx) * (pcx - gx) + (pcy - gy) * (pcy - gy);
      box = 1 - iou + d2 / (ew * ew + eh * eh);
    } else {
      box = std::pow(sigmoid(tx) - gx, 2) + std::pow(sigmoid(ty) - gy, 2) + std::pow(tw - gw, 2) +
            std::pow(th - gh, 2);
    }
    double p1 = std::exp(c1) / (std::exp(c0) + std::exp(c1));
    double cls = -2.0 * std::pow(1 - p1, 1.5) * std::log(p1);
    double img0 = obj0 + box + cls;
    double img1 = (20 * ln2 + softplus(0.8)) / n;
    double want = (img0 + img1) / 2;
    auto m = loss_module(o, {2, n, oc});
    for (const char* be : {"ref", "cpu"}) {
      double got = run_main(*m, {pred, lab}, be)[0].as_double(0);
      EXPECT_NEAR(got, want, 1e-5 * want) << be;
    }
  }
}

// The loss alone, f64 gradcheck w.r.t. the predictions (labels fixed): DIoU and MSE boxes,
// per-class weights and focal γ, shared and level-by-level anchor lists.
TEST(YoloAnchor, GradcheckRefAndCpu) {
  struct Case {
    LossOptions o;
    int64_t a;
  };
  std::vector<Case> cases;
  cases.push_back({yolo_opts({12, 10, 30, 20}, {4, 8, 16}, true, {0.5, 1.0, 2.0}, 2.0), 2});
  cases.push_back({yolo_opts({12, 10, 30, 20}, {4, 8, 16}, false, {1.5, 0.5, 1.0}, 1.0), 2});
  LossOptions lv = yolo_opts({8, 6, 10, 12, 20, 16, 24, 30, 40, 36, 60, 50}, {8, 16, 32}, true,
                             {2.0, 0.5, 1.0}, 1.5);
  lv.det_anchors = 2;  // 6 pairs = 2 per level, level by level
  cases.push_back({lv, 2});
  for (const Case& c : cases) {
    const int64_t n = 21 * c.a, oc = 8;
    auto m = loss_module(c.o, {2, n, oc});
    autodiff::GradcheckOptions g;
    g.wrt = {0};
    g.fixed_inputs[1] = make_labels(2, n, 3, 5);
    for (const char* be : {"ref", "cpu"}) {
      g.backend = be;
      autodiff::GradcheckReport r = autodiff::gradcheck(*m, g);
      EXPECT_TRUE(r.ok) << be << " diou " << c.o.diou_box << "\n" << r.str();
    }
  }
}

TEST(YoloAnchor, RefusesFieldsThatDoNotFitTheHead) {
  auto expect_error = [](const LossOptions& o, int64_t n, const std::string& field) {
    try {
      loss_module(o, {1, n, 7});
      ADD_FAILURE() << "no error for " << field;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  expect_error(yolo_opts({16, 16}, {8, 16}, true), 21, "fpnScales");
  expect_error(yolo_opts({16, 16}, {8, 16, 24}, true), 21, "fpnScales");
  expect_error(yolo_opts({16, 16, 4}, {8, 16, 32}, true), 21, "anchors");
  expect_error(yolo_opts({16, 16, 32, 32}, {8, 16, 32}, true), 21, "anchors");  // 2 per cell
  expect_error(yolo_opts({16, 16}, {8, 16, 32}, true, {1, 2, 3}), 21, "yoloClsWeights");
  LossOptions o = yolo_opts({16, 16, 32, 32}, {8, 16, 32}, true);
  o.det_anchors = 3;  // 2 pairs fit neither 3 shared nor 9 level by level
  expect_error(o, 63, "anchors");
}

// C3 = the input [3, 8, 8], C4 / C5 = 2x2 max pools of it; lateral and smooth convs set to the
// identity, no tower: the head is the pred 1x1 conv on P3 = C3 + up(P4), P4 = C4 + up(C5), P5 = C5.
// Rows must be (level, y, x, anchor) with channel a·oc + o, and cam's features P3.
TEST(FpnDetect, OutputLayoutMatchesAHostFpn) {
  const int64_t B = 2, C = 3, A = 2, OC = 6;
  NetSpec net = NetBuilder("fpn_layout")
                    .input(C, 8, 8)
                    .add(MaxPool{2, 2, Padding::valid})
                    .add(MaxPool{2, 2, Padding::valid})
                    .add(FpnDetect{OC, C, C, C, C, A, 0})
                    .build();
  ParamTable t = build_param_table(net);
  ASSERT_EQ(t.output, (Shape{A * (64 + 16 + 4), OC}));
  std::vector<Tensor> params;
  Tensor pw, pb;
  for (size_t i = 0; i < t.params.size(); ++i) {
    const ParamDesc& d = t.params[i];
    Tensor p(DType::kF32, d.shape);  // zero
    if (d.name.find("pred") != std::string::npos) {
      p = random_tensor(hlo::Type::tensor(DType::kF32, d.shape), 50 + i);
      (d.shape.size() == 4 ? pw : pb) = p;
    } else if (d.shape.size() == 4) {  // identity 1x1 (lateral) or centre tap (smooth 3x3)
      const int64_t k = d.shape[2];
      for (int64_t c = 0; c < C; ++c) p.data<float>()[((c * C + c) * k + k / 2) * k + k / 2] = 1;
    }
    params.push_back(p);
  }
  Tensor x = random_tensor(hlo::Type::tensor(DType::kF32, {B, C, 8, 8}), 3);
  // Host pyramid: lv[0] = P3 (8x8), lv[1] = P4 (4x4), lv[2] = P5 (2x2), each [B][C][h][w].
  auto at = [](const std::vector<float>& v, int64_t h, int64_t b, int64_t c, int64_t y,
               int64_t xx) { return v[((b * C + c) * h + y) * h + xx]; };
  std::vector<std::vector<float>> cs(3);
  cs[0].assign(x.data<float>(), x.data<float>() + x.numel());
  for (int lvl = 1; lvl < 3; ++lvl) {
    const int64_t h = 8 >> lvl;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t xx = 0; xx < h; ++xx) {
            float m = -1e30f;
            for (int dy = 0; dy < 2; ++dy)
              for (int dx = 0; dx < 2; ++dx)
                m = std::max(m, at(cs[lvl - 1], 2 * h, b, c, 2 * y + dy, 2 * xx + dx));
            cs[lvl].push_back(m);
          }
  }
  std::vector<std::vector<float>> lv = cs;
  for (int lvl = 1; lvl >= 0; --lvl) {
    const int64_t h = 8 >> lvl;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t xx = 0; xx < h; ++xx)
            lv[lvl][((b * C + c) * h + y) * h + xx] += at(lv[lvl + 1], h / 2, b, c, y / 2, xx / 2);
  }
  EmitOptions o;
  o.batch = B;
  std::vector<Tensor> in = params;
  in.push_back(x);
  for (const char* be : {"ref", "cpu"}) {
    Tensor y = run_main(*emit_module(net, ModuleKind::forward, o).module, in, be)[0];
    ASSERT_EQ(y.shape(), (Shape{B, A * 84, OC}));
    double err = 0;
    const int64_t offset[3] = {0, A * 64, A * 80};
    for (int lvl = 0; lvl < 3; ++lvl) {
      const int64_t h = 8 >> lvl;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t yy = 0; yy < h; ++yy)
          for (int64_t xx = 0; xx < h; ++xx)
            for (int64_t a = 0; a < A; ++a)
              for (int64_t oo = 0; oo < OC; ++oo) {
                double want = pb.as_double(a * OC + oo);
                for (int64_t c = 0; c < C; ++c)
                  want += pw.as_double((a * OC + oo) * C + c) * at(lv[lvl], h, b, c, yy, xx);
                int64_t row = offset[lvl] + (yy * h + xx) * A + a;
                err = std::max(err, std::abs(y.as_double((b * A * 84 + row) * OC + oo) - want));
              }
    }
    EXPECT_LT(err, 1e-5) << be;
    Emitted cam = emit_module(net, ModuleKind::cam, o);
    ASSERT_EQ(cam.manifest.outputs.at(0).name, "features");
    Tensor f = run_main(*cam.module, in, be)[0];
    ASSERT_EQ(f.shape(), (Shape{B, C, 8, 8}));
    double ferr = 0;
    for (int64_t i = 0; i < f.numel(); ++i)
      ferr = std::max(ferr, std::abs(f.as_double(i) - lv[0][i]));
    EXPECT_LT(ferr, 1e-6) << be;
  }
}

// A tiny backbone (16x16 -> C3 8x8, C4 4x4, C5 2x2) + fpnDetect with one shared BN tower layer:
// the train-step loss (yoloAnchor, DIoU, weights, focal) passes gradcheck w.r.t. every
// parameter on ref and cpu; the tower BN reports one statistic over all 84 positions per image.
TEST(FpnDetect, TinyDetectorPassesGradcheckRefAndCpu) {
  NetSpec net = NetBuilder("tiny_det")
                    .input(2, 16, 16)
                    .add(ConvBn{2, 3, 3, 2})
                    .add(ConvBn{3, 4, 3, 2})
                    .add(ConvBn{4, 4, 3, 2})
                    .add(FpnDetect{7, 3, 4, 4, 2, 2, 1})
                    .build();
  ParamTable t = build_param_table(net);
  const int64_t n = 2 * 84;
  EmitOptions o;
  o.batch = 2;
  o.loss = yolo_opts({12, 10, 30, 20}, {2, 4, 8}, true, {0.7, 1.3}, 2.0);
  o.loss = losses::for_net(o.loss, net);
  EXPECT_EQ(o.loss.det_anchors, 2);
  Emitted e = emit_module(net, ModuleKind::loss, o);
  autodiff::GradcheckOptions g;
  for (size_t i = 0; i < t.params.size(); ++i) g.wrt.push_back(i);
  g.fixed_inputs[t.params.size() + 1] = make_labels(2, n, 2, 7);
  for (const char* be : {"ref", "cpu"}) {
    g.backend = be;
    autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
    EXPECT_TRUE(r.ok) << be << "\n" << r.str();
  }
  Emitted fw = emit_module(net, ModuleKind::forward, o);
  bool found = false;
  for (const TensorInfo& ti : fw.manifest.outputs)
    if (ti.name.find("tower.0.bn.batch_mean") != std::string::npos) {
      found = true;
      EXPECT_EQ(ti.count, 2 * 84);  // B · (8·8 + 4·4 + 2·2)
    }
  EXPECT_TRUE(found);
}

// The zoo detectors at their own 256x256 input with their own TrainConfig: the train step emits
// with yoloAnchor labels [B, 3·(32² + 16² + 8²), 6] (shared anchors, read with and without the
// net's anchor count), and a coarsest stride other than detStride is refused by name.
TEST(FpnDetect, ZooDetectorsEmitTheirTrainStep) {
  for (const char* name : {"yolo-csp", "fpn-det"}) {
    SpecFile spec = load_spec_file(std::string(NETSPEC_SOURCE_DIR) + "/models/" + name + ".json");
    ASSERT_TRUE(spec.train.has_value()) << name;
    EmitOptions o = EmitOptions::from_train(*spec.train, 1);
    for (bool bind : {false, true}) {
      if (bind) o.loss = losses::for_net(o.loss, spec.net);
      Emitted e = emit_module(spec.net, ModuleKind::train_step, o);
      bool found = false;
      for (const TensorInfo& ti : e.manifest.inputs)
        if (ti.role == "label") {
          found = true;
          EXPECT_EQ(ti.shape, (Shape{1, 3 * (1024 + 256 + 64), 6})) << name;
        }
      EXPECT_TRUE(found) << name;
    }
    LossOptions bad = o.loss;
    bad.fpn_scales = {4, 8, 16};
    try {
      losses::for_net(bad, spec.net);
      ADD_FAILURE() << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("fpnScales"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace netspec::emit::testing
