// Pictures through cairo: the font fontconfig finds, nice axes, curve pixels at their data
// points, PNG round trip (libpng decode), SVG output, the EMA / decimation of the loss plot, and
// loss.png for a synthetic 1-epoch and 300-epoch run (NETSPEC_PICTURES_DIR keeps them to look at).
#include "report/plot.h"

#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/canvas.h"
#include "report/loss_plot.h"

namespace netspec::report {
namespace {
namespace fs = std::filesystem;

std::string outdir(const std::string& name) {
  if (const char* d = std::getenv("NETSPEC_PICTURES_DIR")) {
    fs::create_directories(fs::path(d) / name);
    return (fs::path(d) / name).string();
  }
  fs::path d = fs::temp_directory_path() / ("ns_plot_" + name + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

RgbImage read_png(const std::string& path) {
  png_image pi{};
  pi.version = PNG_IMAGE_VERSION;
  EXPECT_TRUE(png_image_begin_read_from_file(&pi, path.c_str())) << pi.message;
  pi.format = PNG_FORMAT_RGB;
  RgbImage img(static_cast<int>(pi.width), static_cast<int>(pi.height));
  EXPECT_TRUE(png_image_finish_read(&pi, nullptr, img.rgb.data(), 0, nullptr)) << pi.message;
  return img;
}

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int dark_pixels(const RgbImage& img, int x0, int y0, int x1, int y1) {
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) n += img.at(x, y)[0] < 110 && img.at(x, y)[1] < 110;
  return n;
}

TEST(Canvas, FontconfigFindsDejaVuAndTextIsDrawn) {
  EXPECT_NE(font_file().find("DejaVuSans"), std::string::npos) << font_file();
  Canvas c(200, 40);
  c.text(10, 28, "Validation 97.5%", 20, kBlack);
  RgbImage img = c.pixels();
  EXPECT_GT(dark_pixels(img, 0, 0, 200, 40), 150);
  EXPECT_EQ(img.at(195, 5), kWhite);  // right of the text stays white
  EXPECT_GT(c.text_width("Validation 97.5%", 20), 120);
  EXPECT_LT(c.text_width("Validation 97.5%", 20), 190);
}

TEST(Canvas, Base64MatchesRfc4648Vectors) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
}

TEST(Plot, NiceAxisCoversTheRangeWithRoundTicks) {
  Axis a = nice_axis(0.23, 2.31, 6);
  EXPECT_DOUBLE_EQ(a.step, 0.5);
  EXPECT_DOUBLE_EQ(a.lo, 0);
  EXPECT_DOUBLE_EQ(a.hi, 2.5);
  EXPECT_EQ(a.ticks.size(), 6u);
  Axis b = nice_axis(0, 300, 8);
  EXPECT_DOUBLE_EQ(b.step, 50);
  EXPECT_EQ(b.ticks.back(), 300);
  Axis c = nice_axis(0.5, 0.5, 6);  // one value: a range around it
  EXPECT_LT(c.lo, 0.5);
  EXPECT_GT(c.hi, 0.5);
  EXPECT_EQ(tick_label(0.25, 0.05), "0.25");
  EXPECT_EQ(tick_label(150, 50), "150");
}

TEST(Plot, CurvesLandOnTheirPixelsAndPngRoundTrips) {
  PlotSpec s;
  s.width = 640;
  s.height = 400;
  s.right_label = "acc";
  const Rgb red{220, 30, 30}, green{20, 160, 40};
  Series loss{"loss", {}, red}, acc{"acc", {}, green, true};
  loss.line_width = acc.line_width = 5;
  for (int e = 1; e <= 6; ++e) {
    loss.points.emplace_back(e, 2.0 / e);
    acc.points.emplace_back(e, 50 + 7 * e);
  }
  s.series = {loss, acc};
  Canvas c(s.width, s.height);
  Plot p(s, c);
  EXPECT_DOUBLE_EQ(p.left_axis().lo, 0);  // 1/3..2 in 0.5 steps
  EXPECT_LE(p.right_axis().lo, 57);
  EXPECT_GE(p.right_axis().hi, 92);
  std::string path = outdir("plot") + "/p.png";
  c.write_png(path);
  RgbImage img = read_png(path);
  ASSERT_EQ(img.width, 640);
  ASSERT_EQ(img.height, 400);
  EXPECT_EQ(img.rgb, c.pixels().rgb);
  for (const Series& sr : s.series)
    for (size_t i = 1; i + 1 < sr.points.size(); ++i) {  // interior: a 5 px line is solid there
      auto [x, y] = sr.points[i];
      auto [px, py] = p.to_pixel(x, y, sr.right_axis);
      Rgb got = img.at(static_cast<int>(px), static_cast<int>(py));
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(got[k], sr.color[k], 12) << sr.name << " point " << i;
    }
  // Tick labels left of the plot area, x labels below it.
  EXPECT_GT(dark_pixels(img, 0, 0, static_cast<int>(p.x0) - 2, img.height), 100);
  EXPECT_GT(dark_pixels(img, 0, static_cast<int>(p.y1) + 3, img.width, img.height), 100);
  EXPECT_EQ(img.at(img.width / 2, 5), kWhite);
}

TEST(Plot, SvgAndBadPaths) {
  PlotSpec s;
  s.series = {Series{"x", {{0, 1}, {1, 2}}, {0, 0, 200}}};
  std::string d = outdir("svg");
  write_plot(d + "/a.svg", s);
  std::string svg = slurp(d + "/a.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("<path"), std::string::npos);
  EXPECT_NE(svg.find("width=\"960px\""), std::string::npos) << svg.substr(0, 300);
  EXPECT_THROW(write_plot("/nonexistent_dir_xyz/a.png", s), std::exception);
  EXPECT_THROW(write_plot(d + "/a.gif", s), std::exception);
}

TEST(LossPlot, EmaIsDebiasedAndDecimationKeepsExtremes) {
  std::vector<double> e = ema({1, 2, 4}, 2);  // β = 0.5
  EXPECT_DOUBLE_EQ(e[0], 1);
  EXPECT_DOUBLE_EQ(e[1], 1.25 / 0.75);
  EXPECT_DOUBLE_EQ(e[2], (0.625 + 2) / 0.875);
  std::vector<std::pair<double, double>> pts;
  for (int i = 0; i < 10000; ++i) pts.emplace_back(i, i == 4321 ? 50.0 : std::sin(i * 0.01));
  auto d = decimate(pts, 400);
  EXPECT_LE(d.size(), 400u);
  double mx = -1;
  for (size_t i = 0; i < d.size(); ++i) {
    mx = std::max(mx, d[i].second);
    if (i) {
      EXPECT_LT(d[i - 1].first, d[i].first);
    }
  }
  EXPECT_EQ(mx, 50.0);
}

// Synthetic metrics of a run: `epochs` epochs of `spe` steps, loss decaying with noise.
void synthetic_run(int epochs, int spe, std::vector<Row>& ep, std::vector<Row>& st) {
  uint32_t r = 12345;
  auto noise = [&] {
    r = r * 1664525u + 1013904223u;
    return (r >> 8) / double(1 << 24) - 0.5;
  };
  for (int e = 1; e <= epochs; ++e) {
    double sum = 0;
    for (int b = 1; b <= spe; ++b) {
      const double x = e - 1 + double(b) / spe;
      const double l = 0.3 + 2.0 * std::exp(-x * 3.0 / std::sqrt(epochs)) + 0.25 * noise();
      sum += l;
      st.push_back({{"step", (e - 1) * spe + b}, {"epoch", x}, {"train_loss", l}});
    }
    const double vl = 0.35 + 2.0 * std::exp(-e * 3.0 / std::sqrt(epochs));
    ep.push_back({{"epoch", e},
                  {"train_loss", sum / spe},
                  {"val_loss", vl},
                  {"val_top1", 0.95 - 0.6 * std::exp(-e * 3.0 / std::sqrt(epochs))}});
  }
}

TEST(LossPlot, OneEpochAndThreeHundredEpochRuns) {
  for (auto [epochs, spe] : {std::pair{1, 469}, std::pair{300, 200}}) {
    std::vector<Row> ep, st;
    synthetic_run(epochs, spe, ep, st);
    std::string d = outdir("loss" + std::to_string(epochs));
    write_loss_plots(d, ep, st);
    RgbImage img = read_png(d + "/loss.png");
    PlotSpec ps = loss_plot_spec(ep, st);
    EXPECT_EQ(img.width, ps.width);
    EXPECT_EQ(ps.series.size(), 5u);  // raw, EMA, epoch train, val loss, val top-1
    EXPECT_EQ(ps.vlines.size(), epochs <= 40 ? size_t(epochs - 1) : 0u);
    EXPECT_LE(ps.series[0].points.size(), 4000u);
    Canvas c(ps.width, ps.height);
    Plot p(ps, c);
    EXPECT_DOUBLE_EQ(p.x_axis().lo, 0);
    EXPECT_GE(p.x_axis().hi, epochs);
    EXPECT_LE(p.right_axis().hi, 100);
    // The val top-1 point of the last epoch is green in the PNG.
    auto [px, py] = p.to_pixel(epochs, 100 * *get(ep.back(), "val_top1"), true);
    Rgb g = img.at(static_cast<int>(px) - 1, static_cast<int>(py));
    EXPECT_GT(g[1], g[0] + 40) << epochs;
    EXPECT_NE(slurp(d + "/loss.svg").find("<svg"), std::string::npos);
  }
}

// The legend avoids the lines, not only the points: a two-epoch validation line rising to the top
// right corner has no point under a top-right box, yet the box would hide its end.
TEST(Plot, LegendAvoidsTheSegmentsOfShortCurves) {
  PlotSpec ps;
  Series raw{"train loss per step (raw)", {}, {214, 39, 40}};
  for (int i = 0; i < 1000; ++i) raw.points.emplace_back(2.0 * i / 1000, 0.02 * (i % 3));
  Series val{"val loss", {{0.0, 0.5}, {10.0, 1.0}}, {31, 119, 180}};
  ps.series = {raw, val};
  Canvas c(ps.width, ps.height);
  Plot p(ps, c);
  ASSERT_GT(p.legend_w, 0);
  for (int k = 0; k <= 100; ++k) {
    auto [px, py] = p.to_pixel(10.0 * k / 100, 0.5 + 0.5 * k / 100, false);
    EXPECT_FALSE(px >= p.legend_x && px <= p.legend_x + p.legend_w && py >= p.legend_y &&
                 py <= p.legend_y + p.legend_h)
        << "the legend covers the val line at x " << 10.0 * k / 100;
  }
  for (const auto& [x, y] : raw.points) {  // nor the dense raw curve
    auto [px, py] = p.to_pixel(x, y, false);
    EXPECT_FALSE(px >= p.legend_x && px <= p.legend_x + p.legend_w && py >= p.legend_y &&
                 py <= p.legend_y + p.legend_h);
  }
}

TEST(LossPlot, TitleNamesTheRun) {
  EXPECT_EQ(loss_plot_title("runs/mlp-20261205-041939"), "training mlp-20261205-041939");
  EXPECT_EQ(loss_plot_title("/tmp/x/resnet18-cifar/"), "training resnet18-cifar");
  EXPECT_EQ(loss_plot_title("."), "training");
}

TEST(LossPlot, ARareSpikeIsClippedNotScaled) {
  std::vector<Row> ep, st;
  synthetic_run(3, 200, ep, st);
  st[250][2].second = 100.0;  // one step's loss explodes
  PlotSpec ps = loss_plot_spec(ep, st);
  Canvas c(ps.width, ps.height);
  Plot p(ps, c);
  EXPECT_LT(p.left_axis().hi, 5);  // the rest of the curve keeps the axis
  EXPECT_GE(p.left_axis().hi, 2.3);
}

// A segmentation run's val_top1 is its pixel accuracy: the right axis says so and carries the
// mIoU (metrics.csv's val_miou) beside it.
TEST(LossPlot, SegmentationRunsPlotPixelAccuracyAndMiou) {
  std::vector<Row> ep, st;
  synthetic_run(3, 20, ep, st);
  for (size_t i = 0; i < ep.size(); ++i) ep[i].emplace_back("val_miou", 0.3 + 0.1 * double(i));
  const PlotSpec ps = loss_plot_spec(ep, st);
  EXPECT_EQ(ps.right_label, "val pixel accuracy / mIoU (%)");
  ASSERT_EQ(ps.series.size(), 6u);
  EXPECT_EQ(ps.series[4].name, "val pixel accuracy % (right axis)");
  EXPECT_EQ(ps.series[5].name, "val mIoU % (right axis)");
  ASSERT_EQ(ps.series[5].points.size(), 3u);
  EXPECT_DOUBLE_EQ(ps.series[5].points[2].second, 50.0);
  EXPECT_TRUE(ps.series[5].right_axis);
}

// Diffusion and regression rows leave val_top1 empty: the plot has no top-1 series and no
// right axis (it showed a flat 0 % line).
TEST(LossPlot, RunsWithoutTop1HaveNoRightAxis) {
  std::vector<Row> ep, st;
  synthetic_run(3, 20, ep, st);
  for (Row& r : ep)
    for (auto& [name, v] : r)
      if (name == "val_top1") v.reset();
  const PlotSpec ps = loss_plot_spec(ep, st);
  EXPECT_EQ(ps.right_label, "");
  for (const auto& s : ps.series) {
    EXPECT_EQ(s.name.find("top-1"), std::string::npos) << s.name;
    EXPECT_FALSE(s.right_axis) << s.name;
  }
  EXPECT_EQ(loss_plot_spec(ep, {}).series.size(), 2u);  // train and val loss
}

}  // namespace
}  // namespace netspec::report
