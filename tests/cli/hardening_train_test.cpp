// Bad outcomes of `train`, `predict` and `summary` (issue 25) end in a clear error: divergence
// (a growing or non-finite loss) stops the run without a "best", checkpoint metadata is
// validated and metrics rows survive a refused resume, every split's shape is checked before
// training, predict refuses non-finite outputs, summary refuses overflowing sizes, a run dir
// that cannot be one is named, and an inherited SIG_IGN for SIGINT is left alone.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "cli/cli_util.h"
#include "core/npy.h"
#include "core/safetensors.h"
#include "data/idx_fixture.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

const fs::path& data_dir() {
  static fs::path d = synthetic_fashion("ns_hard_train_", 640, 64, 5);
  return d;
}

std::string train_args(const fs::path& run, int epochs, const std::string& extra = "") {
  return fmt::format(
      "train mlp --dataset fashion-mnist --data {} --batch 32 --epochs {} "
      "--run-dir {} {}",
      data_dir().string(), epochs, run.string(), extra);
}

bool has(const Result& r, const std::string& s) { return r.out.find(s) != std::string::npos; }

TEST(HardeningTrain, AGrowingLossIsDivergenceAndSavesNoBest) {
  fs::path run = temp_dir("ns_hard_train_", "diverge");
  Result r = sh(train_args(run, 2, "--optimizer adam --lr 1e6"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "[train] diverged: ")) << r.out;
  EXPECT_FALSE(fs::exists(run / "best.safetensors"));
  EXPECT_FALSE(fs::exists(run / "best.json"));
  EXPECT_FALSE(fs::exists(run / "last.safetensors"));
  // A sane rate trains through (the guard does not trip on ordinary noise).
  fs::path ok = temp_dir("ns_hard_train_", "sane");
  Result good = sh(train_args(ok, 2, "--optimizer adam --lr 1e-3"));
  EXPECT_EQ(good.status, 0) << good.out;
}

std::vector<std::string> lines(const fs::path& p) {
  std::ifstream f(p);
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);) v.push_back(l);
  return v;
}

TEST(HardeningTrain, BadCheckpointMetadataIsRefusedAndKeepsMetricsRows) {
  fs::path run = temp_dir("ns_hard_train_", "meta");
  ASSERT_EQ(sh(train_args(run, 1)).status, 0);
  const auto rows = lines(run / "metrics.jsonl");
  ASSERT_EQ(rows.size(), 1u);
  const std::string path = (run / "last.safetensors").string();
  const SafeTensors good = read_safetensors(path);
  struct Case {
    const char* key;
    const char* value;
    const char* want;
  };
  const Case cases[] = {
      {"epoch", "-5", "metadata 'epoch' is not a non-negative whole number (got '-5')"},
      {"epoch", "1x", "metadata 'epoch' is not a non-negative whole number (got '1x')"},
      {"step", "-998", "metadata 'step' is not a non-negative whole number (got '-998')"},
      {"step", "0", "metadata 'step' 0 is less than epoch 1 + batch_in_epoch 0"},
      {"batch_in_epoch", "-84", "metadata 'batch_in_epoch' is not a non-negative whole number"},
      {"loss_sum", "nan", "metadata 'loss_sum' is not a finite number (got 'nan')"},
      {"netspec.format", "netspec-checkpoint-7",
       "metadata 'netspec.format' is 'netspec-checkpoint-7'"},
      {"netspec.format", "netspec-checkpoint-2x",
       "metadata 'netspec.format' is 'netspec-checkpoint-2x'"},
      {"netspec.format", "pytorch", "not a netspec checkpoint (metadata 'netspec.format' is"},
      // Formats 1 and 2 named themselves in 'format' itself.
      {"format", "netspec-checkpoint-9", "metadata 'format' is 'netspec-checkpoint-9'"},
  };
  for (const Case& c : cases) {
    SafeTensors bad = good;
    bad.metadata[c.key] = c.value;
    write_safetensors(path, bad);
    Result r = sh(train_args(run, 2));
    EXPECT_EQ(r.status, 2) << c.key << "=" << c.value << "\n" << r.out;
    EXPECT_TRUE(has(r, c.want)) << r.out;
    EXPECT_EQ(lines(run / "metrics.jsonl"), rows) << "a refused resume deleted metrics rows";
  }
  // Well-formed metadata at a position the data cannot have: refused before any row is dropped
  // (the epoch-1 row would be stale for an epoch-0 checkpoint, but this one is not verified).
  SafeTensors far = good;
  far.metadata["epoch"] = "0";
  far.metadata["batch_in_epoch"] = "999";
  far.metadata["step"] = "1000";
  write_safetensors(path, far);
  Result r = sh(train_args(run, 2));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "checkpoint is at update 999 of an epoch of 20 updates")) << r.out;
  EXPECT_EQ(lines(run / "metrics.jsonl"), rows);
}

TEST(HardeningTrain, ATestSplitOfAnotherImageSizeFailsBeforeTraining) {
  fs::path d = temp_dir("ns_hard_train_", "split");
  test::write_synthetic_split(d.string(), "train", 64, 3);
  std::vector<uint8_t> img(10 * 20 * 20, 7), lab(10, 1);
  test::write_gz((d / "t10k-images-idx3-ubyte.gz").string(), test::idx_bytes({10, 20, 20}, img));
  test::write_gz((d / "t10k-labels-idx1-ubyte.gz").string(), test::idx_bytes({10}, lab));
  Result r = sh(
      fmt::format("train mlp --dataset fashion-mnist --data {} --batch 32 --epochs 1", d.string()));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r,
                  "[train] test split sample shape does not match the net's input (got "
                  "tensor<10x1x20x20xui8>, expected Nx1x28x28)"))
      << r.out;
  EXPECT_FALSE(has(r, "epoch 1/1")) << r.out;
}

TEST(HardeningTrain, PredictRefusesNonFiniteOutputs) {
  fs::path run = temp_dir("ns_hard_train_", "predict");
  ASSERT_EQ(sh(train_args(run, 1)).status, 0);
  Tensor nan(DType::kF32, {1, 28, 28});
  for (float& v : nan.span<float>()) v = std::numeric_limits<float>::quiet_NaN();
  write_npy((run / "nan.npy").string(), nan);
  Tensor ok(DType::kF32, {1, 28, 28});
  write_npy((run / "ok.npy").string(), ok);
  Result r = sh(fmt::format("predict mlp --dataset fashion-mnist --checkpoint {} {} {}",
                            (run / "last.safetensors").string(), (run / "ok.npy").string(),
                            (run / "nan.npy").string()));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "nan.npy: no prediction (the net's outputs are not finite)")) << r.out;
  EXPECT_TRUE(has(r, "[predict] 1 of 2 inputs gave non-finite outputs")) << r.out;
  EXPECT_FALSE(has(r, "nan%")) << r.out;
  EXPECT_TRUE(has(r, "ok.npy: ")) << r.out;  // the finite input is still classified
}

TEST(HardeningTrain, SummaryRefusesSizesThatOverflow) {
  fs::path d = temp_dir("ns_hard_train_", "overflow");
  std::ofstream(d / "big.json") << R"({"name": "big", "inputChannels": 1, "inputHeight": 28,
    "inputWidth": 28, "layers": [{"kind": "convBn", "ic": 1, "oc": 32, "k": 2000000000},
    {"kind": "flatten"}, {"kind": "dense", "in": 25088, "out": 10}]})";
  Result r = sh("summary " + (d / "big.json").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "overflows 64-bit integers")) << r.out;
  EXPECT_FALSE(has(r, "total params")) << r.out;
}

TEST(HardeningTrain, ARunDirThatCannotBeOneIsNamed) {
  fs::path d = temp_dir("ns_hard_train_", "rundir");
  std::ofstream(d / "afile") << "x";
  Result r = sh(train_args(d / "afile", 1));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "[train] run dir '" + (d / "afile").string() +
                         "' exists and is a regular file (expected a directory)"))
      << r.out;
  r = sh(train_args("/proc/netspec_run", 1));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "[train] run dir '/proc/netspec_run' cannot be created (")) << r.out;
  // `run --output-dir` naming a file is refused by name too.
  std::ofstream(d / "one.mlir") << "func.func @main() -> tensor<f32> {\n"
                                   "  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
                                   "  return %0 : tensor<f32>\n}\n";
  Result o = sh("run " + (d / "one.mlir").string() + " --output-dir " + (d / "afile").string());
  EXPECT_EQ(o.status, 2) << o.out;
  EXPECT_TRUE(
      has(o, "[run] output dir '" + (d / "afile").string() + "' exists and is a regular file"))
      << o.out;
}

TEST(HardeningTrain, SpecBombsAndDuplicateKeysAreRefusedFast) {
  fs::path d = temp_dir("ns_hard_train_", "specjson");
  std::ofstream(d / "bomb.json") << std::string(200000, '[');
  auto t0 = std::chrono::steady_clock::now();
  Result r = sh("summary " + (d / "bomb.json").string());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "bomb.json:1:65: error: JSON nested deeper than 64 levels")) << r.out;
  EXPECT_LT(secs, 1.0);  // 35 s and 5.6 GB before the cap
  std::ofstream(d / "dup.json") << "{\"name\": \"d\", \"inputChannels\": 4,\n"
                                   " \"layers\": [{\"kind\": \"dense\", \"in\": 4, "
                                   "\"out\": 3, \"out\": 5}]}";
  r = sh("summary " + (d / "dup.json").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "dup.json:2:50: error: duplicate key \"out\" (first at 2:40")) << r.out;
}

TEST(HardeningTrain, ANegativeDimensionInATypeIsNamed) {
  fs::path d = temp_dir("ns_hard_train_", "negdim");
  std::ofstream(d / "neg.mlir") << "func.func @main(%a: tensor<-2x3xf32>) -> tensor<-2x3xf32> {\n"
                                   "  return %a : tensor<-2x3xf32>\n}\n";
  Result r = sh("run " + (d / "neg.mlir").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "negative dimension in tensor<-2x3xf32> (expected sizes >= 0)")) << r.out;
}

// Started from a non-interactive shell with `&`, SIGINT is ignored (POSIX); netspec keeps it so:
// the signal does not interrupt, the run completes.
TEST(HardeningTrain, AnInheritedSigIgnIsLeftAlone) {
  fs::path run = temp_dir("ns_hard_train_", "sigign"), log = run.parent_path() / "sigign.log";
  std::string out = run_script(fmt::format(
      "{}/netspec {} > {} 2>&1 & p=$!; i=0; "
      "while [ ! -f {}/last.safetensors ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; "
      "kill -INT $p; wait $p; echo status=$?",
      NETSPEC_BINARY_DIR, train_args(run, 4), log.string(), run.string()));
  const std::string l = slurp(log);
  EXPECT_NE(out.find("status=0"), std::string::npos) << out << l;
  EXPECT_EQ(l.find("interrupted"), std::string::npos) << l;
}

}  // namespace
}  // namespace netspec::cli_test
