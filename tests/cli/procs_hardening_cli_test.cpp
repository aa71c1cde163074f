// Processes and run dirs as a user meets them (issue 40 items 5, 6, 7, 15): kill -9 of `launch`
// takes its ranks along (they were reparented and kept training); concurrent trainers of one run
// dir do not interleave (one holds the run dir, the others exit 2 naming its pid); a spec's
// "name" of ../../escaped keeps the default run dir under runs/; a run's config.json with
// "limit": -5 / 1e300, "classes": -3 or a duplicate key is refused on --resume and --config
// instead of training on every sample.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli/cli_util.h"
#include "train/run_dir.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

const fs::path& data_dir() {
  static fs::path d = synthetic_fashion("ns_procs_", 512, 64, 11);
  return d;
}

std::string train_args(const fs::path& run, int epochs, const std::string& more = "") {
  return fmt::format(
      "train mlp --dataset fashion-mnist --data {} --batch 32 --epochs {} --run-dir {} {}",
      data_dir().string(), epochs, run.string(), more);
}

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

TEST(ProcsHardening, KillingLaunchWithSigkillStopsItsRanks) {
  const fs::path dir = temp_dir("ns_procs_", "orphans");
  // launch in the background; once rank 0 saved a checkpoint, SIGKILL launch alone, then report
  // for 30 s whether its ranks still run (a zombie waiting for its reaper counts as ended).
  const std::string out = run_script(fmt::format(
      "{bin}/netspec launch --nproc 2 -- {args} > {d}/launch.log 2>&1 & p=$!; i=0; "
      "while [ ! -f {d}/run/last.safetensors ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); "
      "done; pids=$(sed -n \"s/.*(pids \\(.*\\))/\\1/p\" {d}/launch.log); kill -9 $p; "
      "alive() {{ [ -e /proc/$1 ] && ! grep -q \"^State:.*Z\" /proc/$1/status; }}; "
      "i=0; while [ $i -lt 300 ]; do n=0; for q in $pids; do alive $q && n=$((n+1)); done; "
      "[ $n -eq 0 ] && break; sleep 0.1; i=$((i+1)); done; "
      "echo pids=$pids running=$n after=$i; for q in $pids; do kill -9 $q 2>/dev/null; done",
      fmt::arg("bin", NETSPEC_BINARY_DIR), fmt::arg("args", train_args(dir / "run", 10000)),
      fmt::arg("d", dir.string())));
  const std::string log = slurp(dir / "launch.log");
  ASSERT_TRUE(std::regex_search(out, std::regex("pids=[0-9]+ [0-9]+ "))) << out << log;
  EXPECT_TRUE(has(out, "running=0")) << out << log;
  // They stopped as on a forwarded SIGTERM: rank 0 saved `last` and said so.
  EXPECT_TRUE(has(log, "stopped by signal")) << log;
  // Nothing holds the run dir any more: a relaunch resumes it.
  Result again = sh("launch --nproc 2 -- " + train_args(dir / "run", 1, "--resume"));
  EXPECT_EQ(again.status, 0) << again.out;
}

TEST(ProcsHardening, ARunDirHeldByAnotherProcessIsRefusedNamingItsPid) {
  const fs::path run = temp_dir("ns_procs_", "held");
  {
    train::RunDirLock held(run.string(), false);  // this test process holds the run dir
    Result r = sh(train_args(run, 1, "--limit 64"));
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_TRUE(has(r.out, fmt::format("[train] run dir '{}' is in use by another netspec "
                                       "process (pid {}",
                                       run.string(), getpid())))
        << r.out;
    EXPECT_FALSE(fs::exists(run / "config.json"));
  }
  // Four trainers of one run dir at once (the reproducer): each either trains or is
  // refused naming the holder; metrics.csv holds epochs 1..4 once each, in order.
  const fs::path same = temp_dir("ns_procs_", "same");
  const std::string out = run_script(fmt::format(
      "p=; for i in 1 2 3 4; do {bin}/netspec {args} > {d}.$i.log 2>&1 & p=\"$p $!\"; done; "
      "for q in $p; do wait $q; echo status=$?; done",
      fmt::arg("bin", NETSPEC_BINARY_DIR),
      fmt::arg("args", train_args(same / "run", 4, "--limit 256")), fmt::arg("d", same.string())));
  int trained = 0;
  for (int i = 1; i <= 4; ++i) {
    const std::string log = slurp(same.string() + "." + std::to_string(i) + ".log");
    EXPECT_FALSE(has(log, "cannot rename")) << log;
    if (has(log, "is in use by another netspec process (pid ")) continue;
    EXPECT_TRUE(has(log, "epoch 4/4") || has(log, "resuming")) << log;
    ++trained;
  }
  EXPECT_GE(trained, 1) << out;
  std::istringstream csv(slurp(same / "run" / "metrics.csv"));
  std::string line, epochs;
  std::getline(csv, line);
  while (std::getline(csv, line)) epochs += line.substr(0, line.find(',')) + " ";
  EXPECT_EQ(epochs, "1 2 3 4 ") << out;
}

TEST(ProcsHardening, AHostileSpecNameKeepsTheDefaultRunDirUnderRuns) {
  const fs::path cwd = temp_dir("ns_procs_", "escape");
  nlohmann::json spec =
      nlohmann::json::parse(slurp(fs::path(NETSPEC_SOURCE_DIR) / "models" / "mlp.json"));
  spec["name"] = "../../escaped";
  std::ofstream(cwd / "hostile.json") << spec.dump();
  fs::create_directories(cwd / "a" / "b");
  Result r = run_netspec(
      "cd " + (cwd / "a" / "b").string() + " &&",
      fmt::format("train ../../hostile.json --dataset fashion-mnist --data {} --epochs 1 "
                  "--limit 64 --batch 32",
                  data_dir().string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("run dir: runs/_._.._escaped-", 0), 0u) << r.out;
  for (const auto& e : fs::directory_iterator(cwd))  // nothing made beside a/ and the spec
    EXPECT_TRUE(e.path().filename() == "a" || e.path().filename() == "hostile.json") << e.path();
  EXPECT_EQ(std::distance(fs::directory_iterator(cwd / "a" / "b" / "runs"), {}), 1);
}

TEST(ProcsHardening, ARunRecordGoesThroughTheFlagChecks) {
  const fs::path run = temp_dir("ns_procs_", "record");
  ASSERT_EQ(sh(train_args(run, 1, "--limit 64")).status, 0);
  const std::string good = slurp(run / "config.json");
  auto edit = [&](const std::string& key, const nlohmann::ordered_json& v) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(good);
    j[key] = v;
    std::ofstream(run / "config.json") << j.dump(2);
  };
  const std::string resume = fmt::format("train --resume --run-dir {} --epochs 2", run.string());
  edit("limit", -5);
  Result r = sh(resume);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out,
                  "config.json: \"limit\" must be an integer in 0..9007199254740992 (got "
                  "-5)"))
      << r.out;
  edit("limit", 1e300);
  r = sh(resume);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "(got 1e+300)")) << r.out;
  edit("classes", -3);
  r = sh(fmt::format("train --config {} --run-dir {}", (run / "config.json").string(),
                     (run / "copy").string()));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "\"classes\" must be an integer in 0..1000000000 (got -3)")) << r.out;
  std::ofstream(run / "config.json") << "{\"limit\": 1, " << good.substr(good.find('{') + 1);
  r = sh(resume);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "duplicate key \"limit\"")) << r.out;
  std::ofstream(run / "config.json") << good;  // restored: resumes
  r = sh(resume);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "epoch 2/2")) << r.out;
}

}  // namespace
}  // namespace netspec::cli_test
