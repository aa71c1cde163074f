// The commands after training read the run (issue 39, items 3-5), on small generated data:
// `eval` and `report` of a --val-split run score the validation split train held out (same
// samples: best.json's loss and accuracy come back) and say so; `report` takes --data from
// RUN/config.json; `cam` and the report name the run's classes (classes.json, else the
// dataset's); Grad-CAM works on nets without a globalAvgPool (the README's mnist-cnn).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "cli/cli_util.h"
#include "core/npy.h"
#include "core/tensor.h"
#include "data/image_fixture.h"
#include "exec/backend.h"
#include "viz/cam.h"
#include "viz/model.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

// A flat image folder DIR/<class>/*.png (no train/ val/ split): 16x16 gray images, dark with
// noise, class c lighting one 8x8 quadrant: bottom (0), left (1), top (2) after sorting.
constexpr int kPerClass = 20;
const char* const kClasses[] = {"bottom", "left", "top"};

std::vector<uint8_t> quadrant_image(int c, std::mt19937& r) {
  std::vector<uint8_t> px(16 * 16);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) {
      const bool on = c == 0 ? y >= 8 : c == 1 ? x < 8 : y < 8;
      px[y * 16 + x] = static_cast<uint8_t>((on ? 170 : 30) + r() % 50);
    }
  return px;
}

fs::path quadrant_folder(const fs::path& dir) {
  std::mt19937 r(11);
  for (int c = 0; c < 3; ++c) {
    fs::create_directories(dir / kClasses[c]);
    for (int i = 0; i < kPerClass; ++i)
      test::write_png((dir / kClasses[c] / fmt::format("{:02}.png", i)).string(), 16, 16,
                      PNG_FORMAT_GRAY, quadrant_image(c, r));
  }
  return dir;
}

// No globalAvgPool: Grad-CAM takes the last convolution's output [4, 8, 8].
constexpr const char* kFolderNet = R"({"name": "quad-cnn", "inputChannels": 1,
 "inputHeight": 16, "inputWidth": 16, "layers": [
  {"kind": "convBn", "ic": 1, "oc": 4, "k": 3, "stride": 2},
  {"kind": "maxPool", "size": 2, "stride": 2}, {"kind": "flatten"},
  {"kind": "dense", "in": 64, "out": 3}]})";

struct FolderRun {
  fs::path dir, data, run;
  Result train;
};

// One --val-split 0.25 run on the flat folder (60 images: 45 train, 15 validation), shared.
const FolderRun& folder_run() {
  static FolderRun f = [] {
    FolderRun x;
    x.dir = temp_dir("ns_views_cli_", "folder");
    x.data = quadrant_folder(x.dir / "data");
    std::ofstream(x.dir / "quad.json") << kFolderNet;
    x.run = x.dir / "run";
    x.train = sh(fmt::format(
        "train {} --dataset folder --data {} --val-split 0.25 --epochs 6 --batch 8 --lr 0.02 "
        "--run-dir {}",
        (x.dir / "quad.json").string(), x.data.string(), x.run.string()));
    return x;
  }();
  return f;
}

TEST(ViewsCli, EvalOfAValSplitRunScoresTheHeldOutSplitTrainValidatedOn) {
  const FolderRun& f = folder_run();
  ASSERT_EQ(f.train.status, 0) << f.train.out;
  ASSERT_TRUE(has(f.train.out, "45 train / 15 validation samples (0 test)")) << f.train.out;
  const json best = json::parse(slurp(f.run / "best.json"));
  ASSERT_EQ(best["val_count"], 15);  // round(0.25 · 60)
  Result e = sh("eval " + f.run.string());
  ASSERT_EQ(e.status, 0) << e.out;
  EXPECT_TRUE(has(e.out, "the validation split held out by --val-split 0.25 (15 samples)"))
      << e.out;
  EXPECT_TRUE(has(e.out, "count 15")) << e.out;
  // The same 15 samples as training's validation of the best epoch: its loss and top-1 come back.
  EXPECT_TRUE(has(e.out, fmt::format("loss {:.4f}", best["val_loss"].get<double>())))
      << e.out << best.dump();
  EXPECT_TRUE(has(e.out, fmt::format("top-1 {:.2f}%", 100 * best["val_top1"].get<double>())))
      << e.out << best.dump();
  // A flat folder has no test split: asked for, it is refused by name (not the loader's message).
  Result t = sh("eval " + f.run.string() + " --split test");
  EXPECT_EQ(t.status, 2) << t.out;
  EXPECT_TRUE(has(t.out, "has no test split (got 0 samples)")) << t.out;
  EXPECT_FALSE(has(t.out, "label rows differ")) << t.out;
}

TEST(ViewsCli, ReportOfAValSplitFolderRunReadsTheDataFromTheRun) {
  const FolderRun& f = folder_run();
  ASSERT_EQ(f.train.status, 0) << f.train.out;
  const json best = json::parse(slurp(f.run / "best.json"));
  Result r = sh("report " + f.run.string());  // no --data: config.json's
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string page = slurp(f.run / "report.html");
  EXPECT_TRUE(has(page, fmt::format("top-1 <b>{:.2f}%</b> on the validation split held out by "
                                    "--val-split 0.25 (15 samples)",
                                    100 * best["val_top1"].get<double>())))
      << page.substr(page.find("id=\"evaluation\""), 300);
  EXPECT_FALSE(has(page, "could not be loaded")) << page.substr(page.find("id=\"evaluation\""));
  EXPECT_FALSE(has(page, "not available")) << page.substr(page.find("id=\"gradcam\""));
  for (int c = 0; c < 3; ++c)  // the confusion matrix rows name classes.json's classes
    EXPECT_TRUE(has(page, fmt::format("<th class=\"name\">{} {}</th>", c, kClasses[c])))
        << kClasses[c];
  Result missing = sh("report " + (f.dir / "missing").string());
  EXPECT_EQ(missing.status, 2) << missing.out;
  EXPECT_TRUE(has(missing.out, "missing: no such run directory")) << missing.out;
  // --limit 6: six of the 15 samples, evenly strided.
  Result l = sh(
      fmt::format("report {} --limit 6 -o {}", f.run.string(), (f.dir / "limited.html").string()));
  ASSERT_EQ(l.status, 0) << l.out;
  EXPECT_TRUE(has(slurp(f.dir / "limited.html"), "(15 samples), 6 of them evenly strided"));
}

// A top-lit test image as PNG.
fs::path top_image(const fs::path& dir) {
  std::mt19937 r(99);
  const fs::path p = dir / "probe_top.png";
  test::write_png(p.string(), 16, 16, PNG_FORMAT_GRAY, quadrant_image(2, r));
  return p;
}

TEST(ViewsCli, CamNamesTheRunsClassesOnANetWithoutGlobalAvgPool) {
  const FolderRun& f = folder_run();
  ASSERT_EQ(f.train.status, 0) << f.train.out;
  const fs::path img = top_image(f.dir), out = f.dir / "cam";
  Result c = sh(fmt::format("cam {} {} -o {}", f.run.string(), img.string(), out.string()));
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_TRUE(has(c.out, "probe_top.png: Grad-CAM for top ->")) << c.out;
  for (const char* name : kClasses)  // the top-3 (all classes) by name, never "class K"
    EXPECT_TRUE(has(c.out, fmt::format("%  {}\n", name))) << c.out;
  EXPECT_FALSE(has(c.out, "class 0")) << c.out;
  EXPECT_GT(fs::file_size(out / "probe_top.cam.png"), 1000u);
  Result k =
      sh(fmt::format("cam {} {} --class 1 -o {}", f.run.string(), img.string(), out.string()));
  ASSERT_EQ(k.status, 0) << k.out;
  EXPECT_TRUE(has(k.out, "Grad-CAM for left ->")) << k.out;
}

// Sample k's input as the loader gives it: the class-k tile lit, normalised (Fashion-MNIST).
Tensor tile(int k) {
  Tensor x(DType::kF32, {1, 28, 28});
  for (int y = 0; y < 28; ++y)
    for (int c = 0; c < 28; ++c) {
      const bool on = y / 7 == k / 4 && c / 7 == k % 4;
      x.data<float>()[y * 28 + c] = ((on ? 0.8f : 0.1f) - 0.2860f) / 0.3530f;
    }
  return x;
}

// The README's own mnist-cnn (no globalAvgPool): `cam` draws a heatmap and names Fashion-MNIST's
// classes; its report reads --data from the run (64 generated test samples, not the 10,000 of
// the packaged set).
TEST(ViewsCli, CamAndReportWorkOnTheReadmesMnistCnn) {
  const fs::path dir = temp_dir("ns_views_cli_", "mnistcnn");
  const fs::path data = synthetic_fashion("ns_views_cli_", 256, 64, 3), run = dir / "run";
  Result t = sh(fmt::format("train mnist-cnn --data {} --epochs 1 --batch 64 --run-dir {}",
                            data.string(), run.string()));
  ASSERT_EQ(t.status, 0) << t.out;
  write_npy((dir / "tile0.npy").string(), tile(0));
  Result c = sh(fmt::format("cam {} {} --class 0 -o {}", run.string(), (dir / "tile0.npy").string(),
                            (dir / "cam").string()));
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_TRUE(has(c.out, "tile0.npy: Grad-CAM for T-shirt/top ->")) << c.out;
  EXPECT_TRUE(has(c.out, "%  Ankle boot\n")) << c.out;  // the top-5 by name
  EXPECT_GT(fs::file_size(dir / "cam" / "tile0.cam.png"), 1000u);
  // The map is the last convolution's [14, 14] output; for class k it should peak on the tile
  // that tells class k (a cell spans 2 input pixels; its receptive field more).
  viz::Model m = viz::load_model(run.string(), "", "");
  EXPECT_EQ(m.class_name(7), "Sneaker");
  auto be = exec::make_backend("cpu");
  viz::GradCam gc(m, 1, *be);
  int hits = 0, lit_maps = 0;
  std::string where;
  for (int k = 0; k < 10; ++k) {
    viz::CamOut o = gc.run(viz::stack({tile(k)}), 1, k).at(0);
    ASSERT_EQ(o.h, 14);
    const auto peak = std::max_element(o.map.begin(), o.map.end());
    const auto at = peak - o.map.begin();
    const int py = static_cast<int>(at / 14) * 2 + 1, px = static_cast<int>(at % 14) * 2 + 1;
    const int ty = 7 * (k / 4), tx = 7 * (k % 4);
    const bool lit = *peak > 0;  // an all-zero map: ReLU(Σ α_c A_c) <= 0 everywhere
    lit_maps += lit;
    hits += lit && py >= ty - 2 && py <= ty + 8 && px >= tx - 2 && px <= tx + 8;
    where += fmt::format(" class {}: {} ({}, {});", k, lit ? "peak at" : "empty map", py, px);
  }
  std::cout << fmt::format(
      "[ grad-cam mnist-cnn ] {} of 10 maps drawn, {} peak on the class's "
      "tile:{}\n",
      lit_maps, hits, where);
  // After one short epoch some classes still give ReLU(Σ α_c A_c) = 0 everywhere (measured: 6
  // maps drawn); every map drawn must point at its tile.
  EXPECT_GE(lit_maps, 5) << where;
  EXPECT_EQ(hits, lit_maps) << where;
  Result r = sh(fmt::format("report {} --cam 2 --wrong 2", run.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string page = slurp(run / "report.html");
  EXPECT_TRUE(has(page, "on the test split (64 samples) of fashionMnist"))
      << page.substr(page.find("id=\"evaluation\""), 300);
  EXPECT_TRUE(has(page, "<th class=\"name\">0 T-shirt/top</th>"));
  EXPECT_FALSE(has(page, "not available")) << page.substr(page.find("id=\"gradcam\""));
}

}  // namespace
}  // namespace netspec::cli_test
