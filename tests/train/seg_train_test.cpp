// Segmentation training: SegScorer's IoU / Dice / pixel accuracy on a hand-made confusion, and a
// short run of a tiny UNet on synthetic Pets files whose metrics.csv, epoch line and best.json
// carry mIoU (the best checkpoint is chosen by it).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/datasets.h"
#include "data/synth.h"
#include "spec/spec_json.h"
#include "tasks/segmentation/seg_metrics.h"
#include "train/trainer.h"
#include "train_test_util.h"

namespace netspec::train {
namespace {

// 1 sample, 2x2 pixels, 3 classes. Labels (0, 0, 1, 1); predictions (0, 1, 1, 1) (class 2
// absent from both). IoU_0 = 1/2, IoU_1 = 2/3; Dice_0 = 2/3, Dice_1 = 4/5; pixel acc 3/4.
TEST(SegMetrics, ConfusionByHand) {
  Tensor logits(DType::kF32, {1, 3, 2, 2});
  const int pred[4] = {0, 1, 1, 1};
  for (int i = 0; i < 4; ++i) logits.data<float>()[pred[i] * 4 + i] = 2.f;
  Tensor labels = Tensor::from<int>(DType::kI32, {1, 2, 2}, {0, 0, 1, 1});
  SegScorer s;
  s.add(logits, labels, 1);
  EvalMetrics m;
  s.fill(m);
  EXPECT_TRUE(m.seg);
  EXPECT_EQ(m.count, 4);
  EXPECT_NEAR(m.iou[0], 0.5, 1e-12);
  EXPECT_NEAR(m.iou[1], 2.0 / 3, 1e-12);
  EXPECT_TRUE(std::isnan(m.iou[2]));
  EXPECT_NEAR(m.miou, (0.5 + 2.0 / 3) / 2, 1e-12);
  EXPECT_NEAR(m.dice, (2.0 / 3 + 0.8) / 2, 1e-12);
  EXPECT_NEAR(m.top1, 0.75, 1e-12);
  EXPECT_EQ(m.score(), m.miou);
  // CE: 3 pixels score their label at 2 (log(e^2 + 2) - 2), one at 0 (log(e^2 + 2)).
  const double right = std::log(std::exp(2.0) + 2) - 2, wrong = std::log(std::exp(2.0) + 2);
  EXPECT_NEAR(m.loss, (3 * right + wrong) / 4, 1e-6);
}

TEST(SegTrain, TinyUnetOnSynthPetsLogsMiou) {
  const std::string data = test_util::tmpdir("seg", "data");
  data::synth_seg({.format = "pets", .n = 20, .out = data, .seed = 1});
  SpecFile spec = parse_spec(R"({"name": "tiny-unet", "inputChannels": 3, "inputHeight": 16,
    "inputWidth": 16, "layers": [{"kind": "convBn", "ic": 3, "oc": 8, "k": 3},
    {"kind": "unetDown", "ic": 8, "oc": 16}, {"kind": "unetUp", "ic": 16, "oc": 8},
    {"kind": "conv2d", "ic": 8, "oc": 3, "k": 1, "act": "identity"}],
    "train": {"dataset": "pets", "optimizer": "adam", "learningRate": 0.01, "batchSize": 8,
    "epochs": 2, "lossKind": "perPixelDiceCE", "augment": true}})",
                             "tiny-unet");
  data::LoadOptions lo;
  lo.dir = data;
  lo.height = lo.width = 16;
  data::Splits splits = data::load_dataset(DatasetKind::pets, lo);
  TrainOptions o;
  o.run_dir = test_util::tmpdir("seg", "run");
  std::ostringstream log;
  o.log = &log;
  TrainResult r = run_training(spec, splits, o);
  ASSERT_EQ(r.epochs.size(), 2u);
  const EvalMetrics& v = r.epochs.back().val;
  EXPECT_TRUE(v.seg);
  EXPECT_EQ(v.count, 4 * 16 * 16);  // every test pixel
  EXPECT_GT(v.miou, 0);
  EXPECT_LE(v.miou, 1);
  EXPECT_NE(log.str().find("mIoU"), std::string::npos) << log.str();
  std::ifstream csv(o.run_dir + "/metrics.csv");
  std::string header;
  std::getline(csv, header);
  for (const char* col : {"val_miou", "val_dice", "val_iou_0", "val_iou_1", "val_iou_2"})
    EXPECT_NE(header.find(col), std::string::npos) << header;
  std::ifstream bf(o.run_dir + "/best.json");
  nlohmann::json best = nlohmann::json::parse(bf);
  double best_miou = 0;
  for (const auto& e : r.epochs) best_miou = std::max(best_miou, e.val.miou);
  EXPECT_DOUBLE_EQ(best.at("val_miou").get<double>(), best_miou);
  EXPECT_DOUBLE_EQ(best.at("val_score").get<double>(), best_miou);
}

// perPixelWeightedCE trains: weights (1, 1, 1) give perPixelCE's run (same init, data order and
// steps; the weighted mean divides by Σw instead of the pixel count, so equal to f32 rounding),
// other weights a different one; a wrong weight count is refused.
TEST(SegTrain, WeightedCeTrainsAndAllOnesEqualsCe) {
  const std::string data = test_util::tmpdir("seg", "wdata");
  data::synth_seg({.format = "pets", .n = 16, .out = data, .seed = 2});
  data::LoadOptions lo;
  lo.dir = data;
  lo.height = lo.width = 16;
  const data::Splits splits = data::load_dataset(DatasetKind::pets, lo);
  auto run = [&](const std::string& loss) {
    SpecFile spec = parse_spec(R"({"name": "tiny-unet", "inputChannels": 3, "inputHeight": 16,
      "inputWidth": 16, "layers": [{"kind": "convBn", "ic": 3, "oc": 8, "k": 3},
      {"kind": "unetDown", "ic": 8, "oc": 16}, {"kind": "unetUp", "ic": 16, "oc": 8},
      {"kind": "conv2d", "ic": 8, "oc": 3, "k": 1, "act": "identity"}],
      "train": {"dataset": "pets", "optimizer": "adam", "learningRate": 0.01, "batchSize": 8,
      "epochs": 2, )" + loss + "}}",
                               "tiny-unet");
    TrainOptions o;
    o.run_dir = test_util::tmpdir("seg", "wrun");
    std::ostringstream log;
    o.log = &log;
    return run_training(spec, splits, o);
  };
  const TrainResult ce = run(R"("lossKind": "perPixelCE")");
  const TrainResult ones = run(R"("lossKind": "perPixelWeightedCE", "lossWeights": [1, 1, 1])");
  const TrainResult w = run(R"("lossKind": "perPixelWeightedCE", "lossWeights": [0.2, 5, 1])");
  ASSERT_EQ(ce.epochs.size(), 2u);
  ASSERT_EQ(ones.epochs.size(), 2u);
  ASSERT_EQ(w.epochs.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_NEAR(ones.epochs[e].train_loss, ce.epochs[e].train_loss, 1e-5 * ce.epochs[e].train_loss)
        << e;
    EXPECT_NEAR(ones.epochs[e].val.loss, ce.epochs[e].val.loss, 1e-5 * ce.epochs[e].val.loss) << e;
    EXPECT_TRUE(std::isfinite(w.epochs[e].train_loss)) << e;
    EXPECT_GT(std::abs(w.epochs[e].train_loss - ce.epochs[e].train_loss),
              1e-3 * ce.epochs[e].train_loss)
        << e;
  }
  // useTTA averages class logits of cropped/flipped views: refused for per-pixel logits.
  try {
    run(R"("lossKind": "perPixelCE", "useTTA": true, "augment": true)");
    ADD_FAILURE() << "useTTA was accepted for segmentation";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("set useTTA off for segmentation"), std::string::npos)
        << e.what();
  }
  try {
    run(R"("lossKind": "perPixelWeightedCE", "lossWeights": [1, 2])");
    ADD_FAILURE() << "two weights for three classes were accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("lossWeights count (got 2, expected 3"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace netspec::train
