// Grad-CAM maps by hand (α_c = spatial mean of the gradient, ReLU of the weighted sum), the jet
// colours, the half-pixel bilinear upsampling (values worked out by hand, as PyTorch's
// F.interpolate(align_corners=False) gives them), the alpha blend, and the composite pictures.
#include "report/heatmap.h"

#include <gtest/gtest.h>

#include "report/pictures.h"

namespace netspec::report {
namespace {

TEST(Heatmap, GradCamMapWeighsChannelsByMeanGradientAndClipsBelowZero) {
  // C = 2, H = 1, W = 2. α = (mean(1, 1), mean(0.5, -0.5)) = (1, 0).
  const float a[] = {1, 2, 3, -4}, g[] = {1, 1, 0.5f, -0.5f};
  auto m = grad_cam_map(a, g, 2, 1, 2);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_DOUBLE_EQ(m[0], 1);
  EXPECT_DOUBLE_EQ(m[1], 2);
  // α = (-1, 0.5): -1·(1, 2) + 0.5·(3, -4) = (0.5, -4) -> ReLU (0.5, 0).
  const float g2[] = {-1, -1, 0.5f, 0.5f};
  m = grad_cam_map(a, g2, 2, 1, 2);
  EXPECT_DOUBLE_EQ(m[0], 0.5);
  EXPECT_DOUBLE_EQ(m[1], 0);
}

TEST(Heatmap, JetRunsBlueToRed) {
  EXPECT_EQ(jet(0), (Rgb{0, 0, 128}));
  EXPECT_EQ(jet(0.5), (Rgb{128, 255, 128}));
  EXPECT_EQ(jet(1), (Rgb{128, 0, 0}));
  EXPECT_EQ(jet(0.25), (Rgb{0, 128, 255}));
  EXPECT_EQ(jet(-3), jet(0));
}

TEST(Heatmap, UpsampleIsHalfPixelBilinearOverTheMax) {
  // [[0, 1], [2, 3]] -> 4x4; pixel (1, 1) sits at source (0.25, 0.25):
  // 0.75·(0.75·0 + 0.25·1) + 0.25·(0.75·2 + 0.25·3) = 0.75, / max 3.
  auto u = upsample_normalised({0, 1, 2, 3}, 2, 2, 4, 4);
  EXPECT_DOUBLE_EQ(u[0], 0);  // edge clamps to the corner value
  EXPECT_DOUBLE_EQ(u[1 * 4 + 1], 0.25);
  EXPECT_DOUBLE_EQ(u[3 * 4 + 3], 1);
  EXPECT_DOUBLE_EQ(u[0 * 4 + 2], 0.25);  // source (-0.25, 0.75): row 0, 0.25·0 + 0.75·1, / 3
  auto z = upsample_normalised({0, 0}, 1, 2, 3, 3);  // all zero stays zero (no division)
  for (double v : z) EXPECT_EQ(v, 0);
}

TEST(Heatmap, OverlayBlendsJetOverTheImage) {
  RgbImage img(2, 1, {100, 100, 100});
  RgbImage o = overlay(img, {0, 1}, 1, 2, 0.5);
  // Left pixel: map 0 -> jet(0) = (0, 0, 128); right: max -> jet(1) = (128, 0, 0).
  EXPECT_EQ(o.at(0, 0), (Rgb{50, 50, 114}));
  EXPECT_EQ(o.at(1, 0), (Rgb{114, 50, 50}));
  RgbImage big = resize_nearest(img, 4, 2);
  EXPECT_EQ(big.width, 4);
  EXPECT_EQ(big.at(3, 1), (Rgb{100, 100, 100}));
}

TEST(Pictures, GridAndPanelHaveTheirLayoutSizes) {
  RgbImage digit(28, 28, {0, 0, 0});
  std::vector<Tile> tiles(5,
                          Tile{digit, "x.png", {{"cat", 0.7}, {"dog", 0.2}, {"cow", 0.1}}, "cat"});
  tiles[1].truth = "dog";
  std::string png = grid_png(tiles, 4, 100);
  ASSERT_GT(png.size(), 100u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  // IHDR: width and height big-endian at bytes 16..23.
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(png[at])) << 24) | (uint32_t(uint8_t(png[at + 1])) << 16) |
           (uint32_t(uint8_t(png[at + 2])) << 8) | uint8_t(png[at + 3]);
  };
  EXPECT_EQ(be32(16), 4u * (100 + 24));
  EXPECT_EQ(be32(20), 2u * (100 + 24 + 17 * 5));  // 2 rows: caption, label, 3 classes
  png = cam_panel_png(digit, digit, "title", {{"cat", 0.9}}, 50);
  EXPECT_EQ(be32(16), 2u * 50 + 36);
  EXPECT_THROW(grid_png({}), std::exception);
}

}  // namespace
}  // namespace netspec::report
