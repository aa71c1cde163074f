// The views after training for segmentation and detection runs (issue 39): `report` of a UNet
// run shows mIoU, Dice, pixel accuracy and per-class IoU under the class names with image | truth
// | prediction panels, `predict` of it writes mask PNGs and per-class pixel fractions, and
// `report` of a DETR run shows mAP overall and per class with box panels. Each trains a tiny net
// on `netspec data synth` output in seconds.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli/cli_util.h"
#include "data/image.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

// The number printed after `key` in `s` (the first occurrence at or after `from`), as written.
std::string number_after(const std::string& s, const std::string& key, size_t from = 0) {
  const size_t at = s.find(key, from);
  if (at == std::string::npos) return "(no " + key + ")";
  size_t b = at + key.size();
  while (b < s.size() && !(std::isdigit(static_cast<unsigned char>(s[b])) || s[b] == '-')) ++b;
  if (b < s.size() && s[b] == '-') return "-";  // a table's "no value"
  size_t e = b;
  while (e < s.size() && (std::isdigit(static_cast<unsigned char>(s[e])) || s[e] == '.')) ++e;
  return s.substr(b, e - b);
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

// `report`'s evaluation progress (every task): "evaluating N WHAT ..." before it and "evaluated N
// WHAT in X s" after, the same N (n >= 0: that N), in that order.
void expect_eval_progress(const std::string& out, const std::string& what, int64_t n = -1) {
  std::smatch a, b;
  ASSERT_TRUE(std::regex_search(out, a, std::regex("evaluating ([0-9]+) " + what + " \\.\\.\\.\n")))
      << out;
  const std::string after = a.suffix().str();
  ASSERT_TRUE(
      std::regex_search(after, b, std::regex("evaluated ([0-9]+) " + what + " in [0-9.]+ s\n")))
      << out;
  EXPECT_EQ(a[1].str(), b[1].str()) << out;
  if (n >= 0) {
    EXPECT_EQ(a[1].str(), std::to_string(n)) << out;
  }
}

// The metrics.jsonl row of `epoch`.
nlohmann::json epoch_row(const fs::path& run, int epoch) {
  std::ifstream f(run / "metrics.jsonl");
  for (std::string line; std::getline(f, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.value("epoch", -1) == epoch) return j;
  }
  return {};
}

constexpr const char* kTinyUnet = R"({"name": "tiny-unet", "inputChannels": 3,
  "inputHeight": 16, "inputWidth": 16, "layers": [{"kind": "convBn", "ic": 3, "oc": 8, "k": 3},
  {"kind": "unetDown", "ic": 8, "oc": 16}, {"kind": "unetUp", "ic": 16, "oc": 8},
  {"kind": "conv2d", "ic": 8, "oc": 3, "k": 1, "act": "identity"}],
  "train": {"dataset": "pets", "optimizer": "adam", "learningRate": 0.01, "batchSize": 8,
  "epochs": 2, "lossKind": "perPixelCE"}})";

// A UNet trained for two epochs on 24 synthetic pets images (its run dir: DIR/run).
struct SegRun {
  fs::path dir, run;
  std::string train_out;
};
const SegRun& seg_run() {
  static const SegRun r = [] {
    SegRun x;
    x.dir = temp_dir("task_report_", "seg");
    x.run = x.dir / "run";
    sh("data synth --task seg --format pets --n 24 -o " + (x.dir / "pets").string());
    std::ofstream(x.dir / "u.json") << kTinyUnet;
    x.train_out = sh("train " + (x.dir / "u.json").string() + " --data " +
                     (x.dir / "pets").string() + " --run-dir " + x.run.string())
                      .out;
    return x;
  }();
  return r;
}

TEST(TaskReportCli, SegmentationReportShowsMiouPerClassIouAndPanels) {
  const SegRun& s = seg_run();
  ASSERT_TRUE(fs::exists(s.run / "best.json")) << s.train_out;
  Result r = sh("report " + s.run.string() + " --panels 3");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_eval_progress(r.out, "images");
  const std::string h = slurp(s.run / "report.html");
  const auto best = read_json(s.run / "best.json");
  // The page's mIoU is best.json's (the same checkpoint on the same split).
  EXPECT_EQ(number_after(h, "mIoU <b>"), fmt::format("{:.4f}", best.at("val_miou").get<double>()))
      << h.substr(h.find("id=\"evaluation\""), 400);
  EXPECT_TRUE(has(h, "segmentation run"));
  EXPECT_TRUE(has(h, "Dice <b>"));
  EXPECT_TRUE(has(h, "pixel accuracy <b>"));
  // Per-class IoU under the pets names, equal to the best epoch's metrics row.
  const auto row = epoch_row(s.run, best.at("epoch").get<int>());
  const char* names[] = {"background", "pet", "border"};
  for (int k = 0; k < 3; ++k) {
    const std::string cell = fmt::format("</span> {} {}</td><td>", k, names[k]);
    ASSERT_TRUE(has(h, cell)) << cell;
    const auto v = row.at(fmt::format("val_iou_{}", k));
    EXPECT_EQ(number_after(h, cell), v.is_null() ? "-" : fmt::format("{:.4f}", v.get<double>()))
        << k;
  }
  for (const char* id : {"id=\"per-class\"", "id=\"samples\"", "id=\"worst\"", "id=\"curves\""})
    EXPECT_TRUE(has(h, id)) << id;
  EXPECT_TRUE(has(h, "val mIoU</th>"));  // the timings table's score columns
  // No classifier views: no top-1, no confusion matrix of unnamed classes.
  EXPECT_FALSE(has(h, "top-1")) << h.substr(h.find("id=\"evaluation\""), 400);
  EXPECT_FALSE(has(h, "id=\"confusion\""));
  EXPECT_FALSE(has(h, "class 0"));
  size_t imgs = 0;
  for (size_t at = h.find("data:image/png"); at != std::string::npos;
       at = h.find("data:image/png", at + 1))
    ++imgs;
  EXPECT_EQ(imgs, 3u);  // curves, samples, worst IoU
}

TEST(TaskReportCli, SegmentationPredictWritesMasksAndPixelFractions) {
  const SegRun& s = seg_run();
  ASSERT_TRUE(fs::exists(s.run / "best.json")) << s.train_out;
  const fs::path img = s.dir / "pets" / "images" / "synth_00001.jpg";
  ASSERT_TRUE(fs::exists(img));
  const fs::path out = s.dir / "pred" / "p.png";
  fs::create_directories(out.parent_path());
  Result r =
      sh(fmt::format("predict {} {} --png {} --json", s.run.string(), img.string(), out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('[')));
  ASSERT_EQ(j.size(), 1u) << r.out;
  const fs::path mask = s.dir / "pred" / "synth_00001.mask.png";
  EXPECT_EQ(j[0].at("mask").get<std::string>(), mask.string());
  ASSERT_TRUE(fs::exists(mask));
  EXPECT_GT(fs::file_size(out), 1000u);
  // The mask has the image's own size (sliding windows over the whole image, not the net's 16x16
  // centre crop) and class indices 0..2 whose counts are the JSON's.
  const Tensor m = data::decode_image(mask.string());
  const Tensor pic = data::decode_image(img.string());
  const int64_t ih = pic.shape()[1], iw = pic.shape()[2], npx = ih * iw;
  ASSERT_GT(ih, 16);
  ASSERT_EQ(m.shape(), (Shape{3, ih, iw}));
  EXPECT_EQ(j[0].at("size"), (nlohmann::json{iw, ih}));
  std::vector<int64_t> count(3, 0);
  for (int64_t q = 0; q < npx; ++q) {
    const uint8_t v = m.data<uint8_t>()[q];
    ASSERT_LT(v, 3) << q;
    ++count[v];
  }
  const auto& cls = j[0].at("classes");
  ASSERT_EQ(cls.size(), 3u);
  double sum = 0;
  const char* names[] = {"background", "pet", "border"};
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(cls[k].at("class").get<std::string>(), names[k]);
    EXPECT_EQ(cls[k].at("pixels").get<int64_t>(), count[size_t(k)]) << k;
    EXPECT_DOUBLE_EQ(cls[k].at("fraction").get<double>(), double(count[size_t(k)]) / double(npx));
    sum += cls[k].at("fraction").get<double>();
  }
  EXPECT_DOUBLE_EQ(sum, 1.0);
  // The text form names the classes and the mask written (--masks DIR puts it there).
  Result t = sh(fmt::format("predict {} {} --masks {}", s.run.string(), img.string(),
                            (s.dir / "masks").string()));
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, fmt::format("background {:.1f}%", 100.0 * double(count[0]) / double(npx))))
      << t.out;
  EXPECT_TRUE(fs::exists(s.dir / "masks" / "synth_00001.mask.png"));
}

// Grad-CAM of a segmenter explains one class over the pixels predicted as it (the most predicted
// non-background class by default, or --class) and prints pixel shares under the class names.
TEST(TaskReportCli, SegmentationCamExplainsAClassOverItsPixels) {
  const SegRun& s = seg_run();
  ASSERT_TRUE(fs::exists(s.run / "best.json")) << s.train_out;
  const fs::path img = s.dir / "pets" / "images" / "synth_00002.jpg";
  const fs::path out = s.dir / "cam";
  Result r =
      sh(fmt::format("cam {} {} --class 1 -o {}", s.run.string(), img.string(), out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "Grad-CAM for pet")) << r.out;
  EXPECT_TRUE(has(r.out, "% of pixels  background")) << r.out;
  EXPECT_GT(fs::file_size(out / "synth_00002.cam.png"), 1000u);
  r = sh(fmt::format("cam {} {} -o {}", s.run.string(), img.string(), out.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "Grad-CAM for ")) << r.out;
}

TEST(TaskReportCli, DetectionReportShowsMapPerClassAndBoxPanels) {
  const fs::path d = temp_dir("task_report_", "det");
  Result t = train_tiny_detr(d);
  ASSERT_EQ(t.status, 0) << t.out;
  Result r = sh(fmt::format("report {} --panels 2", (d / "run").string()));
  ASSERT_EQ(r.status, 0) << r.out;
  expect_eval_progress(r.out, "images", 6);  // 30 images, the last fifth for validation
  const std::string h = slurp(d / "run" / "report.html");
  const auto best = read_json(d / "run" / "best.json");
  EXPECT_EQ(number_after(h, "mAP@0.5 <b>"),
            fmt::format("{:.4f}", best.at("val_top1").get<double>()))
      << h.substr(h.find("id=\"evaluation\""), 400);
  EXPECT_EQ(number_after(h, "mAP@[.5:.95] <b>"),
            fmt::format("{:.4f}", best.at("val_map").get<double>()));
  // Per class under classes.json's names, with the best epoch's AP columns.
  const auto names = read_json(d / "run" / "classes.json");
  ASSERT_EQ(names.size(), 2u);
  const auto row = epoch_row(d / "run", best.at("epoch").get<int>());
  for (int k = 0; k < 2; ++k) {
    const std::string cell =
        fmt::format("<td class=\"name\">{} {}</td>", k, names[k].get<std::string>());
    ASSERT_TRUE(has(h, cell)) << cell;
    const auto ap = row.at(fmt::format("ap50_c{}", k));
    // the cells after the name: true boxes, predicted, AP@0.5
    size_t at = h.find(cell) + cell.size();
    for (int skip = 0; skip < 2; ++skip) at = h.find("</td>", at) + 5;
    EXPECT_EQ(number_after(h, "<td>", at),
              ap.is_null() || ap.get<double>() < 0 ? "-" : fmt::format("{:.4f}", ap.get<double>()))
        << k;
  }
  EXPECT_TRUE(has(h, "id=\"boxes\""));
  EXPECT_TRUE(has(h, "detection run"));
  EXPECT_FALSE(has(h, "top-1"));
  EXPECT_FALSE(has(h, "id=\"confusion\""));
}

// A one-epoch DDPM run on 64 synthetic Fashion-MNIST-shaped images: the report's noise MSE is the
// validation's (the same draws on the same split) and it shows a grid of DDIM samples.
TEST(TaskReportCli, DiffusionReportShowsNoiseMseAndSamples) {
  const fs::path data = synthetic_fashion("task_report_", 64, 32, 7);
  const fs::path run = data.parent_path() / (data.filename().string() + "_run");
  Result t = sh(fmt::format(
      "train ddpm-unet --dataset fashion-mnist --data {} --epochs 1 --batch 32 --set ddpmSteps=50 "
      "--run-dir {}",
      data.string(), run.string()));
  ASSERT_EQ(t.status, 0) << t.out;
  Result r = sh(fmt::format("report {} --panels 1", run.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  expect_eval_progress(r.out, "images", 32);
  const std::string h = slurp(run / "report.html");
  const auto best = read_json(run / "best.json");
  EXPECT_EQ(number_after(h, "noise-prediction MSE <b>"),
            fmt::format("{:.4f}", best.at("val_loss").get<double>()))
      << h.substr(h.find("id=\"evaluation\""), 400);
  EXPECT_TRUE(has(h, "on the first 32 images of the test split"));
  EXPECT_TRUE(has(h, "4 samples by DDIM (eta 0) in 20 steps"));
  EXPECT_TRUE(has(h, "alt=\"DDPM samples\""));
  EXPECT_TRUE(has(h, "diffusion run"));
  EXPECT_FALSE(has(h, "top-1"));
  // No class decision to explain: cam refuses by task, naming the loss.
  Result c = sh(fmt::format("cam {} {}", run.string(), (data / "x.npy").string()));
  EXPECT_EQ(c.status, 2) << c.out;
  EXPECT_TRUE(has(c.out, "this run is diffusion")) << c.out;
  fs::remove_all(run);
}

// A text run's report: the validation loss is best.json's, bits per character are loss / ln 2,
// and the greedy text is what `netspec generate` writes for the same prompt.
TEST(TaskReportCli, TextReportShowsBitsPerCharacterAndGeneratedText) {
  const fs::path d = temp_dir("task_report_", "text");
  {
    std::ofstream f(d / "corpus.txt");
    const char* words[] = {"the cat", "a dog", "sees", "likes", "the ball", "some bread"};
    uint64_t r = 7;
    for (int i = 0; i < 400; ++i, r = r * 6364136223846793005ULL + 1442695040888963407ULL)
      f << words[(r >> 33) % 2] << " " << words[2 + (r >> 35) % 2] << " "
        << words[4 + (r >> 37) % 2] << ".\n";
  }
  std::ofstream(d / "tok.json") << kTinyGpt;
  Result t =
      sh(fmt::format("train {} --dataset text --data {} --epochs 3 --run-dir {}",
                     (d / "tok.json").string(), (d / "corpus.txt").string(), (d / "run").string()));
  ASSERT_EQ(t.status, 0) << t.out;
  Result r = sh(fmt::format("report {} --tokens 40", (d / "run").string()));
  ASSERT_EQ(r.status, 0) << r.out;
  expect_eval_progress(r.out, "windows");
  const std::string h = slurp(d / "run" / "report.html");
  const double loss = read_json(d / "run" / "best.json").at("val_loss").get<double>();
  EXPECT_EQ(number_after(h, "validation loss <b>"), fmt::format("{:.4f}", loss))
      << h.substr(h.find("id=\"evaluation\""), 400);
  EXPECT_EQ(number_after(h, "</b>, <b>"), fmt::format("{:.4f}", loss / std::log(2.0)));
  EXPECT_TRUE(has(h, "text run"));
  EXPECT_TRUE(has(h, "val bits/char</th>"));
  // The greedy text: `generate` with the page's prompt (letters, spaces and dots only).
  const std::string key = "after the prompt <code>";
  const size_t p0 = h.find(key);
  ASSERT_NE(p0, std::string::npos);
  const std::string prompt = h.substr(p0 + key.size(), h.find("</code>", p0) - p0 - key.size());
  ASSERT_FALSE(prompt.empty());
  Result g = sh(fmt::format("generate {} --prompt \"{}\" --tokens 40 --temperature 0",
                            (d / "run").string(), prompt));
  ASSERT_EQ(g.status, 0) << g.out;
  const std::string pre = "<pre id=\"generated-t0\"><b>" + prompt + "</b>";
  const size_t at = h.find(pre);
  ASSERT_NE(at, std::string::npos) << h.substr(p0, 600);
  const std::string page = h.substr(at + pre.size(), h.find("</pre>", at) - at - pre.size());
  EXPECT_EQ(prompt + page + "\n", g.out);
  EXPECT_EQ(page.size(), 40u);
  EXPECT_TRUE(has(h, "id=\"generated-t08\""));
}

// An autoencoder (floatTargetMse: target = input) on a CSV's features with --val-split: the
// report's reconstruction MSE is best.json's validation loss on the held-out split.
TEST(TaskReportCli, RegressionReportShowsReconstructionMse) {
  const fs::path d = temp_dir("task_report_", "ae");
  {
    std::ofstream f(d / "x.csv");
    f << "a,b,c,d,label\n";
    for (int i = 0; i < 200; ++i)
      f << fmt::format("{},{},{},{},{}\n", (i % 17) / 8.0 - 1, (i % 5) / 2.0 - 1, (i % 7) / 3.0 - 1,
                       (i % 3) - 1.0, i % 2);
  }
  std::ofstream(d / "ae.json") << R"({"name": "tiny-ae", "inputChannels": 4, "inputHeight": 0,
    "inputWidth": 0, "layers": [{"kind": "dense", "in": 4, "out": 16, "act": "relu"},
    {"kind": "dense", "in": 16, "out": 4, "act": "identity"}], "train": {"dataset": "csv",
    "optimizer": "adam", "learningRate": 0.01, "batchSize": 32, "epochs": 3,
    "lossKind": "floatTargetMse"}})";
  Result t =
      sh(fmt::format("train {} --data {} --val-split 0.25 --run-dir {}", (d / "ae.json").string(),
                     (d / "x.csv").string(), (d / "run").string()));
  ASSERT_EQ(t.status, 0) << t.out;
  Result r = sh("report " + (d / "run").string());
  ASSERT_EQ(r.status, 0) << r.out;
  expect_eval_progress(r.out, "samples", 50);  // 200 rows, a quarter held out
  const std::string h = slurp(d / "run" / "report.html");
  const double loss = read_json(d / "run" / "best.json").at("val_loss").get<double>();
  EXPECT_EQ(number_after(h, "reconstruction MSE <b>"), fmt::format("{:.4f}", loss))
      << h.substr(h.find("id=\"evaluation\""), 400);
  EXPECT_TRUE(has(h, "over 200 values of the validation split held out by --val-split 0.25"));
  EXPECT_TRUE(has(h, "regression run"));
  EXPECT_FALSE(has(h, "top-1"));
}

}  // namespace
}  // namespace netspec::cli_test
