// Metrics files under attack or failure (issue 40 items 7 and 9): a symlink planted at
// metrics.csv is refused, never followed (no file is created or filled elsewhere); a failed
// append (EFBIG under RLIMIT_FSIZE, as ENOSPC) stops the run naming the file instead of losing
// the rows; on resume an unparsable line with valid rows after it is refused naming the file and
// line (the old reader dropped it and every later row, then rewrote both files), while an
// unterminated last line (a killed append) is still dropped; loss.png / loss.svg are written
// atomically too (cairo wrote through a planted symlink).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "report/metrics_log.h"
#include "report/plot.h"
#include "tests/error_of.h"
#include "tests/support/fifo_release.h"
#include "tests/support/test_files.h"

namespace netspec::report {
namespace {

namespace fs = std::filesystem;
using test_util::error_of;

fs::path fresh_dir(const std::string& name) {
  return netspec::test_util::fresh_dir("metrics_hard", name);
}

using netspec::test_util::slurp;

Row row(int epoch) { return {{"epoch", epoch}, {"train_loss", 0.5}}; }

TEST(MetricsHardening, APlantedSymlinkIsRefusedAndNothingIsWrittenElsewhere) {
  const fs::path d = fresh_dir("symlink"), outside = fresh_dir("outside");
  fs::create_symlink(outside / "planted.csv", d / "metrics.csv");
  MetricsLog log(d.string(), 0);
  std::string e = error_of([&] { log.append(row(1)); });
  EXPECT_NE(e.find("[metrics] cannot append to '" + (d / "metrics.csv").string() +
                   "': it is a symbolic link"),
            std::string::npos)
      << e;
  EXPECT_FALSE(fs::exists(outside / "planted.csv"));
}

TEST(MetricsHardening, AFailedAppendStopsTheRunNamingTheFile) {
  const fs::path d = fresh_dir("efbig");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // files may not grow past 200 bytes here: appends fail with EFBIG
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit r{200, 200};
    ::setrlimit(RLIMIT_FSIZE, &r);
    MetricsLog log(d.string(), 0);
    std::string e = error_of([&] {
      for (int i = 1; i <= 20; ++i) log.append(row(i));
    });
    ::_exit(e.find("failed (File too large)") != std::string::npos &&
                    e.find(d.string() + "/metrics.") != std::string::npos
                ? 0
                : 1);
  }
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0) << "rows were lost without an error";
}

TEST(MetricsHardening, ABadLineBeforeValidRowsIsRefusedNamingFileAndLine) {
  const fs::path d = fresh_dir("badline");
  std::ofstream(d / "metrics.jsonl") << "{\"epoch\": 1, \"train_loss\": 0.5}\n"
                                        "{\"epoch\": 2, \"train_loss\": 0.5}\n"
                                        "{\"epoch\": 3, oops}\n"
                                        "{\"epoch\": 4, \"train_loss\": 0.5}\n";
  std::ofstream(d / "metrics.csv") << "epoch,train_loss\n1,0.5\n2,0.5\n3,0.5\n4,0.5\n";
  const std::string before = slurp(d / "metrics.jsonl");
  std::string e = error_of([&] { MetricsLog log(d.string(), 4); });
  EXPECT_NE(e.find("[metrics] " + (d / "metrics.jsonl").string() + " line 3 is not a metrics row"),
            std::string::npos)
      << e;
  EXPECT_EQ(slurp(d / "metrics.jsonl"), before);  // nothing rewritten
  // An unterminated last line is a torn append: dropped, the rows before it kept.
  std::ofstream(d / "metrics.jsonl") << "{\"epoch\": 1, \"train_loss\": 0.5}\n"
                                        "{\"epoch\": 2, \"train_loss\": 0.5}\n"
                                        "{\"epoch\": 3, \"tra";
  MetricsLog log(d.string(), 4);
  ASSERT_EQ(log.rows().size(), 2u);
  EXPECT_EQ(*get(log.rows()[1], "epoch"), 2);
}

TEST(MetricsHardening, AFifoInPlaceOfMetricsJsonlIsRefusedWithoutBlocking) {
  const fs::path d = fresh_dir("fifo");
  ASSERT_EQ(mkfifo((d / "metrics.jsonl").c_str(), 0600), 0);
  std::string e =
      test_util::error_within(d / "metrics.jsonl", [&] { MetricsLog log(d.string(), 4); });
  EXPECT_NE(e.find("it is a FIFO (expected a regular file)"), std::string::npos) << e;
}

TEST(MetricsHardening, PlotsAreNeverWrittenThroughAPlantedSymlink) {
  const fs::path d = fresh_dir("plots"), outside = fresh_dir("plots_outside");
  PlotSpec s;
  s.series = {Series{"x", {{0, 1}, {1, 2}}, {0, 0, 200}}};
  for (const char* f : {"loss.png", "loss.svg"}) {
    std::ofstream(outside / f) << "victim";
    fs::create_symlink(outside / f, d / f);
    write_plot((d / f).string(), s);
    EXPECT_EQ(slurp(outside / f), "victim") << f;
    EXPECT_FALSE(fs::is_symlink(d / f)) << f;
    EXPECT_GT(fs::file_size(d / f), 100u) << f;
  }
}

}  // namespace
}  // namespace netspec::report
