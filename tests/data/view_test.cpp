// Partial JPEG decoding (data/region.h) and sample views (data/view.h): a window decode equals
// the same pixels of a full decode (4:4:4 and 4:2:0, any offset), a DCT-scaled decode resized
// stays close to the full-resolution view, torchvision's RandomResizedCrop geometry (fits,
// area/aspect ranges, fallback, determinism), and the fused render against PIL's crop + resize.
#include "data/view.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

#include "data/data_test_util.h"
#include "data/image.h"
#include "data/image_fixture.h"

namespace netspec::data {
namespace {

// A w x h RGB pattern with edges, gradients and noise (so chroma upsampling matters).
std::vector<uint8_t> pattern(int w, int h, uint32_t seed) {
  std::mt19937 r(seed);
  std::vector<uint8_t> px(static_cast<size_t>(w * h * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &px[static_cast<size_t>((y * w + x) * 3)];
      p[0] = static_cast<uint8_t>((x * 7 + y * 3) % 256);
      p[1] = static_cast<uint8_t>(((x / 9 + y / 5) % 2) * 200 + r() % 40);
      p[2] = static_cast<uint8_t>((x * y / 13 + r() % 30) % 256);
    }
  return px;
}

RegionChooser window(int64_t top, int64_t left, int64_t h, int64_t w, int64_t oh = 0,
                     int64_t ow = 0) {
  return [=](int64_t, int64_t) { return RegionRequest{top, left, h, w, oh, ow}; };
}

TEST(Region, WindowDecodeEqualsTheCropOfAFullDecode) {
  std::mt19937 r(3);
  for (bool sub : {false, true}) {
    const int w = 203, h = 157;
    const std::string jpg = test::jpeg_bytes(w, h, 3, pattern(w, h, 1), 90, sub);
    const Tensor full = decode_image_bytes(jpg, "full.jpg");
    for (int t = 0; t < 250; ++t) {
      const int64_t top = r() % h, left = r() % w;
      const int64_t wh = 1 + r() % (h - top), ww = 1 + r() % (w - left);
      Region g;
      decode_region(jpg, "win.jpg", window(top, left, wh, ww), false, g);
      ASSERT_EQ(g.denom, 1);
      ASSERT_LE(g.oy, top);
      ASSERT_LE(g.ox, left);
      ASSERT_GE(g.oy + g.h, top + wh);
      ASSERT_GE(g.ox + g.w, left + ww);
      int64_t differ = 0;
      for (int64_t y = top; y < top + wh; ++y)
        for (int64_t x = left; x < left + ww; ++x)
          for (int c = 0; c < 3; ++c)
            differ += g.at(y, x)[c * g.cs] != full.data<uint8_t>()[(c * h + y) * w + x];
      EXPECT_EQ(differ, 0) << "subsampled " << sub << " window " << top << "," << left << " " << wh
                           << "x" << ww;
    }
  }
}

// The fused view from a region vs the same view of the full image (render_view both times).
double worst_level_diff(const Region& a, const Region& b, int64_t H, int64_t W, bool rrc,
                        double* mean = nullptr) {
  Taps ay, ax, by, bx;
  if (rrc) {
    rrc_taps(a, H, W, ay, ax);
    rrc_taps(b, H, W, by, bx);
  } else {
    cover_taps(a, H, W, 0.875, ay, ax);
    cover_taps(b, H, W, 0.875, by, bx);
  }
  std::vector<uint8_t> oa(static_cast<size_t>(3 * H * W)), ob(oa.size());
  render_view(a, ay, ax, 3, false, nullptr, nullptr, oa.data());
  render_view(b, by, bx, 3, false, nullptr, nullptr, ob.data());
  double worst = 0, sum = 0;
  for (size_t i = 0; i < oa.size(); ++i) {
    const double d = std::abs(oa[i] - ob[i]);
    worst = std::max(worst, d);
    sum += d;
  }
  if (mean) *mean = sum / static_cast<double>(oa.size());
  return worst;
}

TEST(Region, DctScaledViewsStayCloseToFullResolution) {
  const int w = 517, h = 389;
  // A smooth photograph-like image (DCT scaling drops frequencies the resize filters anyway).
  std::vector<uint8_t> px(static_cast<size_t>(w * h * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        px[static_cast<size_t>((y * w + x) * 3 + c)] = static_cast<uint8_t>(
            127 + 100 * std::sin(x * 0.031 * (c + 1) + y * 0.017) * std::cos(y * 0.023 - c));
  const std::string jpg = test::jpeg_bytes(w, h, 3, px, 90, true);
  // RandomResizedCrop-like windows resized to 64x64 (denominators 2..4) and the eval cover view.
  struct Case {
    int64_t top, left, hh, ww, out;
    int denom;
  };
  for (const Case& k : {Case{10, 20, 300, 400, 64, 4}, Case{0, 0, 389, 517, 96, 4},
                        Case{50, 100, 200, 260, 64, 2}, Case{3, 7, 150, 170, 64, 2}}) {
    Region full, scaled;
    decode_region(jpg, "a.jpg", window(k.top, k.left, k.hh, k.ww, k.out, k.out), false, full);
    decode_region(jpg, "a.jpg", window(k.top, k.left, k.hh, k.ww, k.out, k.out), true, scaled);
    EXPECT_EQ(full.denom, 1);
    EXPECT_EQ(scaled.denom, k.denom);
    double mean = 0;
    const double worst = worst_level_diff(full, scaled, k.out, k.out, true, &mean);
    EXPECT_LE(mean, 1.5) << k.top << "," << k.left;
    EXPECT_LE(worst, 12) << k.top << "," << k.left;
  }
  // The eval cover view (Resize(64 / 0.875) + CenterCrop(64)) through cover_chooser.
  Region full, scaled;
  decode_region(jpg, "a.jpg", cover_chooser(64, 64, 0.875), false, full);
  decode_region(jpg, "a.jpg", cover_chooser(64, 64, 0.875), true, scaled);
  EXPECT_EQ(scaled.denom, 4);
  double mean = 0;
  EXPECT_LE(worst_level_diff(full, scaled, 64, 64, false, &mean), 12);
  EXPECT_LE(mean, 1.5);
}

TEST(Region, CoverViewEqualsResizeCenterCrop) {
  for (bool sub : {false, true}) {
    const int w = 131, h = 97;
    const std::string jpg = test::jpeg_bytes(w, h, 3, pattern(w, h, 2), 90, sub);
    const Tensor ref = resize_center_crop(decode_image_bytes(jpg, "a.jpg"), 40, 40, 0.875);
    Region g;
    decode_region(jpg, "a.jpg", cover_chooser(40, 40, 0.875), false, g);
    EXPECT_LT(g.h * g.w, h * w);  // only the window the taps read (and a margin)
    Taps ty, tx;
    cover_taps(g, 40, 40, 0.875, ty, tx);
    std::vector<uint8_t> out(3 * 40 * 40);
    render_view(g, ty, tx, 3, false, nullptr, nullptr, out.data());
    EXPECT_EQ(0, std::memcmp(out.data(), ref.raw(), out.size())) << "subsampled " << sub;
  }
}

TEST(View, RandomResizedCropGeometryFollowsTorchvision) {
  int fallback = 0;
  double area_lo = 1, area_hi = 0;
  for (uint64_t key = 0; key < 4000; ++key) {
    const int64_t ih = 200 + key % 173, iw = 150 + key % 311;
    const CropWindow c = rrc_window(key * 0x9E3779B97F4A7C15ull, ih, iw);
    ASSERT_GE(c.top, 0);
    ASSERT_GE(c.left, 0);
    ASSERT_GE(c.height, 1);
    ASSERT_GE(c.width, 1);
    ASSERT_LE(c.top + c.height, ih);
    ASSERT_LE(c.left + c.width, iw);
    const double area = static_cast<double>(c.height * c.width) / static_cast<double>(ih * iw);
    const double aspect = static_cast<double>(c.width) / static_cast<double>(c.height);
    // Rounding w and h to integers moves area and aspect a little past the drawn ranges.
    EXPECT_GE(area, 0.08 * 0.97);
    EXPECT_GE(aspect, 0.75 * 0.97);
    EXPECT_LE(aspect, 4.0 / 3.0 * 1.03);
    area_lo = std::min(area_lo, area);
    area_hi = std::max(area_hi, area);
    fallback += c.height == ih && c.width == iw;
  }
  EXPECT_LT(area_lo, 0.1);  // the draws cover the range
  EXPECT_GT(area_hi, 0.95);
  EXPECT_LT(fallback, 40);  // 10 failed tries are rare at these shapes
  // Same key, same window; another key, (almost surely) another.
  const CropWindow a = rrc_window(42, 375, 500), b = rrc_window(42, 375, 500),
                   d = rrc_window(43, 375, 500);
  EXPECT_EQ(a.top, b.top);
  EXPECT_EQ(a.width, b.width);
  EXPECT_TRUE(a.top != d.top || a.left != d.left || a.width != d.width);
  // A 1000x10 strip never fits the ratio range: the fallback is the centre crop at ratio 4/3
  // (h = 10, w = round(10·4/3) = 13, left = (1000 - 13) // 2).
  const CropWindow f = rrc_window(7, 10, 1000);
  EXPECT_EQ(f.height, 10);
  EXPECT_EQ(f.width, 13);
  EXPECT_EQ(f.left, 493);
  EXPECT_EQ(f.top, 0);
  // And a 10x1000 one: w = 10, h = round(10 / (3/4)) = 13, top = (1000 - 13) // 2.
  const CropWindow g = rrc_window(7, 1000, 10);
  EXPECT_EQ(g.width, 10);
  EXPECT_EQ(g.height, 13);
  EXPECT_EQ(g.top, 493);
}

std::string python_with_pil() {
  for (const std::string& p :
       {std::string("python3"), std::string(NETSPEC_BINARY_DIR) + "/venv/bin/python"})
    if (std::system((p + " -c 'import PIL' >/dev/null 2>&1").c_str()) == 0) return p;
  return "";
}

// F.resized_crop on a PIL image is img.crop(box).resize(size, BILINEAR): the fused render of
// the same window (flipped or not) is within one level of it (PIL rounds between its passes).
TEST(View, RandomResizedCropRenderMatchesPilCropResize) {
  const std::string py = python_with_pil();
  if (py.empty()) GTEST_SKIP() << "no python with PIL (python3-pil)";
  const std::string d = test::tmpdir("view_pil");
  const int w = 211, h = 163;
  test::write_png(d + "/in.png", w, h, PNG_FORMAT_RGB, pattern(w, h, 5));
  std::ofstream(d + "/ref.py") << R"(import sys
from PIL import Image
d = sys.argv[1]
im = Image.open(d + "/in.png").convert("RGB")
for k, (t, l, h, w, oh, ow) in enumerate([(10, 20, 120, 150, 48, 48), (0, 0, 163, 211, 64, 40),
                                         (100, 180, 30, 25, 56, 56), (40, 5, 90, 60, 33, 47)]):
    im.crop((l, t, l + w, t + h)).resize((ow, oh), Image.BILINEAR).save(d + "/ref%d.png" % k)
)";
  ASSERT_EQ(std::system((py + " " + d + "/ref.py " + d).c_str()), 0);
  const Tensor in = decode_image(d + "/in.png");
  const int64_t cases[4][6] = {{10, 20, 120, 150, 48, 48},
                               {0, 0, 163, 211, 64, 40},
                               {100, 180, 30, 25, 56, 56},
                               {40, 5, 90, 60, 33, 47}};
  for (int k = 0; k < 4; ++k) {
    const auto* c = cases[k];
    Region g;
    stored_region(in, window(c[0], c[1], c[2], c[3]), g);
    Taps ty, tx;
    rrc_taps(g, c[4], c[5], ty, tx);
    const Tensor ref = decode_image(d + "/ref" + std::to_string(k) + ".png");
    ASSERT_EQ(ref.shape(), (Shape{3, c[4], c[5]}));
    for (bool flip : {false, true}) {
      std::vector<uint8_t> out(static_cast<size_t>(3 * c[4] * c[5]));
      render_view(g, ty, tx, 3, flip, nullptr, nullptr, out.data());
      int worst = 0;
      for (int64_t ch = 0; ch < 3; ++ch)
        for (int64_t y = 0; y < c[4]; ++y)
          for (int64_t x = 0; x < c[5]; ++x) {
            const int64_t xs = flip ? c[5] - 1 - x : x;
            worst = std::max(worst, std::abs(out[static_cast<size_t>((ch * c[4] + y) * c[5] + x)] -
                                             ref.data<uint8_t>()[(ch * c[4] + y) * c[5] + xs]));
          }
      EXPECT_LE(worst, 1) << "case " << k << " flip " << flip;
    }
  }
}

}  // namespace
}  // namespace netspec::data
