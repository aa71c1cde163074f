// `netspec train | eval | predict` as a user runs them (child processes): learning above chance,
// resume after kill -9, SIGINT saves and exits 130, --config/--set errors leave the run dir
// alone, --help lists every field, eval/predict read a checkpoint. Synthetic IDX data keeps it
// fast; the Fashion-MNIST test uses the Debian package when present.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "core/npy.h"
#include "core/safetensors.h"
#include "data/idx_fixture.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines(const fs::path& p) {
  std::ifstream f(p);
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);) v.push_back(l);
  return v;
}

// A synthetic Fashion-MNIST-shaped set (the class lights one image tile), made once.
const fs::path& data_dir() {
  static fs::path d = synthetic_fashion("ns_train_cli_", 3000, 200, 21);
  return d;
}

std::string train_args(const fs::path& run, int epochs) {
  return fmt::format(
      "train mlp --dataset fashion-mnist --data {} --batch 32 --epochs {} "
      "--run-dir {}",
      data_dir().string(), epochs, run.string());
}

// Starts `netspec ARGS` in the background (SIGINT restored to its default: a background job of a
// non-interactive shell inherits it ignored, and netspec leaves an ignored SIGINT alone), waits (<=
// 20 s) for RUN/last.safetensors, sends SIG, waits for the child and returns its exit status (the
// child's output goes to LOG).
int run_and_signal(const std::string& args, const fs::path& run, const fs::path& log,
                   const std::string& sig) {
  std::string script = fmt::format(
      "env --default-signal=INT {}/netspec {} > {} 2>&1 & p=$!; i=0; "
      "while [ ! -f {}/last.safetensors ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; "
      "kill -{} $p; wait $p; echo status=$?",
      NETSPEC_BINARY_DIR, args, log.string(), run.string(), sig);
  const std::string out = run_script(script);
  auto at = out.find("status=");
  return at == std::string::npos ? -1 : std::stoi(out.substr(at + 7));
}

void expect_finite(const SafeTensors& st) {
  for (const auto& [name, t] : st.tensors)
    for (float v : t.span<float>()) ASSERT_TRUE(std::isfinite(v)) << name;
}

TEST(TrainCli, ResumesAfterKillWithoutDuplicateRows) {
  fs::path run = temp_dir("ns_train_cli_", "kill"), log = run.parent_path() / "kill_child.log";
  int st = run_and_signal(train_args(run, 4), run, log, "9");
  const std::string first = slurp(log);
  EXPECT_EQ(st, 137) << first;  // killed mid-run (the run takes several epochs)
  ASSERT_TRUE(fs::exists(run / "last.safetensors")) << first;
  SafeTensors ck = read_safetensors((run / "last.safetensors").string());
  const int saved = std::stoi(ck.metadata.at("epoch"));
  EXPECT_GE(saved, 1);

  Result r = sh(train_args(run, 4));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(fmt::format("resuming {}", (run / "last.safetensors").string())),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("epoch 1/4 "), saved >= 1 ? std::string::npos : 0u) << r.out;
  EXPECT_NE(r.out.find("epoch 4/4 "), std::string::npos) << r.out;
  // One row per epoch 1..4, in order, in both files.
  auto jl = lines(run / "metrics.jsonl");
  ASSERT_EQ(jl.size(), 4u) << slurp(run / "metrics.jsonl");
  for (int e = 0; e < 4; ++e) EXPECT_EQ(nlohmann::json::parse(jl[e])["epoch"], e + 1);
  EXPECT_EQ(lines(run / "metrics.csv").size(), 5u);
  SafeTensors fin = read_safetensors((run / "last.safetensors").string());
  EXPECT_EQ(fin.metadata.at("epoch"), "4");
  EXPECT_EQ(fin.metadata.at("step"), std::to_string(4 * ((3000 + 31) / 32)));  // tail trained
  expect_finite(fin);
  EXPECT_GT(nlohmann::json::parse(jl[3])["val_top1"].get<double>(), 0.8);
}

TEST(TrainCli, SigintSavesAndExits130) {
  fs::path run = temp_dir("ns_train_cli_", "int"), log = run.parent_path() / "int_child.log";
  int st = run_and_signal(train_args(run, 50), run, log, "INT");
  const std::string out = slurp(log);
  EXPECT_EQ(st, 130) << out;
  EXPECT_NE(out.find("interrupted"), std::string::npos) << out;
  EXPECT_NE(out.find("stopped by signal"), std::string::npos) << out;
  SafeTensors ck = read_safetensors((run / "last.safetensors").string());
  expect_finite(ck);
  // The save happened after the signal: the counters are past the first epoch's checkpoint.
  const int64_t step = std::stoll(ck.metadata.at("step"));
  EXPECT_GT(step, 3000 / 32) << out;
}

TEST(TrainCli, BadConfigExitsTwoAndKeepsTheRunDir) {
  fs::path run = temp_dir("ns_train_cli_", "cfg");
  Result ok = sh(train_args(run, 1) + " --limit 320");
  ASSERT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("config:"), std::string::npos);
  EXPECT_NE(ok.out.find("total params 669,706"), std::string::npos) << ok.out;  // the summary
  const std::string ck = slurp(run / "last.safetensors"), csv = slurp(run / "metrics.csv");
  const std::string cfg = slurp(run / "config.json");

  Result a = sh(train_args(run, 2) + " --set learningRate=-1");
  EXPECT_EQ(a.status, 2);
  EXPECT_NE(a.out.find("learningRate must be > 0 (got -1)"), std::string::npos) << a.out;
  Result b = sh(train_args(run, 2) + " --set learnRate=1");
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.out.find("unknown TrainConfig field 'learnRate'"), std::string::npos) << b.out;
  Result c = sh(train_args(run, 2) + " --set optimizer=sgdd");
  EXPECT_EQ(c.status, 2);
  EXPECT_NE(c.out.find("sgdd"), std::string::npos) << c.out;
  fs::path bad = run.parent_path() / "cfg_bad.json";
  std::ofstream(bad) << "{\n  \"epochs\": 2,\n  \"batchSize\": \"big\"\n}\n";
  Result d = sh(train_args(run, 2) + " --config " + bad.string());
  EXPECT_EQ(d.status, 2);
  EXPECT_NE(d.out.find(bad.string() + ":3:"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("batchSize"), std::string::npos) << d.out;
  EXPECT_EQ(slurp(run / "last.safetensors"), ck);
  EXPECT_EQ(slurp(run / "metrics.csv"), csv);
  EXPECT_EQ(slurp(run / "config.json"), cfg);

  // A good config file and --set reach the resolved config (printed and saved).
  fs::path good = run.parent_path() / "cfg_good.json";
  std::ofstream(good) << R"({"optimizer": "sgd", "momentum": 0.5, "evalEveryNEpochs": 2})";
  fs::path run2 = temp_dir("ns_train_cli_", "cfg2");
  Result e =
      sh(fmt::format("train mlp --dataset fashion-mnist --data {} --batch 32 --epochs 1 "
                     "--limit 320 --run-dir {} --config {} --set momentum=0.25 --set "
                     "labelSmoothing=0.1",
                     data_dir().string(), run2.string(), good.string()));
  ASSERT_EQ(e.status, 0) << e.out;
  EXPECT_NE(e.out.find("optimizer = sgd"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("momentum = 0.25"), std::string::npos) << e.out;
  auto saved = nlohmann::json::parse(slurp(run2 / "config.json"))["spec"]["train"];
  EXPECT_EQ(saved["optimizer"], "sgd");
  EXPECT_EQ(saved["momentum"], 0.25);
  EXPECT_EQ(saved["evalEveryNEpochs"], 2);
  EXPECT_EQ(saved["labelSmoothing"], 0.1);
}

TEST(TrainCli, HelpListsEveryFieldWithItsDefault) {
  Result r = sh("train --help");
  ASSERT_EQ(r.status, 0);
  for (const char* s : {"--config", "--set", "--schedule", "--run-dir", "gradAccumSteps",
                        "evalEveryNEpochs", "headLrMult", "yoloClsFocalGamma"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  EXPECT_NE(r.out.find("batchSize                128"), std::string::npos) << r.out;
}

TEST(TrainCli, EvalAndPredictReadTheBestCheckpoint) {
  fs::path run = temp_dir("ns_train_cli_", "eval");
  Result t = sh(train_args(run, 1) + " --limit 640");
  ASSERT_EQ(t.status, 0) << t.out;
  auto best = nlohmann::json::parse(slurp(run / "best.json"));
  Result e = sh(fmt::format("eval mlp --checkpoint {} --dataset fashion-mnist --data {} --batch 64",
                            (run / "best.safetensors").string(), data_dir().string()));
  ASSERT_EQ(e.status, 0) << e.out;
  EXPECT_NE(e.out.find(fmt::format("top-1 {:.2f}%", 100 * best["val_top1"].get<double>())),
            std::string::npos)
      << e.out << best.dump();
  EXPECT_NE(e.out.find("top-5"), std::string::npos);
  EXPECT_NE(e.out.find("count 200"), std::string::npos) << e.out;

  // A sample lighting tile 0 (class 0 "T-shirt/top" in the synthetic set), normalised as
  // Fashion-MNIST is.
  Tensor x(DType::kF32, {1, 28, 28});
  for (int y = 0; y < 28; ++y)
    for (int c = 0; c < 28; ++c)
      x.data<float>()[y * 28 + c] = ((y < 7 && c < 7 ? 0.8f : 0.1f) - 0.2860f) / 0.3530f;
  fs::path npy = run / "x.npy";
  write_npy(npy.string(), x);
  Result p = sh(fmt::format("predict mlp --checkpoint {} --top 3 {}",
                            (run / "best.safetensors").string(), npy.string()));
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_NE(p.out.find(npy.string() + ": T-shirt/top"), std::string::npos) << p.out;
  EXPECT_EQ(std::count(p.out.begin(), p.out.end(), '%'), 3) << p.out;
  Result bad = sh(fmt::format("predict mlp --checkpoint {} {}", (run / "best.safetensors").string(),
                              (run / "missing.npy").string()));
  EXPECT_EQ(bad.status, 2) << bad.out;
}

TEST(TrainCli, MlpOnFashionMnistSliceBeatsChance) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist"))
    GTEST_SKIP() << "dataset-fashion-mnist not installed";
  Result r = sh("train mlp --epochs 1 --limit 3000 --batch 64 --overwrite --run-dir " +
                temp_dir("ns_train_cli_", "fmnist").string());
  ASSERT_EQ(r.status, 0) << r.out;
  auto at = r.out.find("test accuracy ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_GT(std::stod(r.out.substr(at + 14)), 65.0) << r.out;  // chance is 10 %
}

// A bf16 run on a CPU without bf16 kernels says that its products run in f32 (forced here with
// NETSPEC_BF16_EMULATE=1, the path such a CPU takes); a run without bf16 says nothing of it.
TEST(TrainCli, Bf16WithoutBf16KernelsIsSaid) {
  const std::string note = "bf16: this CPU has no bf16 kernels";
  for (const bool bf16 : {true, false}) {
    const fs::path run = temp_dir("ns_train_cli_", bf16 ? "bf16_on" : "bf16_off");
    Result r = run_netspec(
        "NETSPEC_BF16_EMULATE=1",
        fmt::format("train mlp --dataset fashion-mnist --data {} --batch 32 --epochs 1 --limit 256 "
                    "--set bf16={} --overwrite --run-dir {}",
                    data_dir().string(), bf16, run.string()));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out.find(note) != std::string::npos, bf16) << r.out;
  }
}

// RandAugment / AutoAugment on an MNIST-format set (held as bytes since issue 45): trains and
// learns the synthetic tiles (chance 10 %).
TEST(TrainCli, RandAugmentAndAutoAugmentTrainOnIdxData) {
  for (const char* policy : {"randAugment", "autoAugment"}) {
    const fs::path run = temp_dir("ns_train_cli_", std::string("ra_") + policy);
    Result r = sh(fmt::format("train mlp --dataset fashion-mnist --data {} --batch 32 --epochs 2 "
                              "--limit 1500 --set {}=true --overwrite --run-dir {}",
                              data_dir().string(), policy, run.string()));
    ASSERT_EQ(r.status, 0) << r.out;
    auto at = r.out.find("test accuracy ");
    ASSERT_NE(at, std::string::npos) << r.out;
    EXPECT_GT(std::stod(r.out.substr(at + 14)), 40.0) << r.out;
    auto cfg = nlohmann::json::parse(std::ifstream(run / "config.json"));
    EXPECT_EQ(cfg["spec"]["train"][policy], true) << cfg.dump();
  }
}

// A spec written in the seed's TrainConfig names trains; each converted field is said once.
TEST(TrainCli, SeedFieldNamesLoadWithOneLinePerConversion) {
  const fs::path dir = temp_dir("ns_train_cli_", "seedspec");
  fs::create_directories(dir);
  std::ofstream(dir / "seed.json") << R"({"name": "seedmlp", "inputChannels": 1,
  "inputHeight": 28, "inputWidth": 28,
  "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 784, "out": 10}],
  "train": {"dataset": "fashionMnist", "useAdam": false, "momentum": 0.9, "learningRate": 0.05,
            "cosineDecay": true, "valEveryEpochs": 0, "bnMomentum": 0.9, "epochs": 1}})";
  Result r = sh(fmt::format("train {} --data {} --batch 32 --limit 1000 --overwrite --run-dir {}",
                            (dir / "seed.json").string(), data_dir().string(),
                            (dir / "run").string()));
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* n : {"seed field useAdam=false read as optimizer=sgd",
                        "seed field cosineDecay=true read as schedule=cosine",
                        "seed field valEveryEpochs=0 read as evalEveryNEpochs=1"}) {
    EXPECT_NE(r.out.find(n), std::string::npos) << n << "\n" << r.out;
  }
  auto cfg = nlohmann::json::parse(std::ifstream(dir / "run" / "config.json"));
  EXPECT_EQ(cfg["spec"]["train"]["optimizer"], "sgd") << cfg.dump();
  EXPECT_EQ(cfg["spec"]["train"]["schedule"], "cosine");
  EXPECT_FALSE(cfg["spec"]["train"].contains("useAdam"));
  // Refused by name, exit 2.
  std::ofstream(dir / "bad.json") << R"({"name": "b", "inputChannels": 1, "inputHeight": 28,
  "inputWidth": 28, "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 784, "out": 10}],
  "train": {"bootstrapBackboneRange": ["a.bin", 0, 0, 4]}})";
  r = sh(fmt::format("train {} --data {} --run-dir {}", (dir / "bad.json").string(),
                     data_dir().string(), (dir / "run2").string()));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("bad.json:3:13: error: [train] seed field bootstrapBackboneRange"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace netspec::cli_test
