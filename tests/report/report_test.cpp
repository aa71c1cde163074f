// Report library: progress formatting, metrics.csv/jsonl (round trip, resume truncation), the
// step log's bounded memory (DecimatedRows: after 100k steps at most kPlotRows rows, evenly spaced
// 0, s, 2s, ... with the latest last, each intact; the files complete; loss.png renders). The
// pictures are tested in plot_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "report/loss_plot.h"
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

// A known loss curve: a decay with a saw tooth of period 7 (so a wrong row shows).
double loss_at(int64_t step) { return 2.0 / (1.0 + 1e-4 * double(step)) + 0.01 * double(step % 7); }

Row step_row(int64_t step) {
  return {{"step", double(step)}, {"epoch", double(step) / 1000.0}, {"train_loss", loss_at(step)}};
}

// The kept rows: at most cap, the first and the latest row, the others on the grid 0, s, 2s, ...
// (consecutive: none missing in between), every value the row's own.
void expect_thinned(const std::vector<Row>& rows, int64_t first, int64_t last, size_t cap) {
  ASSERT_LE(rows.size(), cap);
  ASSERT_GE(rows.size(), cap / 2);  // thinned only as far as the cap needs
  ASSERT_EQ(*get(rows.front(), "step"), double(first));
  ASSERT_EQ(*get(rows.back(), "step"), double(last));
  const int64_t stride = int64_t(*get(rows[1], "step")) - first;
  EXPECT_GT(stride, 1);
  EXPECT_EQ(stride & (stride - 1), 0) << stride;  // a power of 2
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto step = int64_t(*get(rows[i], "step"));
    if (i + 1 < rows.size()) {
      EXPECT_EQ(step, first + int64_t(i) * stride) << "row " << i;
    }
    // (to 4 ulp: a value read back from JSON may differ in its last bit)
    EXPECT_DOUBLE_EQ(*get(rows[i], "train_loss"), loss_at(step)) << "row " << i;
    EXPECT_DOUBLE_EQ(*get(rows[i], "epoch"), double(step) / 1000.0) << "row " << i;
  }
  EXPECT_LT(last - int64_t(*get(rows[rows.size() - 2], "step")), 2 * stride);
}

TEST(DecimatedRows, KeepsAnEvenGridAndTheLatestRowUnderTheCap) {
  // Small cap, every count: the bound holds after each add and the grid stays even.
  DecimatedRows d(8);
  for (int64_t s = 0; s < 300; ++s) {
    d.add(step_row(s));
    ASSERT_LE(d.rows().size(), 8u) << s;
    ASSERT_EQ(*get(d.rows().back(), "step"), double(s));
    const int64_t st = d.stride();
    for (size_t i = 0; i + 1 < d.rows().size(); ++i)
      ASSERT_EQ(*get(d.rows()[i], "step"), double(int64_t(i) * st)) << s << " row " << i;
  }
  EXPECT_EQ(d.added(), 300);
  EXPECT_EQ(d.stride(), 64);  // 300 rows in <= 8: 0, 64, 128, 192, 256 and 299
  ASSERT_EQ(d.rows().size(), 6u);
  // Below the cap nothing is dropped; cap 0 keeps everything; a cap under 4 is refused.
  DecimatedRows all;
  for (int64_t s = 0; s < 5000; ++s) all.add(step_row(s));
  EXPECT_EQ(all.rows().size(), 5000u);
  EXPECT_THROW(DecimatedRows(3), Error);
}

TEST(DecimatedRows, HundredThousandStepsKeepBoundedRowsAndCompleteFiles) {
  const std::string d = tmpdir("100k");
  constexpr int64_t kSteps = 100000;
  {
    MetricsLog log(d, 0, "steps", "step", kPlotRows);
    for (int64_t s = 1; s <= kSteps; ++s) {
      log.append(step_row(s), false);
      ASSERT_LE(log.rows().size(), kPlotRows) << s;
      if (s % 5000 == 0) log.flush();
    }
    expect_thinned(log.rows(), 1, kSteps, kPlotRows);
    // loss.png renders from the kept rows: the raw curve spans the whole run.
    const PlotSpec ps = loss_plot_spec({}, log.rows());
    ASSERT_FALSE(ps.series.empty());
    EXPECT_EQ(ps.series[0].points.front().first, 0.001);  // step 1 (epoch = step / 1000)
    EXPECT_GE(ps.series[0].points.back().first, 99.9);    // the plot's min/max buckets keep x order
    EXPECT_LE(ps.series[0].points.back().first, 100.0);
    write_loss_plots(d, {}, log.rows());
  }
  std::ifstream png(d + "/loss.png", std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  EXPECT_GT(fs::file_size(d + "/loss.png"), 5000u);
  // The files hold every row.
  EXPECT_EQ(lines_of(d + "/steps.csv").size(), size_t(kSteps) + 1);  // + header
  EXPECT_EQ(lines_of(d + "/steps.jsonl").size(), size_t(kSteps));
  // Read back thinned (the report's loss plot) and whole.
  expect_thinned(read_jsonl(d + "/steps.jsonl", kPlotRows), 1, kSteps, kPlotRows);
  const std::vector<Row> every = read_jsonl(d + "/steps.jsonl");
  ASSERT_EQ(every.size(), size_t(kSteps));
  EXPECT_DOUBLE_EQ(*get(every[77776], "train_loss"), loss_at(77777));

  // A resume from step 60000: the files keep rows 1..60000, memory the same bound.
  MetricsLog again(d, 60000, "steps", "step", kPlotRows);
  expect_thinned(again.rows(), 1, 60000, kPlotRows);
  EXPECT_EQ(lines_of(d + "/steps.csv").size(), 60001u);
  EXPECT_EQ(lines_of(d + "/steps.jsonl").size(), 60000u);
  std::ifstream csv(d + "/steps.csv");
  std::string header, row1;
  std::getline(csv, header);
  std::getline(csv, row1);
  EXPECT_EQ(header, "step,epoch,train_loss");
  EXPECT_EQ(row1, csv_line(step_row(1)));
  again.append(step_row(60001));
  EXPECT_EQ(*get(again.rows().back(), "step"), 60001.0);
  EXPECT_EQ(lines_of(d + "/steps.jsonl").size(), 60001u);
}

}  // namespace
}  // namespace netspec::report
