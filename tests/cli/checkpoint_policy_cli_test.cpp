// `train --monitor --mode --save-top-k --early-stop --min-delta` as a user runs them: bad values
// exit 2 naming the flag (and leave no new run dir), an early stop ends with exit 0, its line,
// the top-k file, the fields in config.json, and `report` reads the run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

const fs::path& data_dir() {
  static fs::path d = synthetic_fashion("ns_ckpt_cli_", 320, 100, 23);
  return d;
}

std::string train_args(const fs::path& run, int epochs) {
  return fmt::format(
      "train mlp --dataset fashion-mnist --data {} --batch 64 --epochs {} --run-dir {}",
      data_dir().string(), epochs, run.string());
}

TEST(CheckpointPolicyCli, BadValuesExitTwoNamingTheFlag) {
  const fs::path base = temp_dir("ns_ckpt_cli_", "bad");
  struct Case {
    std::string flags, says;
  };
  const std::vector<Case> cases = {
      {"--mode foo", "--mode foo: monitorMode must be min, max or auto (got 'foo')"},
      {"--save-top-k -1", "--save-top-k -1: saveTopK must be >= 0 (got -1)"},
      {"--monitor accuracy", "--monitor accuracy: monitor must be train_loss or a validation"},
      {"--early-stop -2", "--early-stop -2: earlyStopPatience must be >= 0"},
      {"--min-delta x", "--min-delta x:"},
      {"--set plateauFactor=2", "--set plateauFactor=2: plateauFactor must be in (0, 1)"},
      {"--monitor val_miou",
       "monitor 'val_miou' is not a metric of this run (expected one of train_loss, val_score, "
       "val_loss, val_top1, val_top5)"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const fs::path run = base / ("r" + std::to_string(i++));
    Result r = sh(train_args(run, 1) + " " + c.flags);
    EXPECT_EQ(r.status, 2) << c.flags << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.flags << "\n" << r.out;
    EXPECT_FALSE(fs::exists(run / "config.json")) << c.flags;
  }
}

TEST(CheckpointPolicyCli, EarlyStopEndsCleanlyAndReportReadsTheRun) {
  const fs::path run = temp_dir("ns_ckpt_cli_", "early") / "run";
  Result r =
      sh(train_args(run, 8) + " --monitor val_loss --save-top-k 1 --early-stop 1 --min-delta 1e9");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("early stop after epoch 2: val_loss did not improve by more than 1e+09 "
                       "for 1 evaluations"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("epoch 3/8"), std::string::npos) << r.out;
  std::vector<std::string> kept;
  for (const auto& e : fs::directory_iterator(run / "checkpoints"))
    kept.push_back(e.path().filename().string());
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].rfind("epoch=00", 0), 0u) << kept[0];
  EXPECT_NE(kept[0].find("-val_loss="), std::string::npos) << kept[0];
  const auto cfg = nlohmann::json::parse(slurp(run / "config.json"));
  const auto& t = cfg["spec"]["train"];
  EXPECT_EQ(t["monitor"], "val_loss");
  EXPECT_EQ(t["saveTopK"], 1);
  EXPECT_EQ(t["earlyStopPatience"], 1);
  EXPECT_EQ(t["earlyStopMinDelta"], 1e9);
  // The same command again: nothing to do, exit 0.
  Result again =
      sh(train_args(run, 8) + " --monitor val_loss --save-top-k 1 --early-stop 1 --min-delta 1e9");
  EXPECT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("was early-stopped after epoch 2"), std::string::npos) << again.out;
  Result rep = sh(fmt::format("report {} --data {}", run.string(), data_dir().string()));
  EXPECT_EQ(rep.status, 0) << rep.out;
}

}  // namespace
}  // namespace netspec::cli_test
