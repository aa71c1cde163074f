// What `netspec train` shows while it runs and keeps when it fails, as a user at a terminal sees
// it (a pseudo-terminal from util-linux `script`, so the progress bar is drawn): the bar's
// running accuracy next to the loss and lr equals the accuracy of the same samples when the
// parameters do not move; a segmentation run's bar shows pixel accuracy, a text run's bits per
// character (loss / ln 2), a regression run's the loss only. A fatal error (a divergence, data
// gone on a resume) ends RUN/train.log with the message printed on stderr.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cli/cli_util.h"
#include "data/idx_fixture.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

bool have_script() { return run_script("command -v script >/dev/null && echo yes") == "yes\n"; }

// `netspec ARGS` on a pseudo-terminal: `script -qec` runs it and returns its exit status.
Result on_tty(const std::string& args) {
  const std::string cmd =
      fmt::format("script -qec \"{}/netspec {}\" /dev/null 2>&1", NETSPEC_BINARY_DIR, args);
  Result r{0, ""};
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The last frame of the bar of `label` ("epoch 1/1"), the one drawn when its last step is done:
// the text between the carriage return that starts it and the erase-line escape that ends it.
std::string last_frame(const std::string& out, const std::string& label) {
  const std::string key = "\r" + label + " [";
  std::string frame;
  for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + 1)) {
    const size_t end = out.find("\x1b[K", at);
    frame = out.substr(at + 1, end == std::string::npos ? end : end - at - 1);
  }
  return frame;
}

std::string match(const std::string& s, const std::string& re) {
  std::smatch m;
  return std::regex_search(s, m, std::regex(re)) ? m[1].str() : "(no match of " + re + ")";
}

// Train and test splits of the same 330 synthetic Fashion-MNIST-shaped samples.
const fs::path& same_split_data() {
  static const fs::path d = [] {
    fs::path p = temp_dir("ns_progress_", "data");
    test::write_synthetic_split(p.string(), "train", 330, 17);
    test::write_synthetic_split(p.string(), "t10k", 330, 17);
    return p;
  }();
  return d;
}

TEST(ProgressCli, BarShowsRunningAccuracyEqualToTheSamplesAccuracy) {
  if (!have_script()) GTEST_SKIP() << "util-linux `script` (a pseudo-terminal) is not installed";
  // lr 1e-12: the parameters do not move, so every step's count is of the initial net, and the
  // epoch's running accuracy (11 updates, the last a tail of 10) is the test accuracy of the
  // same 330 samples (mlp: no BN or dropout, the train step's forward is the eval module's).
  const fs::path run = temp_dir("ns_progress_", "mlp");
  Result r = on_tty(fmt::format(
      "train mlp --dataset fashion-mnist --data {} --batch 32 --epochs 1 --optimizer sgd "
      "--lr 1e-12 --run-dir {}",
      same_split_data().string(), run.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string frame = last_frame(r.out, "epoch 1/1");
  ASSERT_FALSE(frame.empty()) << r.out;
  EXPECT_TRUE(std::regex_search(frame, std::regex("\\] 11/11 loss [0-9.]+ acc [0-9.]+% lr 1e-12 ")))
      << frame;
  const std::string running = match(frame, " acc ([0-9.]+)%");
  const std::string test = match(r.out, "test accuracy ([0-9.]+)% [^\\n]*on 330 samples");
  EXPECT_EQ(running, test) << frame << "\n" << r.out;
  EXPECT_NE(test, "0.00");  // not a vacuous 0 = 0
  // The kept log has no bar frames (the bar is erased before the epoch line).
  EXPECT_FALSE(has(slurp(run / "train.log"), " acc ")) << slurp(run / "train.log");
}

TEST(ProgressCli, SegmentationShowsPixelAccuracyTextBitsPerCharacterRegressionTheLoss) {
  if (!have_script()) GTEST_SKIP() << "util-linux `script` (a pseudo-terminal) is not installed";
  const fs::path d = temp_dir("ns_progress_", "tasks");
  // Segmentation: a tiny conv net on 24 synthetic pets images (20 train, batch 8: 3 steps).
  ASSERT_EQ(sh("data synth --task seg --format pets --n 24 -o " + (d / "pets").string()).status, 0);
  std::ofstream(d / "seg.json") << R"({"name": "tiny-seg", "inputChannels": 3,
    "inputHeight": 16, "inputWidth": 16, "layers": [
    {"kind": "conv2d", "ic": 3, "oc": 8, "k": 3, "act": "relu"},
    {"kind": "conv2d", "ic": 8, "oc": 3, "k": 1, "act": "identity"}],
    "train": {"dataset": "pets", "optimizer": "adam", "learningRate": 0.01, "batchSize": 8,
    "epochs": 1, "lossKind": "perPixelCE"}})";
  Result seg = on_tty(fmt::format("train {} --data {} --run-dir {}", (d / "seg.json").string(),
                                  (d / "pets").string(), (d / "seg").string()));
  ASSERT_EQ(seg.status, 0) << seg.out;
  const std::string sf = last_frame(seg.out, "epoch 1/1");
  std::smatch pm;
  ASSERT_TRUE(std::regex_search(sf, pm, std::regex(" loss [0-9.]+ pixel acc ([0-9.]+)% lr ")))
      << sf << "\n"
      << seg.out;
  EXPECT_GT(std::stod(pm[1].str()), 0.0) << sf;
  EXPECT_LE(std::stod(pm[1].str()), 100.0) << sf;

  // Text: the running bits per character are the running loss / ln 2.
  {
    std::ofstream f(d / "corpus.txt");
    for (int i = 0; i < 120; ++i) f << (i % 3 ? "the cat sees a dog.\n" : "a dog likes bread.\n");
  }
  std::ofstream(d / "tok.json") << kTinyGpt;
  Result text = on_tty(fmt::format("train {} --dataset text --data {} --epochs 1 --run-dir {}",
                                   (d / "tok.json").string(), (d / "corpus.txt").string(),
                                   (d / "text").string()));
  ASSERT_EQ(text.status, 0) << text.out;
  std::smatch m;
  const std::string tf = last_frame(text.out, "epoch 1/1");
  ASSERT_TRUE(std::regex_search(tf, m, std::regex(" loss ([0-9.]+) bpc ([0-9.]+) lr "))) << tf;
  EXPECT_NEAR(std::stod(m[2].str()), std::stod(m[1].str()) / std::log(2.0), 1.5e-4) << tf;
  EXPECT_FALSE(has(tf, " acc ")) << tf;

  // Regression (an autoencoder, target = input): the loss alone.
  {
    std::ofstream f(d / "x.csv");
    f << "a,b,c,label\n";
    for (int i = 0; i < 96; ++i)
      f << fmt::format("{},{},{},{}\n", (i % 7) / 3.0 - 1, (i % 5) / 2.0 - 1, (i % 3) - 1.0, i % 2);
  }
  std::ofstream(d / "ae.json") << R"({"name": "tiny-ae", "inputChannels": 3, "inputHeight": 0,
    "inputWidth": 0, "layers": [{"kind": "dense", "in": 3, "out": 8, "act": "relu"},
    {"kind": "dense", "in": 8, "out": 3, "act": "identity"}], "train": {"dataset": "csv",
    "optimizer": "adam", "learningRate": 0.01, "batchSize": 16, "epochs": 1,
    "lossKind": "floatTargetMse"}})";
  Result ae =
      on_tty(fmt::format("train {} --data {} --val-split 0.25 --run-dir {}",
                         (d / "ae.json").string(), (d / "x.csv").string(), (d / "ae").string()));
  ASSERT_EQ(ae.status, 0) << ae.out;
  const std::string af = last_frame(ae.out, "epoch 1/1");  // 72 train rows, batch 16
  EXPECT_TRUE(std::regex_search(af, std::regex("\\] 5/5 loss [0-9.]+ lr "))) << af << "\n"
                                                                             << ae.out;
}

TEST(ProgressCli, AFatalErrorEndsTrainLog) {
  const fs::path data = synthetic_fashion("ns_progress_", 256, 64, 5);
  const fs::path run = temp_dir("ns_progress_", "fatal");
  const std::string args =
      fmt::format("train mlp --dataset fashion-mnist --data {} --batch 32 --run-dir {}",
                  data.string(), run.string());
  // A divergence: exit 2, its message on stderr and as train.log's last line.
  Result r = sh(args + " --epochs 2 --optimizer adam --lr 1e6");
  ASSERT_EQ(r.status, 2) << r.out;
  const std::string log = slurp(run / "train.log");
  const size_t at = log.rfind("[train] diverged: ");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string last = log.substr(at);
  EXPECT_EQ(last.find('\n'), last.size() - 1) << log;  // the last line
  EXPECT_TRUE(has(r.out, last)) << r.out;

  // Data gone when a finished run is continued: the load error after the separator line.
  const fs::path ok = temp_dir("ns_progress_", "gone");
  const fs::path mine = synthetic_fashion("ns_progress_gone_", 64, 32, 6);
  const std::string base =
      fmt::format("train mlp --dataset fashion-mnist --data {} --batch 32 --run-dir {}",
                  mine.string(), ok.string());
  ASSERT_EQ(sh(base + " --epochs 1").status, 0);
  fs::remove_all(mine);
  Result gone = sh(base + " --epochs 2");
  ASSERT_EQ(gone.status, 2) << gone.out;
  const std::string log2 = slurp(ok / "train.log");
  const size_t sep = log2.rfind("\n----- ");
  ASSERT_NE(sep, std::string::npos) << log2;
  const std::string tail = log2.substr(log2.rfind('\n', log2.size() - 2) + 1);
  EXPECT_TRUE(has(tail, mine.string())) << log2;
  EXPECT_TRUE(has(gone.out, tail)) << gone.out << "\n---\n" << log2;
  // A refused command that made its run dir leaves none (nor a log) behind, as before.
  const fs::path refused = run.parent_path() / (run.filename().string() + "_refused");
  Result bad = sh(
      fmt::format("train mlp --dataset fashion-mnist --data {} --classes 2 --epochs 1 --run-dir {}",
                  data.string(), refused.string()));
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_FALSE(fs::exists(refused)) << bad.out;
}

}  // namespace
}  // namespace netspec::cli_test
