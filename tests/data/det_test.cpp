// Detection targets and box-aware augmentation: hand-computed YOLOv1 cells and anchor rows, and
// augmentations whose boxes must stay the bounding box of the pixels painted inside them.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "data/det_boxes.h"

namespace netspec::data {
namespace {

TEST(DetAssign, Yolov1CellOffsetsSizesAndOwnership) {
  // 64x64 image, 4x4 grid (16 px cells), K = 2. Box centre (32, 24) -> cell (i 1, j 2).
  std::vector<Box> boxes{{20, 8, 44, 40, 1}, {30, 20, 34, 28, 0}};  // 2nd: smaller, same cell
  Tensor t = assign_yolov1(boxes, 64, 64, 4, 4, 2);
  ASSERT_EQ(t.shape(), (Shape{8, 4, 4}));
  auto at = [&](int64_t ch, int64_t i, int64_t j) { return t.as_double((ch * 4 + i) * 4 + j); };
  EXPECT_DOUBLE_EQ(at(0, 1, 2), 0.0);    // 32/16 - 2
  EXPECT_DOUBLE_EQ(at(1, 1, 2), 0.5);    // 24/16 - 1
  EXPECT_DOUBLE_EQ(at(2, 1, 2), 0.375);  // 24/64
  EXPECT_DOUBLE_EQ(at(3, 1, 2), 0.5);    // 32/64
  EXPECT_EQ(at(4, 1, 2), 1);
  EXPECT_EQ(at(5, 1, 2), 0);  // class 1 one-hot
  EXPECT_EQ(at(6, 1, 2), 1);
  EXPECT_EQ(at(7, 1, 2), 1);  // mask
  double mask_sum = 0;
  for (int64_t k = 0; k < 16; ++k) mask_sum += t.as_double(7 * 16 + k);
  EXPECT_EQ(mask_sum, 1);
  // A larger box in that cell takes it over.
  boxes.push_back({0, 0, 64, 48, 0});  // centre (32, 24), 64x48
  t = assign_yolov1(boxes, 64, 64, 4, 4, 2);
  EXPECT_DOUBLE_EQ(at(2, 1, 2), 1.0);
  EXPECT_EQ(at(5, 1, 2), 1);
  EXPECT_THROW(assign_yolov1({{0, 0, 4, 4, 2}}, 64, 64, 4, 4, 2), Error);  // class 2 of 2
}

TEST(DetAssign, SharedAnchorsPickLevelByScaleThenAnchorByIou) {
  // 64x64, strides 8/16/32 -> grids 8, 4, 2; A = 2: rows 128 + 32 + 8.
  AnchorSpec s{{16, 16, 48, 48}, {8, 16, 32}, 0};
  Box small{10, 10, 26, 26, 3};  // 16x16: √wh = 16 nearest 4·8 = 32 -> level 0, anchor 0
  RowChoice r = choose_row(small, s, 64, 64);
  EXPECT_EQ(r.level, 0);
  EXPECT_EQ(r.anchor, 0);
  EXPECT_EQ(r.x, 2);
  EXPECT_EQ(r.y, 2);
  EXPECT_EQ(r.row, (2 * 8 + 2) * 2 + 0);
  Box big{0, 0, 60, 40, 1};  // √2400 = 49: log2 5.61 nearer 6 (4·16) -> level 1; IoU 48² .69
  r = choose_row(big, s, 64, 64);
  EXPECT_EQ(r.level, 1);
  EXPECT_EQ(r.anchor, 1);
  EXPECT_EQ(r.row, 128 + (1 * 4 + 1) * 2 + 1);
  Tensor t = assign_anchor_rows({small, big}, s, 64, 64);
  ASSERT_EQ(t.shape(), (Shape{168, 6}));
  auto row = [&](int64_t n, int64_t k) { return t.as_double(n * 6 + k); };
  EXPECT_EQ(row(36, 0), 1);
  EXPECT_DOUBLE_EQ(row(36, 1), 0.25);  // 18/8 - 2
  EXPECT_DOUBLE_EQ(row(36, 3), 0.0);   // ln(16/16)
  EXPECT_EQ(row(36, 5), 3);
  EXPECT_DOUBLE_EQ(row(139, 1), 0.875);  // 30/16 - 1
  EXPECT_DOUBLE_EQ(row(139, 2), 0.25);   // 20/16 - 1
  EXPECT_NEAR(row(139, 3), std::log(60.0 / 48), 1e-6);
  EXPECT_NEAR(row(139, 4), std::log(40.0 / 48), 1e-6);
  double m = 0;
  for (int64_t n = 0; n < 168; ++n) m += row(n, 0);
  EXPECT_EQ(m, 2);
}

TEST(DetAssign, LevelByLevelAnchorsPickBestIouOverAll) {
  AnchorSpec s{{8, 8, 16, 16, 32, 32, 64, 64, 100, 100, 200, 200}, {8, 16, 32}, 2};
  // 60x40: IoU 64² = .586 (level 1, anchor 1) beats 32² .427 and 100² .24.
  RowChoice r = choose_row({0, 0, 60, 40, 0}, s, 64, 64);
  EXPECT_EQ(r.level, 1);
  EXPECT_EQ(r.anchor, 1);
  Tensor t = assign_anchor_rows({{0, 0, 60, 40, 0}}, s, 64, 64);
  EXPECT_NEAR(t.as_double(r.row * 6 + 3), std::log(60.0 / 64), 1e-6);
}

// A ui8 image [3, h, w] of zeros with each box's integer pixels painted 100 + 50·index.
Tensor painted(int64_t h, int64_t w, const std::vector<Box>& boxes) {
  Tensor img(DType::kUI8, {3, h, w});
  uint8_t* p = img.data<uint8_t>();
  for (size_t k = 0; k < boxes.size(); ++k)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t y = int64_t(boxes[k].y0); y < int64_t(boxes[k].y1); ++y)
        for (int64_t x = int64_t(boxes[k].x0); x < int64_t(boxes[k].x1); ++x)
          p[(c * h + y) * w + x] = uint8_t(100 + 50 * k);
  return img;
}

// Pixel-centre bounding box of value v in channel 0: [min x, max x + 1) etc.; empty -> x1 = 0.
Box extent(const Tensor& img, uint8_t v) {
  const int64_t h = img.shape()[1], w = img.shape()[2];
  Box b{1e9, 1e9, 0, 0, 0};
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      if (img.data<uint8_t>()[y * w + x] == v) {
        b.x0 = std::min(b.x0, double(x));
        b.y0 = std::min(b.y0, double(y));
        b.x1 = std::max(b.x1, double(x + 1));
        b.y1 = std::max(b.y1, double(y + 1));
      }
  return b;
}

// The painted pixels are those whose centres fall inside the mapped box: within half a pixel.
void expect_follows(const Tensor& img, const Box& b, uint8_t v) {
  Box e = extent(img, v);
  EXPECT_LE(std::abs(e.x0 - b.x0), 0.5 + 1e-9) << e.x0 << " vs " << b.x0;
  EXPECT_LE(std::abs(e.y0 - b.y0), 0.5 + 1e-9) << e.y0 << " vs " << b.y0;
  EXPECT_LE(std::abs(e.x1 - b.x1), 0.5 + 1e-9) << e.x1 << " vs " << b.x1;
  EXPECT_LE(std::abs(e.y1 - b.y1), 0.5 + 1e-9) << e.y1 << " vs " << b.y1;
}

TEST(DetAugment, HflipMirrorsBoxesAndPixels) {
  std::vector<Box> boxes{{2, 3, 7, 6, 0}};
  Tensor img = painted(8, 16, boxes);
  hflip(img, boxes);
  EXPECT_EQ(boxes[0], (Box{9, 3, 14, 6, 0}));
  expect_follows(img, boxes[0], 100);
  EXPECT_EQ(extent(img, 100).x0, 9);
}

TEST(DetAugment, ScaleTranslateMovesBoxesWithThePixels) {
  std::vector<Box> boxes{{10, 12, 30, 20, 0}, {40, 40, 60, 50, 1}};
  Tensor img = painted(64, 64, boxes);
  const double s = 1.5, tx = -10, ty = 5;
  Tensor out = warp_scale_translate(img, s, tx, ty, 0);
  std::vector<Box> mapped = map_boxes(boxes, s, tx, ty, 64, 64, {0, 0});
  ASSERT_EQ(mapped.size(), 1u);  // the second box lands below the frame (y0 65): empty, dropped
  EXPECT_EQ(mapped[0], (Box{5, 23, 35, 35, 0}));
  expect_follows(out, mapped[0], 100);
}

TEST(DetAugment, DropThresholdsOnClippedBoxes) {
  // Shifted left by 28: box A keeps 2 of 30 px width (area 1/15 < 0.1) -> dropped at area 0.1,
  // kept at 0.05; box B keeps 1.5 px (area 0.077) -> dropped by the 2 px side rule, kept at 1 px
  // with an area threshold under 0.077.
  std::vector<Box> boxes{{0, 0, 30, 10, 0}, {10, 20, 29.5, 40, 1}};
  EXPECT_EQ(map_boxes(boxes, 1, -28, 0, 64, 64, {2, 0.1}).size(), 0u);
  auto kept = map_boxes(boxes, 1, -28, 0, 64, 64, {1, 0.05});
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0], (Box{0, 0, 2, 10, 0}));
  EXPECT_DOUBLE_EQ(kept[1].x1, 1.5);
  EXPECT_EQ(map_boxes(boxes, 1, -28, 0, 64, 64, {1, 0.07}).size(), 1u);  // B keeps 1.5/19.5
}

TEST(DetAugment, CropShiftsAndClips) {
  std::vector<Box> boxes{{10, 10, 20, 30, 0}, {0, 0, 4, 4, 1}};
  Tensor img = painted(40, 40, boxes);
  crop(img, boxes, 8, 5, 20, 30, {2, 0.1});
  ASSERT_EQ(img.shape(), (Shape{3, 30, 20}));
  ASSERT_EQ(boxes.size(), 1u);  // the corner box is outside
  EXPECT_EQ(boxes[0], (Box{2, 5, 12, 25, 0}));
  expect_follows(img, boxes[0], 100);
}

TEST(DetAugment, RandomAffineKeepsBoxesOnTheirPixels) {
  std::mt19937_64 rng(7);
  AffineAug a;
  a.scale = 0.5;
  a.translate = 0.2;
  a.prob = 1;
  a.rule = {0, 0};
  int moved = 0;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<Box> boxes{{20, 24, 44, 40, 0}};
    Tensor img = painted(64, 64, boxes);
    random_affine(img, boxes, a, rng);
    if (boxes.empty()) continue;
    // A box clipped at the frame edge still bounds its visible pixels.
    expect_follows(img, boxes[0], 100);
    moved += boxes[0].x0 != 20 ? 1 : 0;
  }
  EXPECT_GE(moved, 15);
  AffineAug off;  // prob 0: untouched
  std::vector<Box> boxes{{1, 2, 3, 4, 0}};
  Tensor img = painted(8, 8, boxes);
  random_affine(img, boxes, off, rng);
  EXPECT_EQ(boxes[0], (Box{1, 2, 3, 4, 0}));
}

}  // namespace
}  // namespace netspec::data
