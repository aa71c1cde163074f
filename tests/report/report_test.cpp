// Report library: progress formatting, metrics.csv/jsonl (round trip, resume truncation) and the
// PNG plot (decoded with libpng: size, curve pixels, legend text).
#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/metrics_log.h"
#include "report/plot.h"
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

Image read_png(const std::string& path) {
  png_image pi{};
  pi.version = PNG_IMAGE_VERSION;
  EXPECT_TRUE(png_image_begin_read_from_file(&pi, path.c_str())) << pi.message;
  pi.format = PNG_FORMAT_RGB;
  Image img(static_cast<int>(pi.width), static_cast<int>(pi.height), kBackground);
  EXPECT_TRUE(png_image_finish_read(&pi, nullptr, img.rgb.data(), 0, nullptr)) << pi.message;
  return img;
}

TEST(Plot, PngDecodesWithCurvesAxesAndLegend) {
  PlotSpec s;
  s.width = 640;
  s.height = 400;
  const Rgb red{220, 30, 30}, blue{30, 60, 220}, green{20, 160, 40};
  Curve train{"train loss", {}, red, false}, val{"val loss", {}, blue, false},
      acc{"val acc", {}, green, true};
  for (int e = 1; e <= 6; ++e) {
    train.points.emplace_back(e, 2.0 / e);
    val.points.emplace_back(e, 2.2 / e + 0.05);
    acc.points.emplace_back(e, 0.5 + 0.07 * e);
  }
  s.curves = {train, val, acc};
  Plot p(s);
  std::string path = tmpdir("png") + "/loss.png";
  write_png(path, p.image());
  Image img = read_png(path);
  ASSERT_EQ(img.width, 640);
  ASSERT_EQ(img.height, 400);
  EXPECT_EQ(img.rgb, p.image().rgb);
  // Each data point and the midpoint of each segment carry the curve's colour.
  for (const Curve& c : s.curves)
    for (size_t i = 0; i < c.points.size(); ++i) {
      auto [x, y] = c.points[i];
      auto [px, py] = p.to_pixel(x, y, c.right_axis);
      EXPECT_EQ(img.at(px, py), c.color) << c.name << " point " << i;
      if (i + 1 < c.points.size() && c.name == "val acc") {  // straight line on the right axis
        auto [qx, qy] = p.to_pixel(x + 0.5, y + 0.035, true);
        bool near = false;  // the rounded midpoint is within a pixel of the drawn segment
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) near |= img.at(qx + dx, qy + dy) == c.color;
        EXPECT_TRUE(near) << c.name << " mid " << i;
      }
    }
  // Axes, tick labels and the legend put dark pixels left of and below the plot area.
  int dark_left = 0, dark_below = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < 80; ++x) dark_left += img.at(x, y)[0] < 100;
  for (int y = img.height - 60; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) dark_below += img.at(x, y)[0] < 100;
  EXPECT_GT(dark_left, 100);
  EXPECT_GT(dark_below, 100);
  // Some pixels stay background (the plot is not a filled rectangle).
  EXPECT_EQ(img.at(img.width / 2, 60), kBackground);
}

TEST(Plot, BadPathIsAnError) {
  Image img(4, 4, kBackground);
  EXPECT_THROW(write_png("/nonexistent_dir_xyz/a.png", img), std::exception);
}

}  // namespace
}  // namespace netspec::report
