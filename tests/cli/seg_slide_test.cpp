// Sliding-window segmentation's pieces: the window starts cover an axis and end flush with it,
// stitching windows cut from one field gives that field back (overlaps averaged), and the
// bilinear upsample keeps constants, is the identity at the same size and interpolates a ramp.
#include "viz/seg_slide.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace netspec::viz {
namespace {

TEST(SegSlide, StartsCoverTheAxisAndEndFlush) {
  EXPECT_EQ(slide_starts(16, 16), (std::vector<int64_t>{0}));
  EXPECT_EQ(slide_starts(32, 16), (std::vector<int64_t>{0, 10, 16}));  // stride 2/3 of 16 = 10
  EXPECT_EQ(slide_starts(20, 16), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(slide_starts(3, 1), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_THROW(slide_starts(8, 16), Error);
}

TEST(SegSlide, StitchingWindowsOfOneFieldGivesItBack) {
  const int64_t c = 2, h = 5, w = 12, win = 5;
  auto value = [](int64_t k, int64_t y, int64_t x) { return float(k * 100 + y * 10 + x) / 7.f; };
  const std::vector<int64_t> xs = slide_starts(w, win);  // 0, 3, 6, 7
  ASSERT_EQ(xs, (std::vector<int64_t>{0, 3, 6, 7}));
  Tensor windows(DType::kF32, {int64_t(xs.size()), c, win, win});
  for (size_t i = 0; i < xs.size(); ++i)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < win; ++y)
        for (int64_t x = 0; x < win; ++x)
          windows.data<float>()[((int64_t(i) * c + k) * win + y) * win + x] =
              value(k, y, xs[i] + x);
  const Tensor f = stitch_windows(windows, std::vector<int64_t>(xs.size(), 0), xs, h, w);
  ASSERT_EQ(f.shape(), (Shape{c, h, w}));
  for (int64_t k = 0; k < c; ++k)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        EXPECT_FLOAT_EQ(f.data<float>()[(k * h + y) * w + x], value(k, y, x)) << k << y << x;
  // Overlaps are averaged: window 1 (columns 3..7) raised by 1 raises column 3 (windows 0, 1) by
  // 1/2, column 7 (windows 1, 2, 3) by 1/3 and column 11 (window 3 only) not at all.
  for (int64_t i = 0; i < c * win * win; ++i) windows.data<float>()[c * win * win + i] += 1;
  const Tensor g = stitch_windows(windows, std::vector<int64_t>(xs.size(), 0), xs, h, w);
  EXPECT_FLOAT_EQ(g.data<float>()[3] - f.data<float>()[3], 0.5f);  // windows 0, 1
  EXPECT_FLOAT_EQ(g.data<float>()[7] - f.data<float>()[7], 1.f / 3);  // windows 1, 2, 3
  EXPECT_FLOAT_EQ(g.data<float>()[11] - f.data<float>()[11], 0.f);  // window 3 only
  // A window outside the field is refused.
  EXPECT_THROW(stitch_windows(windows, std::vector<int64_t>(xs.size(), 1), xs, h, w), Error);
}

TEST(SegSlide, BilinearUpsampleKeepsConstantsAndInterpolatesARamp) {
  Tensor f(DType::kF32, {1, 2, 4});
  for (int64_t x = 0; x < 4; ++x) f.data<float>()[x] = f.data<float>()[4 + x] = float(x);
  const Tensor same = upsample_bilinear(f, 2, 4);
  for (int64_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(same.data<float>()[i], f.data<float>()[i]);
  // Width 4 -> 8: output x maps to (x + 0.5) / 2 - 0.5, clamped to [0, 3].
  const Tensor up = upsample_bilinear(f, 3, 8);
  const float want[] = {0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3};
  for (int64_t y = 0; y < 3; ++y)
    for (int64_t x = 0; x < 8; ++x) EXPECT_FLOAT_EQ(up.data<float>()[y * 8 + x], want[x]) << x;
}

}  // namespace
}  // namespace netspec::viz
