// What a new user meets first (issue 44 items 4 and 5): did-you-mean for mistyped flags, --set
// fields, nets and datasets; --set aliases; typed flags and grouped commands in help; --version.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "tests/cli/cli_util.h"
#include "train/run_dir.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;
using cli_test::Result;
using cli_test::sh;

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// `netspec ARGS` exits 2 with `text` in its output.
void expect_refused(const std::string& args, const std::string& text) {
  Result r = sh(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
  EXPECT_TRUE(has(r.out, text)) << args << "\n" << r.out;
}

TEST(UsabilityCli, UnknownFlagNamesTheNearestFlag) {
  Result r = sh("train mlp --epoch 1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "[netspec train] unknown flag --epoch; did you mean '--epochs'?"))
      << r.out;
  EXPECT_FALSE(has(r.out, "were not expected")) << r.out;  // CLI11's raw message is replaced
  // A nested command, and a typo that also leaves a required flag missing.
  expect_refused("data synth --task det --frmat voc --n 3 -o x",
                 "[netspec data synth] unknown flag --frmat; did you mean '--format'?");
  // --flag=value and a flag nothing is near: named, no suggestion.
  expect_refused("eval mlp --chekpoint=x.safetensors",
                 "unknown flag --chekpoint; did you mean '--checkpoint'?");
  expect_refused("train mlp --zzzzzz", "unknown flag --zzzzzz (netspec train --help");
  // Extra positionals keep CLI11's message (no flag is unknown).
  Result g = sh("summary mlp extra");
  EXPECT_EQ(g.status, 2) << g.out;
  EXPECT_FALSE(has(g.out, "unknown flag")) << g.out;
}

TEST(UsabilityCli, SetFieldsNetsAndDatasetsSuggest) {
  expect_refused("train mlp --set learningrate=0.1",
                 "unknown TrainConfig field 'learningrate'; did you mean 'learningRate'?");
  expect_refused("train mpl", "unknown net 'mpl'; did you mean 'mlp'?");
  expect_refused("train mlp --dataset fashion_mnist",
                 "unknown dataset 'fashion_mnist'; did you mean 'fashion-mnist'?");
}

// lr, bs and wd stand for learningRate, batchSize and weightDecay: validated as those fields and
// recorded under their names in config.json.
TEST(UsabilityCli, SetAliasesReachTheirFields) {
  expect_refused("train mlp --set lr=0", "learningRate must be > 0 (got 0)");
  expect_refused("train mlp --set bs=0", "batchSize must be >= 1 (got 0)");
  expect_refused("train mlp --set wd=-1", "weightDecay must be >= 0 (got -1)");
  const fs::path data = cli_test::synthetic_fashion("netspec_ux_", 64, 32, 5);
  const fs::path run = data.parent_path() / ("netspec_ux_alias_run_" + std::to_string(getpid()));
  Result r = sh("train mlp --dataset fashion-mnist --data " + data.string() +
                " --epochs 1 --set lr=0.0125 --set bs=32 --set wd=0.002 --run-dir " + run.string());
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string cfg = cli_test::slurp(run / "config.json");
  EXPECT_TRUE(has(cfg, "\"learningRate\": 0.0125")) << cfg;
  EXPECT_TRUE(has(cfg, "\"batchSize\": 32")) << cfg;
  EXPECT_TRUE(has(cfg, "\"weightDecay\": 0.002")) << cfg;
  EXPECT_TRUE(has(sh("train --help").out, "lr, bs and wd for learningRate, batchSize and"));
  fs::remove_all(run);
}

// Every command's help: numeric and path flags say so (no `--epochs TEXT`); --pjrt-devices
// mentions --replicas only where the command has it.
TEST(UsabilityCli, HelpTypesFlags) {
  Result t = sh("train --help");
  ASSERT_EQ(t.status, 0);
  for (const char* s : {"--epochs INT", "--batch INT", "--lr FLOAT", "--seed INT", "--data PATH",
                        "--run-dir DIR", "--limit INT", "--val-split FLOAT", "--classes INT",
                        "--set FIELD=VALUE", "--backend NAME=cpu"})
    EXPECT_TRUE(has(t.out, s)) << s;
  EXPECT_TRUE(has(t.out, "in-process devices for --replicas")) << t.out;
  // A flag whose value is not what its name usually takes keeps its own label.
  EXPECT_TRUE(has(sh("bench --help").out, "--input CxHxW"));
  EXPECT_TRUE(has(sh("sample --help").out, "--checkpoint NAME=best"));
  const std::regex text_flag(R"(\n\s+(-\w,)?--[a-z-]+ TEXT)");
  for (const char* c : {"run", "summary", "gradcheck", "emit", "compile", "train", "bench", "cam",
                        "convert", "eval", "predict", "report", "sample", "data synth"}) {
    Result h = sh(std::string(c) + " --help");
    ASSERT_EQ(h.status, 0) << c;
    EXPECT_FALSE(std::regex_search(h.out, text_flag)) << c << ":\n" << h.out;
  }
  for (const char* c : {"predict", "eval", "cam", "sample"}) {
    Result h = sh(std::string(c) + " --help");
    EXPECT_TRUE(has(h.out, "--pjrt-devices")) << c;
    EXPECT_FALSE(has(h.out, "--replicas")) << c << ":\n" << h.out;
  }
}

// `netspec --help`: four groups in order, each with an example; every command listed once.
TEST(UsabilityCli, TopHelpIsGroupedWithExamples) {
  Result h = sh("--help");
  ASSERT_EQ(h.status, 0) << h.out;
  size_t at = 0;
  for (const char* g : {"Train & use:", "Inspect & emit:", "Engines:", "Data:"}) {
    const size_t p = h.out.find(g);
    ASSERT_NE(p, std::string::npos) << g << "\n" << h.out;
    EXPECT_GT(p, at) << g;
    at = p;
    EXPECT_NE(h.out.find("  e.g. netspec ", p), std::string::npos) << g;
  }
  EXPECT_LT(h.out.find("\n  train "), h.out.find("\n  run ")) << h.out;
  EXPECT_FALSE(has(h.out, "Other:")) << h.out;  // every command has a group
  for (const char* c :
       {"run", "summary", "list", "gradcheck", "emit", "compile", "train", "bench", "cam",
        "convert", "data", "eval", "generate", "launch", "predict", "report", "sample"}) {
    const std::string line = std::string("\n  ") + c + " ";
    const size_t p = h.out.find(line);
    EXPECT_NE(p, std::string::npos) << c;
    EXPECT_EQ(h.out.find(line, p + 1), std::string::npos) << c << " listed twice";
  }
}

TEST(UsabilityCli, VersionCarriesTheGitCommit) {
  Result v = sh("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_TRUE(has(v.out, "netspec 0.1.0")) << v.out;
  EXPECT_TRUE(has(v.out, train::netspec_version())) << v.out;  // what config.json records
}

}  // namespace
}  // namespace netspec

namespace netspec {
namespace {

// Issue 44 item 8: the small things a first session trips over.
TEST(UsabilityCli, MissingArgumentsGiveUsage) {
  expect_refused("cam", "usage: netspec cam RUN_DIR IMAGE...");
  expect_refused("predict", "usage: netspec predict RUN_DIR INPUT...");
  expect_refused("predict mlp", "(got no inputs after mlp)");
  // report of a missing dir: the error on stderr, nothing claimed on stdout.
  const std::string out = cli_test::run_script(std::string(NETSPEC_BINARY_DIR) +
                                               "/netspec report nonexist 2>/dev/null; echo rc=$?");
  EXPECT_EQ(out, "rc=2\n");
}

TEST(UsabilityCli, BackendThisBuildLacksIsRefusedFirst) {
#ifdef NETSPEC_HAVE_PJRT
  GTEST_SKIP() << "this build has the xla backend";
#endif
  const fs::path run = cli_test::temp_dir("netspec_ux_", "xla") / "run";
  Result r = sh("train mlp --backend xla --epochs 1 --run-dir " + run.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "built without PJRT support")) << r.out;
  EXPECT_TRUE(has(r.out, "this build has cpu, iree, ref")) << r.out;
  EXPECT_FALSE(has(r.out, "run dir:")) << r.out;  // refused before anything else
  EXPECT_FALSE(has(r.out, "config:")) << r.out;
  EXPECT_FALSE(fs::exists(run));
  expect_refused("predict mlp x.png --backend xla", "this build has cpu, iree, ref");
}

TEST(UsabilityCli, AnotherNetsCheckpointIsNamed) {
  const fs::path data = cli_test::synthetic_fashion("netspec_ux_ck_", 32, 16, 7);
  const fs::path run = data.parent_path() / "run";
  Result t = sh("train mlp --dataset fashion-mnist --data " + data.string() +
                " --epochs 1 --batch 16 --run-dir " + run.string());
  ASSERT_EQ(t.status, 0) << t.out;
  expect_refused("eval mnist-cnn --checkpoint " + (run / "last.safetensors").string() + " --data " +
                     data.string(),
                 "last.safetensors: this checkpoint is for mlp");
}

TEST(UsabilityCli, EmitMakesTheOutputFolder) {
  const fs::path out = cli_test::temp_dir("netspec_ux_", "emit") / "new" / "deeper" / "x.mlir";
  Result r = sh("emit mlp -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(cli_test::slurp(out), "func.func"));
  EXPECT_TRUE(fs::exists(out.parent_path() / "x.manifest.json"));
}

}  // namespace
}  // namespace netspec
