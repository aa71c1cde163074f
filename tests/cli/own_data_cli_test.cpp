// A user's own data through `netspec train`: an image folder (class subfolders, train/ + val/ or a
// --val-split; a 1-channel net reads it as grayscale; class names saved and used by predict),
// labels checked at load, and a CSV table (numeric features + a label column of names).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <tuple>
#include <vector>

#include "cli/cli_util.h"
#include "data/image_fixture.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

double percent_after(const std::string& out, const std::string& what) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(what + " ([0-9.]+)%"))) return -1;
  return std::stod(m[1].str());
}

// DIR/<split>/<class>/*.png: 12x12 RGB images whose brightness is the class (dark, mid,
// bright) with noise and a random colour tint, `per_class` each.
void write_class_folder(const fs::path& dir, int per_class, uint32_t seed) {
  std::mt19937 r(seed);
  const char* names[] = {"dark", "mid", "bright"};
  const int level[] = {40, 128, 215};
  for (int c = 0; c < 3; ++c) {
    fs::create_directories(dir / names[c]);
    for (int i = 0; i < per_class; ++i) {
      std::vector<uint8_t> px(12 * 12 * 3);
      const int tint = static_cast<int>(r() % 31) - 15;
      for (size_t k = 0; k < px.size(); ++k)
        px[k] = static_cast<uint8_t>(std::clamp(
            level[c] + (k % 3 == 0 ? tint : -tint) + static_cast<int>(r() % 21) - 10, 0, 255));
      test::write_png((dir / names[c] / fmt::format("{:03}.png", i)).string(), 12, 12,
                      PNG_FORMAT_RGB, px);
    }
  }
}

fs::path spec_file(const fs::path& dir, int channels, int classes) {
  fs::path p = dir / fmt::format("gray{}_{}.json", channels, classes);
  std::ofstream(p) << fmt::format(
      R"({{"name": "tiny-folder", "inputChannels": {}, "inputHeight": 12, "inputWidth": 12,
 "layers": [{{"kind": "flatten"}}, {{"kind": "dense", "in": {}, "out": {}}}]}})",
      channels, channels * 144, classes);
  return p;
}

TEST(OwnDataCli, ImageFolderTrainsGrayscaleAndPredictsByClassName) {
  fs::path d = temp_dir("ns_owndata_", "folder");
  write_class_folder(d / "data" / "train", 24, 1);
  write_class_folder(d / "data" / "val", 6, 2);
  fs::path run = d / "run";
  Result r =
      sh(fmt::format("train {} --dataset folder --data {} --epochs 8 --batch 8 --lr 0.01 "
                     "--run-dir {}",
                     spec_file(d, 1, 3).string(), (d / "data").string(), run.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "72 train / 18 test samples")) << r.out;
  EXPECT_GE(percent_after(r.out, "test accuracy"), 90.0) << r.out;
  EXPECT_EQ(json::parse(slurp(run / "classes.json")), json({"bright", "dark", "mid"}));
  Result p =
      sh(fmt::format("predict {} {} --json", run.string(), (d / "data" / "val" / "dark").string()));
  ASSERT_EQ(p.status, 0) << p.out;
  json j = json::parse(p.out);
  ASSERT_EQ(j.size(), 6u);
  int dark = 0;
  for (const auto& e : j) dark += e["label"] == "dark";
  EXPECT_GE(dark, 5) << p.out;
  Result e = sh("eval " + run.string());
  ASSERT_EQ(e.status, 0) << e.out;
  EXPECT_TRUE(has(e.out, "count 18")) << e.out;
  // DIR/<class>/x.png: every class folder is walked, its name the known label (green / red).
  const fs::path grid = d / "val.png";
  Result all = sh(fmt::format("predict {} {} --json --png {}", run.string(),
                              (d / "data" / "val").string(), grid.string()));
  ASSERT_EQ(all.status, 0) << all.out;
  json ja = json::parse(all.out);
  ASSERT_EQ(ja.size(), 18u);
  int right = 0;
  for (const auto& x : ja)
    right += fs::path(x["input"].get<std::string>()).parent_path().filename().string() ==
             x["label"].get<std::string>();
  EXPECT_GE(right, 15) << all.out;
  EXPECT_GT(fs::file_size(grid), 1000u);

  // RGB net on the same folder; a 2-class net gets a 3-way head sized from the folders, or, with
  // --classes 2 asked for, is refused at load naming the label.
  Result rgb =
      sh(fmt::format("train {} --dataset folder --data {} --epochs 1 --batch 8 "
                     "--run-dir {}",
                     spec_file(d, 3, 3).string(), (d / "data").string(), (d / "rgb").string()));
  EXPECT_EQ(rgb.status, 0) << rgb.out;
  Result sized =
      sh(fmt::format("train {} --dataset folder --data {} --epochs 1 --run-dir {}",
                     spec_file(d, 1, 2).string(), (d / "data").string(), (d / "sized").string()));
  EXPECT_EQ(sized.status, 0) << sized.out;
  EXPECT_TRUE(has(sized.out,
                  "has 3 classes (bright, dark, mid): the 2-way head of tiny-folder is "
                  "resized to 3 (--classes 3)"))
      << sized.out;
  EXPECT_TRUE(has(sized.out, "params: 435 trainable, 0 frozen")) << sized.out;  // 144*3 + 3
  EXPECT_TRUE(has(slurp(d / "sized" / "config.json"), "\"classes\": 3")) << sized.out;
  Result two =
      sh(fmt::format("train {} --dataset folder --data {} --epochs 1 --classes 2 "
                     "--run-dir {}",
                     spec_file(d, 1, 2).string(), (d / "data").string(), (d / "two").string()));
  EXPECT_EQ(two.status, 2) << two.out;
  EXPECT_TRUE(has(two.out, "has label 2, outside the net's 2 classes")) << two.out;
  EXPECT_FALSE(has(two.out, "epoch 1/")) << two.out;
}

TEST(OwnDataCli, FlatFolderNeedsAValidationSplit) {
  fs::path d = temp_dir("ns_owndata_", "flat");
  write_class_folder(d / "data", 20, 3);
  const std::string base = fmt::format(
      "train {} --dataset folder --data {} --epochs 6 --batch 8 "
      "--lr 0.01 --run-dir {}",
      spec_file(d, 1, 3).string(), (d / "data").string(), (d / "run").string());
  Result no = sh(base);
  EXPECT_EQ(no.status, 2) << no.out;
  EXPECT_TRUE(has(no.out, "--val-split")) << no.out;
  // Class folders given to a net whose spec reads another dataset: --dataset folder is named.
  Result mnist =
      sh(fmt::format("train {} --data {} --epochs 1 --run-dir {}", spec_file(d, 1, 3).string(),
                     (d / "data").string(), (d / "mnist").string()));
  EXPECT_EQ(mnist.status, 2) << mnist.out;
  EXPECT_TRUE(has(mnist.out, "holds image class folders: add --dataset folder")) << mnist.out;
  Result r = sh(base + " --val-split 0.25");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "45 train / 15 validation samples (0 test)")) << r.out;
  EXPECT_GE(percent_after(r.out, "validation accuracy"), 80.0) << r.out;
}

// DIR/t.csv: 300 rows x1,x2 uniform in [-1, 1) from `seed` with label(x1, x2); DIR/tab.json: a
// 2 -> 2 dense net.
template <class Label>
void write_table(const fs::path& d, uint32_t seed, Label label) {
  std::mt19937 r(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::ofstream f(d / "t.csv");
  f << "x1,x2,label\n";
  for (int i = 0; i < 300; ++i) {
    const double a = u(r), b = u(r);
    f << a << "," << b << "," << label(a, b) << "\n";
  }
  std::ofstream(d / "tab.json") << R"({"name": "tab", "inputChannels": 2, "inputHeight": 0,
 "inputWidth": 0, "layers": [{"kind": "dense", "in": 2, "out": 2}]})";
}

TEST(OwnDataCli, CsvTableWithNamedLabels) {
  fs::path d = temp_dir("ns_owndata_", "csv");
  write_table(d, 5, [](double a, double b) { return a > b ? "pos" : "neg"; });
  Result t =
      sh(fmt::format("train {} --dataset csv --data {} --val-split 0.2 --epochs 10 "
                     "--batch 16 --lr 0.05 --run-dir {}",
                     (d / "tab.json").string(), (d / "t.csv").string(), (d / "run").string()));
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, "240 train / 60 validation samples")) << t.out;
  EXPECT_GE(percent_after(t.out, "validation accuracy"), 90.0) << t.out;
  EXPECT_EQ(json::parse(slurp(d / "run" / "classes.json")), json({"neg", "pos"}));
  // predict on table rows: with the label column (header names it) or features only.
  std::ofstream(d / "rows.csv") << "x1,label,x2\n0.9,?,-0.8\n-0.7,?,0.6\n";
  std::ofstream(d / "bare.csv") << "0.5,-0.5\n-0.9,0.9\n0.8,-0.2\n";
  Result p = sh(fmt::format("predict {} {} {}", (d / "run").string(), (d / "rows.csv").string(),
                            (d / "bare.csv").string()));
  ASSERT_EQ(p.status, 0) << p.out;
  for (const auto& [file, row, label] :
       std::vector<std::tuple<std::string, int, std::string>>{{"rows.csv", 1, "pos"},
                                                              {"rows.csv", 2, "neg"},
                                                              {"bare.csv", 1, "pos"},
                                                              {"bare.csv", 2, "neg"},
                                                              {"bare.csv", 3, "pos"}})
    EXPECT_TRUE(has(p.out, fmt::format("{} row {}: {}\n", (d / file).string(), row, label)))
        << file << " " << row << "\n"
        << p.out;
  std::ofstream(d / "wide.csv") << "1,2,3,4\n";
  Result w = sh(fmt::format("predict {} {}", (d / "run").string(), (d / "wide.csv").string()));
  EXPECT_EQ(w.status, 2) << w.out;
  EXPECT_TRUE(has(w.out, "wide.csv:1: 4 cells (the net takes 2 features")) << w.out;

  std::ofstream(d / "bad.csv") << "x1,x2,label\n0.1,0.2,pos\n0.3,oops,neg\n";
  Result b =
      sh(fmt::format("train {} --dataset csv --data {} --val-split 0.5 --run-dir {}",
                     (d / "tab.json").string(), (d / "bad.csv").string(), (d / "bad").string()));
  EXPECT_EQ(b.status, 2) << b.out;
  EXPECT_TRUE(has(b.out, (d / "bad.csv").string() + ":3: column 2 is not a finite number"))
      << b.out;
}

// Class indices in the label column: the class count is max label + 1; a 2-way head is resized
// to 3 with one line, recorded as classes 3, and the run resumes (the same command with more
// epochs, and --resume --run-dir alone) on the 3-way head; eval and predict read it back.
TEST(OwnDataCli, CsvTableWithNumericLabelsSizesTheHeadAndResumes) {
  fs::path d = temp_dir("ns_owndata_", "csvnum");
  write_table(d, 9, [](double a, double b) { return a + b < -0.4 ? 0 : a + b > 0.4 ? 2 : 1; });
  const fs::path run = d / "run";
  const std::string base =
      fmt::format("train {} --dataset csv --data {} --val-split 0.2 --batch 16 --lr 0.1 "
                  "--run-dir {}",
                  (d / "tab.json").string(), (d / "t.csv").string(), run.string());
  Result t = sh(base + " --epochs 2");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, (d / "t.csv").string() +
                             " has 3 classes (labels 0..2): the 2-way head of tab is resized to 3 "
                             "(--classes 3)\n"))
      << t.out;
  EXPECT_TRUE(has(t.out, "params: 9 trainable, 0 frozen")) << t.out;  // 2*3 + 3
  EXPECT_TRUE(has(slurp(run / "config.json"), "\"classes\": 3"));
  // The same command with more epochs: resumed on the 3-way head.
  Result more = sh(base + " --epochs 4");
  ASSERT_EQ(more.status, 0) << more.out;
  EXPECT_TRUE(has(more.out, "resuming")) << more.out;
  EXPECT_TRUE(has(more.out, "epoch 3/4")) << more.out;
  EXPECT_TRUE(has(more.out, "params: 9 trainable")) << more.out;
  EXPECT_GE(percent_after(more.out, "validation accuracy"), 70.0) << more.out;
  // --resume --run-dir alone: the stored config (classes 3) is used.
  Result again = sh(fmt::format("train --resume --run-dir {} --epochs 5", run.string()));
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_TRUE(has(again.out, "epoch 5/5")) << again.out;
  EXPECT_TRUE(has(again.out, "params: 9 trainable")) << again.out;
  Result e = sh("eval " + run.string());
  ASSERT_EQ(e.status, 0) << e.out;
  std::ofstream(d / "rows.csv") << "x1,x2\n0.9,0.8\n-0.9,-0.7\n";
  Result p = sh(fmt::format("predict {} {}", run.string(), (d / "rows.csv").string()));
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_TRUE(has(p.out, "row 1: class 2\n")) << p.out;
  EXPECT_TRUE(has(p.out, "row 2: class 0\n")) << p.out;
}

TEST(OwnDataCli, ListAndHelpMarkWhatIsRefused) {
  Result l = sh("list");
  ASSERT_EQ(l.status, 0) << l.out;
  EXPECT_TRUE(std::regex_search(l.out, std::regex("\nmlp +[0-9,]+ +1x28x28 +4 +classification/fashion-mnist +yes\n"))) << l.out;
  EXPECT_FALSE(has(l.out, "not lowered yet")) << l.out;  // every zoo net lowers (issue 21)
  EXPECT_TRUE(has(l.out, "; 0 cannot be lowered yet (summary only)")) << l.out;
  Result h = sh("train --help");
  ASSERT_EQ(h.status, 0);
  EXPECT_TRUE(std::regex_search(h.out, std::regex("\n  runningBN +true +\\[refused\\]"))) << h.out;
  EXPECT_TRUE(std::regex_search(h.out, std::regex("\n  trainRes +0 +training"))) << h.out;
  EXPECT_TRUE(std::regex_search(h.out, std::regex("\n  bf16 +false +bf16"))) << h.out;
  EXPECT_TRUE(std::regex_search(h.out, std::regex("\n  mixup +false +[a-z]"))) << h.out;
  EXPECT_TRUE(std::regex_search(h.out, std::regex("\n  fpnAffineProb +0 +[a-z]"))) << h.out;
  EXPECT_TRUE(std::regex_search(h.out, std::regex("\n  learningRate +0.001 +peak"))) << h.out;
}

}  // namespace
}  // namespace netspec::cli_test
