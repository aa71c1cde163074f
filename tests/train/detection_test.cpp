// Detection decoding, NMS, VOC AP by hand, and COCO AP against pycocotools (BUILD_DIR/venv) on a
// fixed set of detections to 1e-6.
#include "tasks/detection/detection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

namespace netspec::train {
namespace {

using data::Box;
namespace fs = std::filesystem;

TEST(Detection, NmsPerClassWithThresholdsAndCap) {
  std::vector<Detection> d{{0, {0, 0, 10, 10, 0}, 0.9},   {0, {1, 1, 11, 11, 0}, 0.8},
                           {0, {1, 1, 11, 11, 1}, 0.7},   {0, {20, 20, 30, 30, 0}, 0.6},
                           {0, {21, 20, 31, 30, 0}, 0.2}, {0, {50, 50, 60, 60, 0}, 0.05}};
  // IoU of the first two = 81 / 119 = .68 > .5: dropped; class 1 is not suppressed by class 0.
  std::vector<Detection> k = nms(d, 0.5, 0.1, 100);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0].score, 0.9);
  EXPECT_EQ(k[1].score, 0.7);
  EXPECT_EQ(k[2].score, 0.6);  // 0.2 suppressed (IoU .82), 0.05 under the score threshold
  EXPECT_EQ(nms(d, 0.7, 0.0, 100).size(), 5u);  // .68 < .7 now: kept; .82 still suppressed
  EXPECT_EQ(nms(d, 0.5, 0.1, 2).size(), 2u);
}

TEST(Detection, DecodeAnchorRowsByHand) {
  // 32x32 image, strides 8 / 16 (grids 4, 2), A = 1 anchor 16x8: rows 16 + 4. Row 16 + 3 is the
  // coarse level's cell (y 1, x 1).
  data::AnchorSpec s{{16, 8}, {8, 16}, 0};
  Tensor rows(DType::kF32, {20, 7});
  float* p = rows.data<float>();
  for (int64_t r = 0; r < 20; ++r) p[r * 7 + 4] = -10;  // objectness ~0
  float* z = p + 19 * 7;
  z[0] = 0;                         // σ = .5
  z[1] = std::log(3.0f);            // σ = .75
  z[2] = std::log(2.0f);            // w = 32
  z[3] = 0;                         // h = 8
  z[4] = std::log(4.0f);            // σ = .8
  z[5] = 0, z[6] = std::log(3.0f);  // softmax .25, .75 -> class 1
  auto d = decode_anchor_rows(rows, s, 32, 32, 0.1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NEAR(d[0].score, 0.8 * 0.75, 1e-6);
  EXPECT_EQ(d[0].box.cls, 1);
  // centre ((1 + .5)·16, (1 + .75)·16) = (24, 28), size 32 x 8
  EXPECT_NEAR(d[0].box.x0, 8, 1e-5);
  EXPECT_NEAR(d[0].box.x1, 40, 1e-5);
  EXPECT_NEAR(d[0].box.y0, 24, 1e-5);
  EXPECT_NEAR(d[0].box.y1, 32, 1e-5);
}

TEST(Detection, VocApByHand) {
  // Two GT in two images; detections .9 (TP), .8 (FP: IoU .25), .7 (TP): recall .5, .5, 1 and
  // precision 1, .5, 2/3 -> interpolated AP = .5·1 + .5·2/3.
  std::vector<std::vector<Box>> gts{{{0, 0, 10, 10, 0}}, {{0, 0, 10, 10, 0}}};
  std::vector<Detection> d{
      {0, {0, 0, 10, 10, 0}, 0.9}, {1, {5, 0, 15, 10, 0}, 0.8}, {1, {1, 0, 10, 10, 0}, 0.7}};
  DetMetrics m = evaluate_detections(d, gts, 2);
  EXPECT_NEAR(m.voc_ap50[0], 0.5 + 0.5 * 2.0 / 3.0, 1e-12);
  EXPECT_EQ(m.voc_ap50[1], -1);  // no ground truth: not in the mean
  EXPECT_NEAR(m.voc_map50, m.voc_ap50[0], 1e-12);
  // A duplicate of a matched box is a false positive in both metrics.
  d.push_back({0, {0, 0, 10, 10, 0}, 0.95});
  m = evaluate_detections(d, gts, 2);
  EXPECT_LT(m.voc_ap50[0], 0.5 + 0.5 * 2.0 / 3.0);
}

std::string run_capture(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  char buf[256];
  while (p && fgets(buf, sizeof buf, p.get())) out += buf;
  return out;
}

TEST(Detection, CocoMapMatchesPycocotools) {
  const fs::path py = fs::path(NETSPEC_BINARY_DIR) / "venv/bin/python";
  if (!fs::exists(py) ||
      std::system((py.string() + " -c 'import pycocotools' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "pycocotools not installed in BUILD_DIR/venv (scripts/install-oracles.sh)";
  // 25 images, 3 classes: GT 0-4 boxes each; detections = jittered GT (some dropped, some
  // duplicated) plus random false positives, scores random.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<Box>> gts(25);
  std::vector<Detection> dets;
  nlohmann::json gj, dj = nlohmann::json::array();
  gj["images"] = nlohmann::json::array();
  gj["annotations"] = nlohmann::json::array();
  gj["categories"] = {
      {{"id", 1}, {"name", "a"}}, {{"id", 2}, {"name", "b"}}, {{"id", 3}, {"name", "c"}}};
  int ann = 1;
  for (int i = 0; i < 25; ++i) {
    gj["images"].push_back({{"id", i + 1}, {"width", 200}, {"height", 200}});
    const int n = int(u(rng) * 5);
    for (int k = 0; k < n; ++k) {
      const double x = 150 * u(rng), y = 150 * u(rng), w = 8 + 40 * u(rng), h = 8 + 40 * u(rng);
      Box b{x, y, x + w, y + h, int(u(rng) * 3)};
      gts[i].push_back(b);
      gj["annotations"].push_back({{"id", ann++},
                                   {"image_id", i + 1},
                                   {"category_id", b.cls + 1},
                                   {"bbox", {x, y, w, h}},
                                   {"area", w * h},
                                   {"iscrowd", 0}});
      const int copies = u(rng) < 0.15 ? 0 : (u(rng) < 0.2 ? 2 : 1);
      for (int c = 0; c < copies; ++c) {
        const double j = 0.25 * w;
        Box d{b.x0 + j * (u(rng) - 0.5), b.y0 + j * (u(rng) - 0.5), b.x1 + j * (u(rng) - 0.5),
              b.y1 + j * (u(rng) - 0.5), u(rng) < 0.1 ? int(u(rng) * 3) : b.cls};
        dets.push_back({i, d, u(rng)});
      }
    }
    for (int k = 0; k < 2; ++k) {
      const double x = 150 * u(rng), y = 150 * u(rng);
      dets.push_back(
          {i, {x, y, x + 20 * u(rng) + 5, y + 20 * u(rng) + 5, int(u(rng) * 3)}, u(rng)});
    }
  }
  for (const Detection& d : dets)
    dj.push_back({{"image_id", d.image + 1},
                  {"category_id", d.box.cls + 1},
                  {"bbox", {d.box.x0, d.box.y0, d.box.w(), d.box.h()}},
                  {"score", d.score}});
  const fs::path dir = fs::temp_directory_path() / "netspec_coco_oracle";
  fs::create_directories(dir);
  std::ofstream(dir / "gt.json") << gj.dump();
  std::ofstream(dir / "dt.json") << dj.dump();
  const std::string out =
      run_capture(py.string() + " " + NETSPEC_SOURCE_DIR + "/tests/train/coco_oracle.py " +
                  (dir / "gt.json").string() + " " + (dir / "dt.json").string());
  std::istringstream in(out);
  std::vector<double> want;
  for (double v; in >> v;) want.push_back(v);
  ASSERT_EQ(want.size(), 5u) << out;
  // Our boxes go through xywh JSON and back in pycocotools: compare on the same rounding.
  for (Detection& d : dets) {
    const double w = d.box.w(), h = d.box.h();
    d.box.x1 = d.box.x0 + w;
    d.box.y1 = d.box.y0 + h;
  }
  DetMetrics m = evaluate_detections(dets, gts, 3);
  EXPECT_NEAR(m.coco_map, want[0], 1e-6);
  EXPECT_NEAR(m.coco_ap50, want[1], 1e-6);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(m.coco_ap[c], want[2 + c], 1e-6) << c;
  EXPECT_GT(m.coco_map, 0.2);  // a non-trivial case: many TPs at low IoU thresholds
  EXPECT_LT(m.coco_map, 0.9);
}

}  // namespace
}  // namespace netspec::train

namespace netspec::train {
namespace {

TEST(Detection, DecodeYolov1GridByHand) {
  // 64x32 image, grid 2x4 (cells 16 x 16), K = 2: cell (i 1, j 2) holds x .25, y .5, w .5,
  // h .25, conf .8, class scores (.1, .9).
  Tensor g(DType::kF32, {7, 2, 4});
  const float v[7] = {0.25f, 0.5f, 0.5f, 0.25f, 0.8f, 0.1f, 0.9f};
  for (int c = 0; c < 7; ++c) g.data<float>()[(c * 2 + 1) * 4 + 2] = v[c];
  auto d = decode_yolov1(g, 64, 32, false, 0.5);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].box.cls, 1);
  EXPECT_NEAR(d[0].score, 0.72, 1e-6);
  // centre ((2 + .25)·16, (1 + .5)·16) = (36, 24), size (.5·64, .25·32) = (32, 8)
  EXPECT_NEAR(d[0].box.x0, 20, 1e-5);
  EXPECT_NEAR(d[0].box.x1, 52, 1e-5);
  EXPECT_NEAR(d[0].box.y0, 20, 1e-5);
  EXPECT_NEAR(d[0].box.y1, 28, 1e-5);
}

}  // namespace
}  // namespace netspec::train
