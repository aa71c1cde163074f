// `netspec data synth` (task table, formats, refusals) and `netspec emit --module
// probe-seg-loss` from the command line.
#include <gtest/gtest.h>

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
                       "(--format voc|coco))"),
            std::string::npos)
      << r.out;
  r = sh("data synth --task seg --format coco --n 5 -o " + dir.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown (expected pets or brats)"), std::string::npos) << r.out;
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
