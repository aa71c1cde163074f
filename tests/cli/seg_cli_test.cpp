// `netspec data synth` (task table, formats, refusals), `netspec emit --module probe-seg-loss`,
// DDPM train/sample and `eval` of segmentation and DDPM runs from the command line.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_util.h"

namespace netspec::cli_test {
namespace {

TEST(SegCli, DataSynthWritesPetsAndRefusesUnknownTasks) {
  auto dir = temp_dir("seg_cli_", "pets");
  Result r = sh("data synth --task seg --format pets --n 5 -o " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "annotations" / "trimaps" / "synth_00005.png"));
  EXPECT_NE(r.out.find("wrote 5 seg samples (pets format)"), std::string::npos) << r.out;
  r = sh("data synth --task nope --format pets --n 5 -o " + dir.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--task nope: unknown (expected one of: seg (--format pets|brats), det "
                       "(--format voc|coco), nerf (--format transforms))"),
            std::string::npos)
      << r.out;
  r = sh("data synth --task seg --format coco --n 5 -o " + dir.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown (expected pets or brats)"), std::string::npos) << r.out;
}

// `eval` of a segmentation run prints mIoU, Dice and pixel accuracy: those of its best epoch.
TEST(SegCli, EvalOfASegmentationRunPrintsItsMiou) {
  auto dir = temp_dir("seg_cli_", "evalseg");
  ASSERT_EQ(sh("data synth --task seg --format pets --n 24 -o " + (dir / "pets").string()).status,
            0);
  std::ofstream(dir / "u.json") << R"({"name": "tiny-unet", "inputChannels": 3,
    "inputHeight": 16, "inputWidth": 16, "layers": [{"kind": "convBn", "ic": 3, "oc": 8, "k": 3},
    {"kind": "unetDown", "ic": 8, "oc": 16}, {"kind": "unetUp", "ic": 16, "oc": 8},
    {"kind": "conv2d", "ic": 8, "oc": 3, "k": 1, "act": "identity"}],
    "train": {"dataset": "pets", "optimizer": "adam", "learningRate": 0.01, "batchSize": 8,
    "epochs": 1, "lossKind": "perPixelCE"}})";
  Result r = sh("train " + (dir / "u.json").string() + " --data " + (dir / "pets").string() +
                " --run-dir " + (dir / "run").string());
  ASSERT_EQ(r.status, 0) << r.out;
  const size_t at = r.out.find("mIoU ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string miou = r.out.substr(at, r.out.find(' ', at + 5) - at);
  Result ev = sh("eval " + (dir / "run").string());
  ASSERT_EQ(ev.status, 0) << ev.out;
  EXPECT_NE(ev.out.find(miou + "  dice "), std::string::npos) << r.out << ev.out;
  EXPECT_NE(ev.out.find("pixel acc "), std::string::npos) << ev.out;
  EXPECT_EQ(ev.out.find("top-1"), std::string::npos) << ev.out;
}

TEST(SegCli, EmitSegLossProbe) {
  auto dir = temp_dir("seg_cli_", "probe");
  const std::string out = (dir / "dice.mlir").string();
  Result r =
      sh("emit --module probe-seg-loss --loss perPixelDiceCE --batch 2 --classes 4 "
         "--height 3 --width 5 --dtype f64 -o " +
         out);
  ASSERT_EQ(r.status, 0) << r.out;
  std::string m = slurp(dir / "dice.manifest.json");
  EXPECT_NE(m.find("\"probe-seg-loss\""), std::string::npos);
  EXPECT_NE(m.find("\"d_logits\""), std::string::npos);
  EXPECT_NE(slurp(out).find("tensor<2x4x3x5xf64>, %arg1: tensor<2x3x5xi32>"), std::string::npos);
  r = sh("emit --module probe-seg-loss --loss classCE -o " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--loss must be a per-pixel loss"), std::string::npos) << r.out;
}

// A one-epoch DDPM run on 64 Fashion-MNIST images (T = 50), then DDIM and ancestral samples.
TEST(SegCli, DdpmTrainAndSample) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist"))
    GTEST_SKIP() << "no Debian dataset-fashion-mnist";
  auto dir = temp_dir("seg_cli_", "ddpm");
  Result r =
      sh("train ddpm-unet --dataset fashion-mnist --limit 64 --epochs 1 --batch 32 "
         "--set ddpmSteps=50 --run-dir " +
         (dir / "run").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(noise mse)"), std::string::npos) << r.out;
  // `eval` of the run scores the noise MSE as the epoch's validation did (the same draws).
  Result ev = sh("eval " + (dir / "run").string());
  ASSERT_EQ(ev.status, 0) << ev.out;
  const size_t at = r.out.find("val loss ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string val = r.out.substr(at + 9, r.out.find(' ', at + 9) - at - 9);
  EXPECT_NE(ev.out.find("loss " + val + "  (noise mse)"), std::string::npos) << r.out << ev.out;
  r = sh("sample " + (dir / "run").string() + " --n 4 --ddim 5 -o " + (dir / "g.png").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("DDIM 5 steps"), std::string::npos) << r.out;
  EXPECT_GT(std::filesystem::file_size(dir / "g.png"), 50u);
  r = sh("sample " + (dir / "run").string() + " --n 2 --steps 10 -o " + (dir / "a.png").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("ancestral 10 steps"), std::string::npos) << r.out;
  r = sh("sample " + dir.string() + " -o " + (dir / "x.png").string());
  EXPECT_EQ(r.status, 2);
}

}  // namespace
}  // namespace netspec::cli_test
