// What `netspec train` keeps of a run besides the weights, as a user runs it (child processes on
// synthetic IDX data): RUN/train.log holds the console's lines (run dir, config header, epoch
// lines, the closing line; no progress-bar redraws), a resume appends to it after a separator
// line and adds a TensorBoard event file; rerunning a finished run prints one "nothing to do"
// line (no config or layer table); SIGINT leaves train.log with the interrupt lines;
// `netspec report` says what it evaluates.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_util.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

const fs::path& data_dir() {
  static fs::path d = synthetic_fashion("ns_trainlog_cli_", 320, 100, 31);
  return d;
}

std::string train_args(const fs::path& run, int epochs) {
  return fmt::format(
      "train mlp --dataset fashion-mnist --data {} --batch 32 --epochs {} --run-dir {}",
      data_dir().string(), epochs, run.string());
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

size_t event_files(const fs::path& run) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(run))
    n += e.path().filename().string().rfind("events.out.tfevents.", 0) == 0 ? 1 : 0;
  return n;
}

TEST(TrainLogCli, TrainLogKeepsTheConsoleAndResumeAppends) {
  const fs::path run = temp_dir("ns_trainlog_cli_", "run");
  Result r = sh(train_args(run, 1));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string log1 = slurp(run / "train.log");
  EXPECT_EQ(log1.rfind("run dir: " + run.string() + "\n", 0), 0u) << log1;
  EXPECT_NE(log1.find("train mlp on fashionMnist: 320 train / 100 test samples"), std::string::npos)
      << log1;
  EXPECT_NE(log1.find("\nepoch 1/1  train loss "), std::string::npos) << log1;
  EXPECT_NE(log1.find("test accuracy"), std::string::npos) << log1;
  EXPECT_EQ(log1.find('\r'), std::string::npos);
  EXPECT_EQ(log1.find('\x1b'), std::string::npos);
  // Every line the console showed is in the log (stdout here is a pipe: no bar redraws).
  EXPECT_NE(r.out.find(log1), std::string::npos) << r.out << "\n---\n" << log1;
  EXPECT_EQ(event_files(run), 1u);

  // Finished: one line, no config or layer table, nothing loaded, the log left as it was.
  Result again = sh(train_args(run, 1));
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(again.out, "nothing to do: " + (run / "last.safetensors").string() +
                           " already has 1 of 1 epochs (raise --epochs to train more)\n");
  EXPECT_EQ(slurp(run / "train.log"), log1);

  // More epochs: the log grows after a separator line; a second event file.
  Result more = sh(train_args(run, 2));
  ASSERT_EQ(more.status, 0) << more.out;
  const std::string log2 = slurp(run / "train.log");
  ASSERT_EQ(log2.rfind(log1, 0), 0u) << log2;
  const std::string added = log2.substr(log1.size());
  EXPECT_EQ(added.rfind("----- ", 0), 0u) << added;
  EXPECT_NE(added.find(" UTC: "), std::string::npos) << added;
  EXPECT_NE(added.find("resuming "), std::string::npos) << added;
  EXPECT_NE(added.find("\nepoch 2/2  train loss "), std::string::npos) << added;
  EXPECT_EQ(count(log2, "epoch 1/"), 1u) << log2;
  EXPECT_EQ(event_files(run), 2u);

  // --overwrite removes the log and the event files with netspec's other files.
  Result over = sh(train_args(run, 1) + " --overwrite");
  ASSERT_EQ(over.status, 0) << over.out;
  EXPECT_EQ(event_files(run), 1u);
  EXPECT_EQ(slurp(run / "train.log").find("-----"), std::string::npos);

  // report: a line saying what is evaluated, then the time it took.
  Result rep = sh(fmt::format("report {} --data {}", run.string(), data_dir().string()));
  ASSERT_EQ(rep.status, 0) << rep.out;
  EXPECT_NE(rep.out.find("evaluating 100 samples ..."), std::string::npos) << rep.out;
  EXPECT_NE(rep.out.find("evaluated 100 samples in "), std::string::npos) << rep.out;
}

TEST(TrainLogCli, SigintLeavesTrainLogWithTheInterrupt) {
  const fs::path run = temp_dir("ns_trainlog_cli_", "int");
  const fs::path out = run.parent_path() / "ns_trainlog_int_child.log";
  // Stopped once the first epoch is saved: the signal lands in a later epoch (mid-epoch).
  const std::string script = fmt::format(
      "env --default-signal=INT {}/netspec {} > {} 2>&1 & p=$!; i=0; "
      "while [ ! -f {}/last.safetensors ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; "
      "kill -INT $p; wait $p; echo status=$?",
      NETSPEC_BINARY_DIR, train_args(run, 200), out.string(), run.string());
  const std::string st = run_script(script);
  EXPECT_NE(st.find("status=130"), std::string::npos) << st << slurp(out);
  const std::string log = slurp(run / "train.log");
  EXPECT_NE(log.find("\ninterrupted "), std::string::npos) << log;
  EXPECT_NE(log.find("\nstopped by signal\n"), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(run / "loss.png"));
}

}  // namespace
}  // namespace netspec::cli_test
