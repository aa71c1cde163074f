// Detection training end to end on a small synthetic VOC set: both losses train through
// `run_training` (targets assigned per epoch, flips and affine on), report mAP in the epoch
// metrics / metrics.csv and write classes.json. (Learning to a real mAP takes minutes: the
// det-synth demo in docs/detection.md.)
#include "tasks/detection/det_train.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/datasets.h"
#include "data/synth_det.h"
#include "layers/param_table.h"
#include "train/trainer.h"
#include "train_test_util.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;

std::string synth_voc(int64_t n) {
  const std::string dir = test_util::tmpdir("det", "voc");
  data::SynthDetOptions o;
  o.dir = dir;
  o.n = n;
  o.size = 64;
  o.classes = 2;
  o.seed = 1;
  data::write_synth_det(o);
  return dir;
}

data::Splits load(const std::string& dir, int64_t side) {
  data::LoadOptions lo;
  lo.dir = dir;
  lo.height = lo.width = side;
  return data::load_dataset(DatasetKind::voc, lo);
}

TEST(DetTrain, YoloAnchorDetectorTrainsAndReportsMap) {
  const std::string dir = synth_voc(30);
  data::Splits data = load(dir, 64);
  ASSERT_NE(data.det, nullptr);
  EXPECT_EQ(data.class_names, (std::vector<std::string>{"ellipse", "rect"}));
  SpecFile s = test_util::det_tiny_spec();
  TrainConfig c = *s.train;
  c.useDiouBox = true;
  c.optimizer = OptimizerKind::adam;
  c.learningRate = 0.003;
  c.batchSize = 8;
  c.epochs = 3;
  c.augment = true;
  c.fpnAffineProb = 0.3;
  c.fpnAffineScale = 0.2;
  c.evalEveryNEpochs = 3;
  s.train = c;
  const std::string run = test_util::tmpdir("det", "run");
  std::ostringstream log;
  TrainResult r = run_training(s, data, {run, "cpu", &log});
  ASSERT_EQ(r.epochs.size(), 3u);
  EXPECT_NE(log.str().find("detPriorPi 0.01"), std::string::npos) << log.str();
  const EpochMetrics& last = r.epochs.back();
  ASSERT_TRUE(r.epochs[0].det && !r.epochs[0].evaluated && last.det && last.evaluated);
  EXPECT_EQ(last.map.voc_ap50.size(), 2u);
  EXPECT_GE(last.map.voc_map50, 0);
  EXPECT_LE(last.map.voc_map50, 1);
  EXPECT_LE(last.map.coco_map, last.map.voc_map50);
  EXPECT_EQ(last.val.count, 6);  // 30 images, val fraction 0.2
  EXPECT_LT(last.train_loss, r.epochs[0].train_loss);
  std::ifstream csv(fs::path(run) / "metrics.csv");
  std::string header;
  std::getline(csv, header);
  for (const char* col : {"val_map50", "val_map", "ap50_c1", "ap_c1"})
    EXPECT_NE(header.find(col), std::string::npos) << header;
  EXPECT_TRUE(fs::exists(fs::path(run) / "classes.json"));
  EXPECT_NE(log.str().find("mAP@0.5"), std::string::npos);
}

TEST(DetTrain, Yolov1MaskedGridTrains) {
  const std::string dir = synth_voc(40);
  data::Splits data = load(dir, 32);
  SpecFile s;
  s.net = NetBuilder("yolov1_tiny")
              .input(3, 32, 32)
              .add(ConvBn{3, 16, 3, 2})
              .add(ConvBn{16, 32, 3, 2})
              .add(Conv2d{32, 7, 1, 1, Padding::same, Activation::identity})
              .build();
  TrainConfig c;
  c.lossKind = LossKind::yolov1Masked;
  c.optimizer = OptimizerKind::adam;
  c.learningRate = 0.003;
  c.batchSize = 8;
  c.epochs = 3;
  s.train = c;
  TrainResult r = run_training(s, data, {});
  ASSERT_EQ(r.epochs.size(), 3u);
  EXPECT_TRUE(r.epochs.back().det);
  EXPECT_LT(r.epochs.back().train_loss, r.epochs[0].train_loss);
  // Targets: [N, 6 + K, 8, 8] with exactly one mask cell per box (none share a cell here or
  // the larger keeps it).
  DetTargets d = det_targets(s.net, build_param_table(s.net), c);
  EXPECT_EQ(d.gh, 8);
  Tensor y = assign_targets(d, data.det->train.boxes);
  ASSERT_EQ(y.shape(), (Shape{32, 8, 8, 8}));
}

TEST(DetTrain, RefusesAClassifierLossOnDetectionData) {
  data::Splits data = load(synth_voc(10), 32);
  SpecFile s;
  s.net = NetBuilder("cls").input(3, 32, 32).add(Flatten{}).add(Dense{3072, 2}).build();
  s.train = TrainConfig{};
  try {
    run_training(s, data, {});
    ADD_FAILURE() << "a classifier trained on boxes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds boxes (detection) but lossKind classCE"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace netspec::train
