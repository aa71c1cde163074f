// Report library: progress formatting, metrics.csv/jsonl (round trip, resume truncation). The
// pictures are tested in plot_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/metrics_log.h"
#include "report/progress.h"

namespace netspec::report {
namespace {
namespace fs = std::filesystem;

std::string tmpdir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("ns_report_" + name + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);) v.push_back(l);
  return v;
}

TEST(Progress, FormatsBarRateAndEta) {
  // 100 of 400 steps in 10 s at 32 samples/step: 10 steps/s, 320 samples/s, 30 s left.
  std::string s = format_progress("epoch 1/2", 100, 400, 10.0, 0.51234, 32, 20);
  EXPECT_EQ(s, "epoch 1/2 [#####...............] 100/400 loss 0.5123 320 samples/s ETA 0:30");
  EXPECT_EQ(format_duration(3725), "1:02:05");
  EXPECT_EQ(format_progress("e", 0, 10, 0, 0, 8, 0), "e 0/10 loss 0.0000 0 samples/s ETA ?");
  // 3 full steps of 8 and a tail of 6 in 2 s: 30 samples at 2 steps/s x 7.5 samples per step.
  EXPECT_EQ(format_progress("e", 4, 4, 2.0, 0.5, 30.0 / 4, 0),
            "e 4/4 loss 0.5000 15 samples/s ETA 0:00");
}

TEST(Progress, PlainModePrintsPeriodicLinesAndTtyRedraws) {
  std::ostringstream plain;
  Progress p(plain, false, "epoch 1/1", 10, 4, 0.0);  // every update is due
  for (int i = 1; i <= 3; ++i) p.update(i, 1.0 / i);
  p.update(10, 0.1);  // the final step is left to the epoch line
  const std::string out = plain.str();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos);
  std::ostringstream tty;
  Progress q(tty, true, "epoch 1/1", 10, 4);
  q.update(10, 0.25);
  q.finish();
  EXPECT_NE(tty.str().find("\r"), std::string::npos);
  EXPECT_NE(tty.str().find("10/10 loss 0.2500"), std::string::npos) << tty.str();
  EXPECT_EQ(tty.str().find('\n'), std::string::npos);
}

Row row(int epoch, std::optional<double> val) {
  return {{"epoch", epoch}, {"train_loss", 1.0 / epoch}, {"val_top1", val}};
}

TEST(Metrics, CsvAndJsonlRowsParseAndResumeDropsLaterRows) {
  std::string d = tmpdir("metrics");
  {
    MetricsLog log(d, 0);
    log.append(row(1, std::nullopt));
    log.append(row(2, 0.875));
    log.append(row(3, 0.9));
  }
  auto csv = lines_of(d + "/metrics.csv");
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[0], "epoch,train_loss,val_top1");
  EXPECT_EQ(csv[1], "1,1,");
  EXPECT_EQ(csv[2], "2,0.5,0.875");
  auto jl = lines_of(d + "/metrics.jsonl");
  ASSERT_EQ(jl.size(), 3u);
  for (const auto& l : jl) EXPECT_TRUE(nlohmann::json::parse(l).is_object()) << l;
  EXPECT_TRUE(nlohmann::json::parse(jl[0])["val_top1"].is_null());
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(jl[2])["val_top1"].get<double>(), 0.9);
  Row back = parse_json_line(jl[1]);
  EXPECT_EQ(back, row(2, 0.875));

  // Resumed from the epoch-2 checkpoint: row 3 goes, rows 1-2 stay, appends continue.
  std::ofstream(d + "/metrics.jsonl", std::ios::app) << "{\"epoch\": 4, \"tra";  // torn line
  MetricsLog again(d, 2);
  ASSERT_EQ(again.rows().size(), 2u);
  again.append(row(3, 0.95));
  csv = lines_of(d + "/metrics.csv");
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[3], "3,0.3333333333333333,0.95");
  jl = lines_of(d + "/metrics.jsonl");
  ASSERT_EQ(jl.size(), 3u);
  EXPECT_EQ(*get(parse_json_line(jl[2]), "val_top1"), 0.95);
}

}  // namespace
}  // namespace netspec::report
