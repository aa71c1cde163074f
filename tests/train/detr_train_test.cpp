// detrSet training on detection data: the per-image box rows, the host matching of the current
// predictions before each step (detr_match_labels), DETR's decoding, and a tiny DETR trained
// by run_training on synthetic VOC data whose loss falls and whose evaluation reports mAP.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "data/datasets.h"
#include "data/synth_det.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "tasks/detection/det_train.h"
#include "train/trainer.h"
#include "train_test_util.h"

namespace netspec::train {
namespace {

data::Splits synth_voc(int64_t n, int64_t side) {
  data::SynthDetOptions o;
  o.dir = test_util::tmpdir("detr", "voc");
  o.n = n;
  o.size = side;
  o.classes = 2;
  o.seed = 3;
  data::write_synth_det(o);
  data::LoadOptions lo;
  lo.dir = o.dir;
  lo.height = lo.width = side;
  return data::load_dataset(DatasetKind::voc, lo);
}

// 3x32x32 -> 16 patch tokens (dim 16) -> encoder -> decoder (6 queries) -> heads (2 classes).
NetSpec tiny_detr() {
  return NetBuilder("detr_tiny")
      .input(3, 32, 32)
      .add(PatchEmbed{3, 16, 8, 16, false})
      .add(TransformerEncoder{16, 2, 32, 1, false, true})
      .add(TransformerDecoder{.dim = 16, .heads = 2, .mlpDim = 32, .nBlocks = 1, .nQueries = 6})
      .add(DetrHeads{16, 2})
      .build();
}

TrainConfig detr_config() {
  TrainConfig c;
  c.lossKind = LossKind::detrSet;
  c.optimizer = OptimizerKind::adam;
  c.learningRate = 0.003;
  c.batchSize = 8;
  return c;
}

// Box rows hold each image's boxes in [0, 1] units (class -1 past them); matching puts every box
// on exactly one query and marks the other queries "no object" (class K = 2).
TEST(DetrTrain, BoxRowsAndMatchedLabels) {
  data::Splits data = synth_voc(12, 32);
  ASSERT_NE(data.det, nullptr);
  NetSpec net = tiny_detr();
  ParamTable t = build_param_table(net);
  TrainConfig c = detr_config();
  DetTargets d = det_targets(net, t, c);
  EXPECT_EQ(d.queries, 6);
  EXPECT_EQ(d.classes, 2);
  const auto& boxes = data.det->train.boxes;
  Tensor rows = assign_targets(d, boxes);
  ASSERT_EQ(rows.shape(), (Shape{int64_t(boxes.size()), 6, 5}));
  const data::Box& b0 = boxes.at(0).at(0);
  EXPECT_FLOAT_EQ(rows.data<float>()[0], float(b0.cls));
  EXPECT_FLOAT_EQ(rows.data<float>()[1], float((b0.x0 + b0.x1) / 64));
  EXPECT_FLOAT_EQ(rows.data<float>()[4], float(b0.h() / 32));
  EXPECT_FLOAT_EQ(rows.data<float>()[boxes[0].size() * 5], -1.0f);

  auto backend = exec::make_backend("cpu");
  Evaluator ev(net, 8, *backend, &t);
  std::vector<Tensor> params = init_params(t, c.init, 1);
  const int64_t n = 5;  // a short batch: zero-padded to the evaluator's 8
  Shape xs = data.det->train.x.shape();
  xs[0] = n;
  Tensor x(DType::kF32, xs);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = float((i * 37 % 101) / 101.0);
  Tensor rn(DType::kF32, {n, 6, 5});
  std::copy_n(rows.data<float>(), rn.numel(), rn.data<float>());
  Tensor lab = detr_match_labels(ev, params, {}, x, rn);
  ASSERT_EQ(lab.shape(), (Shape{n, 6, 5}));
  for (int64_t i = 0; i < n; ++i) {
    std::vector<std::vector<float>> want, got;
    for (const data::Box& b : boxes[size_t(i)])
      want.push_back({float(b.cls), float((b.x0 + b.x1) / 64), float((b.y0 + b.y1) / 64),
                      float(b.w() / 32), float(b.h() / 32)});
    for (int64_t q = 0; q < 6; ++q) {
      const float* r = lab.data<float>() + (i * 6 + q) * 5;
      if (r[0] != 2.0f) got.push_back({r, r + 5});
    }
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "image " << i;
  }
}

// Query 0: logits (2, 0, 0) -> class 0 with e²/(e² + 2), box (0.5, 0.5, 0.2, 0.4) of 100x50;
// query 1 is most likely "no object": its best real class scores 1/(2 + e³) < 0.05.
TEST(DetrTrain, DecodesQueriesWithoutNms) {
  Tensor rows = Tensor::from<float>(DType::kF32, {2, 7},
                                    {2, 0, 0, 0.5, 0.5, 0.2, 0.4, 0, 0, 3, 0.1, 0.1, 0.1, 0.1});
  std::vector<Detection> d = decode_detr(rows, 100, 50, 0.05, 4);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].image, 4);
  EXPECT_EQ(d[0].box.cls, 0);
  EXPECT_NEAR(d[0].score, std::exp(2.0) / (std::exp(2.0) + 2), 1e-6);
  EXPECT_NEAR(d[0].box.x0, 40, 1e-5);
  EXPECT_NEAR(d[0].box.y1, 35, 1e-5);
  EXPECT_EQ(decode_detr(rows, 100, 50, 0.0, 0).size(), 2u);
}

TEST(DetrTrain, TinyDetrTrainsWithHostMatching) {
  data::Splits data = synth_voc(60, 32);
  SpecFile s;
  s.net = tiny_detr();
  TrainConfig c = detr_config();
  c.epochs = 8;
  c.evalEveryNEpochs = 8;
  s.train = c;
  std::ostringstream log;
  TrainResult r = run_training(s, data, {test_util::tmpdir("detr", "run"), "cpu", &log});
  ASSERT_EQ(r.epochs.size(), 8u);
  const EpochMetrics& last = r.epochs.back();
  ASSERT_TRUE(last.det && last.evaluated);
  EXPECT_GE(last.map.voc_map50, 0);
  EXPECT_LE(last.map.voc_map50, 1);
  std::cout << "[ train ] detr_tiny: loss";
  for (const EpochMetrics& m : r.epochs) std::cout << " " << m.train_loss;
  std::cout << ", VOC mAP@0.5 " << last.map.voc_map50 << "\n";
  EXPECT_LT(last.train_loss, 0.8 * r.epochs[0].train_loss);
  EXPECT_NE(log.str().find("mAP@0.5"), std::string::npos) << log.str();
}

}  // namespace
}  // namespace netspec::train
