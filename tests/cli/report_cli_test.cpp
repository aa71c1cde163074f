// Pictures from the command line (issue 18) on a small GAP CNN trained on synthetic
// Fashion-MNIST-shaped data: `netspec cam` (Grad-CAM PNG per input + top-5), `predict --png`
// (a grid), `netspec report` (self-contained report.html), and that page rendered by headless
// Chromium (screenshot not blank, every section in the DOM); skipped when chromium is absent.
// NETSPEC_PICTURES_DIR=DIR keeps copies of the pictures to look at.
#include <gtest/gtest.h>
#include <png.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "cli/cli_util.h"
#include "core/npy.h"
#include "core/tensor.h"
#include "exec/backend.h"
#include "viz/cam.h"
#include "viz/model.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSpec = R"({
  "name": "tiny-gap",
  "inputChannels": 1, "inputHeight": 28, "inputWidth": 28,
  "layers": [
    {"kind": "convBn", "ic": 1, "oc": 8, "k": 3, "stride": 2},
    {"kind": "convBn", "ic": 8, "oc": 16, "k": 3},
    {"kind": "globalAvgPool"}, {"kind": "flatten"},
    {"kind": "dense", "in": 16, "out": 10}
  ],
  "train": {"dataset": "fashionMnist", "optimizer": "adam", "learningRate": 0.003,
            "batchSize": 32, "epochs": 2}
})";

struct Png {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

Png read_png(const fs::path& p) {
  png_image pi{};
  pi.version = PNG_IMAGE_VERSION;
  Png out;
  if (!png_image_begin_read_from_file(&pi, p.c_str())) return out;
  pi.format = PNG_FORMAT_RGB;
  out.rgb.resize(PNG_IMAGE_SIZE(pi));
  if (!png_image_finish_read(&pi, nullptr, out.rgb.data(), 0, nullptr)) return {};
  out.width = static_cast<int>(pi.width);
  out.height = static_cast<int>(pi.height);
  return out;
}

// Distinct colours (quantised to 4 bits per channel) and the share of non-white pixels.
std::pair<size_t, double> colour_stats(const Png& p) {
  std::set<int> colours;
  size_t ink = 0;
  for (size_t i = 0; i + 2 < p.rgb.size(); i += 3) {
    colours.insert((p.rgb[i] >> 4) << 8 | (p.rgb[i + 1] >> 4) << 4 | p.rgb[i + 2] >> 4);
    ink += p.rgb[i] < 240 || p.rgb[i + 1] < 240 || p.rgb[i + 2] < 240;
  }
  return {colours.size(), p.rgb.empty() ? 0 : 3.0 * ink / p.rgb.size()};
}

void keep(const fs::path& f, const std::string& name) {
  if (const char* d = std::getenv("NETSPEC_PICTURES_DIR")) {
    fs::create_directories(d);
    fs::copy_file(f, fs::path(d) / name, fs::copy_options::overwrite_existing);
  }
}

struct TrainedRun {
  fs::path dir, spec, data, run;
  Result train;
};

// One trained run shared by the tests (trained once per process).
const TrainedRun& trained() {
  static TrainedRun r = [] {
    TrainedRun x;
    x.dir = temp_dir("ns_report_cli_", "run");
    x.data = synthetic_fashion("ns_report_cli_", 1200, 300, 5);
    x.spec = x.dir / "tiny-gap.json";
    std::ofstream(x.spec) << kSpec;
    x.run = x.dir / "run";
    x.train = sh(fmt::format("train {} --data {} --run-dir {}", x.spec.string(), x.data.string(),
                             x.run.string()));
    return x;
  }();
  return r;
}

// Test sample i of the synthetic set as a normalised .npy input (what the loader feeds).
fs::path sample_npy(int i, const fs::path& dir) {
  Tensor t(DType::kF32, {1, 28, 28});
  // The class-c tile lit (value 0.8), the rest dark (0.1), normalised with Fashion-MNIST's stats.
  const int ty = i / 4, tx = i % 4;
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x)
      t.data<float>()[y * 28 + x] =
          ((y / 7 == ty && x / 7 == tx ? 0.8f : 0.1f) - 0.2860f) / 0.3530f;
  fs::path p = dir / fmt::format("tile{}.npy", i);
  write_npy(p.string(), t);
  return p;
}

// cam/report preprocess an image as predict and the evaluation split do: testCropRatio for the
// image-folder datasets (it was applied only for imagenette), the whole image for the rest.
TEST(ReportCli, CamAndReportCropAsTheEvaluationSplit) {
  viz::Model m;
  m.train.testCropRatio = 0.9;
  for (DatasetKind k : {DatasetKind::imagenette, DatasetKind::imagenet, DatasetKind::folder}) {
    m.train.dataset = k;
    EXPECT_EQ(m.crop_ratio(), 0.9) << enum_name(k);
  }
  m.train.dataset = DatasetKind::cifar10;
  EXPECT_EQ(m.crop_ratio(), 1.0);
}

TEST(ReportCli, CamWritesAHeatmapPerImageAndPrintsTop5) {
  const TrainedRun& r = trained();
  ASSERT_EQ(r.train.status, 0) << r.train.out;
  fs::path out = r.dir / "cam";
  fs::path a = sample_npy(1, r.dir), b = sample_npy(6, r.dir);
  Result c =
      sh(fmt::format("cam {} {} {} -o {}", r.run.string(), a.string(), b.string(), out.string()));
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_NE(c.out.find("tile1.npy: Grad-CAM for "), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("tile6.npy: Grad-CAM for "), std::string::npos) << c.out;
  size_t pct = 0;
  for (size_t at = c.out.find('%'); at != std::string::npos; at = c.out.find('%', at + 1)) ++pct;
  EXPECT_EQ(pct, 10u) << c.out;  // top-5 per image
  for (const char* f : {"tile1.cam.png", "tile6.cam.png"}) {
    Png p = read_png(out / f);
    ASSERT_GT(p.width, 400) << f;
    auto [colours, ink] = colour_stats(p);
    EXPECT_GT(colours, 20u) << f;  // the jet overlay brings many colours
    keep(out / f, f);
  }
  // --class picks the class explained; a class out of range is an error (exit 2).
  Result k = sh(fmt::format("cam {} {} --class 3 -o {}", r.run.string(), a.string(), out.string()));
  ASSERT_EQ(k.status, 0) << k.out;
  EXPECT_NE(k.out.find("Grad-CAM for Dress"), std::string::npos) << k.out;
  Result bad = sh(fmt::format("cam {} {} --class 10", r.run.string(), a.string()));
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("out of range"), std::string::npos) << bad.out;
  // --net + --checkpoint instead of a run dir.
  Result n = sh(fmt::format("cam --net {} --checkpoint {} {} -o {}", r.spec.string(),
                            (r.run / "last.safetensors").string(), a.string(), out.string()));
  EXPECT_EQ(n.status, 0) << n.out;
}

// The synthetic class c is told by one lit 7x7 tile: Grad-CAM of the true class should peak there.
TEST(ReportCli, GradCamOfTheTrueClassPeaksOnItsTile) {
  const TrainedRun& r = trained();
  ASSERT_EQ(r.train.status, 0) << r.train.out;
  viz::Model m = viz::load_model(r.run.string(), "", "");
  auto be = exec::make_backend("cpu");
  viz::GradCam gc(m, 1, *be);
  int hits = 0;
  std::string where;
  for (int c = 0; c < 10; ++c) {
    Tensor x = viz::stack({read_npy(sample_npy(c, r.dir).string())});
    viz::CamOut o = gc.run(x, 1, c).at(0);
    ASSERT_EQ(o.h, 14);  // after the stride-2 conv
    const size_t at =
        static_cast<size_t>(std::max_element(o.map.begin(), o.map.end()) - o.map.begin());
    const int py = static_cast<int>(at / 14) * 2 + 1, px = static_cast<int>(at % 14) * 2 + 1;
    // Inside the tile, give or take 2 px (a 14x14 cell spans 2 input pixels, its receptive field
    // more).
    const int ty = 7 * (c / 4), tx = 7 * (c % 4);
    hits += py >= ty - 2 && py <= ty + 8 && px >= tx - 2 && px <= tx + 8;
    where += fmt::format(" class {}: peak at ({}, {});", c, py, px);
  }
  std::cout << fmt::format("[ grad-cam ] peak on the class's tile for {}/10 classes:{}\n", hits,
                           where);
  EXPECT_GE(hits, 9) << where;
}

TEST(ReportCli, PredictPngDrawsAGrid) {
  const TrainedRun& r = trained();
  ASSERT_EQ(r.train.status, 0) << r.train.out;
  fs::path grid = r.dir / "grid.png";
  std::string inputs;
  for (int i = 0; i < 6; ++i) inputs += " " + sample_npy(i, r.dir).string();
  Result p = sh(fmt::format("predict {} --checkpoint {} --png {}{}", r.spec.string(),
                            (r.run / "last.safetensors").string(), grid.string(), inputs));
  ASSERT_EQ(p.status, 0) << p.out;
  Png g = read_png(grid);
  EXPECT_EQ(g.width, 4 * (160 + 24));  // 4 columns of 160 px cells with 12 px padding
  EXPECT_GT(g.height, 2 * 160);        // 2 rows
  EXPECT_GT(colour_stats(g).second, 0.1);
  keep(grid, "predict_grid.png");
}

TEST(ReportCli, ReportIsSelfContainedAndRendersInChromium) {
  const TrainedRun& r = trained();
  ASSERT_EQ(r.train.status, 0) << r.train.out;
  Result rep = sh(fmt::format("report {} --data {}", r.run.string(), r.data.string()));
  ASSERT_EQ(rep.status, 0) << rep.out;
  const fs::path html = r.run / "report.html";
  const std::string page = slurp(html);
  keep(html, "report.html");
  for (const char* id : {"config", "net", "curves", "evaluation", "confusion", "per-class", "wrong",
                         "gradcam", "timings"})
    EXPECT_NE(page.find(fmt::format("id=\"{}\"", id)), std::string::npos) << id;
  size_t imgs = 0;
  for (size_t at = page.find("src=\"data:image/png;base64,"); at != std::string::npos;
       at = page.find("src=\"data:image/png;base64,", at + 1))
    ++imgs;
  EXPECT_GE(imgs, 3u);                                    // curves, wrong grid, Grad-CAM panels
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);  // nothing fetched from a network
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_NE(page.find("tiny-gap"), std::string::npos);
  EXPECT_EQ(page.find("not available"), std::string::npos) << "a section failed";

  const char* browser = nullptr;
  for (const char* b : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(b)) browser = b;
  if (!browser) GTEST_SKIP() << "chromium absent (apt-get install chromium): browser check skipped";
  const fs::path shot = r.dir / "report_screenshot.png", dom = r.dir / "report_dom.html";
  const std::string flags =
      "--headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--hide-scrollbars --user-data-dir=" +
      (r.dir / "chromium").string();
  run_script(
      fmt::format("timeout 120 {} {} --window-size=1200,2400 --screenshot={} file://{} "
                  ">{}/chromium.log 2>&1",
                  browser, flags, shot.string(), html.string(), r.dir.string()));
  run_script(fmt::format("timeout 120 {} {} --dump-dom file://{} >{} 2>>{}/chromium.log", browser,
                         flags, html.string(), dom.string(), r.dir.string()));
  Png s = read_png(shot);
  ASSERT_EQ(s.width, 1200) << slurp(r.dir / "chromium.log");
  auto [colours, ink] = colour_stats(s);
  EXPECT_GT(colours, 30u);  // text, plot colours, the heatmaps: not a blank page
  EXPECT_GT(ink, 0.02);
  keep(shot, "report_screenshot.png");
  const std::string d = slurp(dom);
  for (const char* id :
       {"config", "curves", "confusion", "per-class", "wrong", "gradcam", "timings"})
    EXPECT_NE(d.find(fmt::format("id=\"{}\"", id)), std::string::npos) << id << "\n"
                                                                       << d.substr(0, 500);
}

}  // namespace
}  // namespace netspec::cli_test
