#include "data/image.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "data/data_test_util.h"
#include "data/datasets.h"
#include "data/idx_fixture.h"
#include "data/image_fixture.h"
#include "data/loader.h"

namespace netspec::data {
namespace {

using test::error_of;
using test::tmpdir;

// An RGB test pattern: (y, x, c) -> (40·y + 7·x + 80·c) % 256, h rows of w pixels.
std::vector<uint8_t> pattern(int w, int h) {
  std::vector<uint8_t> px;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        px.push_back(static_cast<uint8_t>((40 * y + 7 * x + 80 * c) % 256));
  return px;
}

uint8_t at(const Tensor& t, int64_t c, int64_t y, int64_t x) {
  return t.data<uint8_t>()[(c * t.shape()[1] + y) * t.shape()[2] + x];
}

TEST(Image, PngDecodesExactlyWithGrayAndAlphaConvertedToRgb) {
  std::string d = tmpdir("png");
  test::write_png(d + "/rgb.png", 5, 4, PNG_FORMAT_RGB, pattern(5, 4));
  Tensor t = decode_image(d + "/rgb.png");
  ASSERT_EQ(t.shape(), (Shape{3, 4, 5}));
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(at(t, c, y, x), (40 * y + 7 * x + 80 * c) % 256);

  std::vector<uint8_t> gray = {0, 17, 128, 255, 3, 99};
  test::write_png(d + "/gray.png", 3, 2, PNG_FORMAT_GRAY, gray);
  t = decode_image(d + "/gray.png");
  ASSERT_EQ(t.shape(), (Shape{3, 2, 3}));
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 6; ++i) EXPECT_EQ(at(t, c, i / 3, i % 3), gray[i]);

  // RGBA: alpha is dropped, colour kept (PIL's convert("RGB")).
  std::vector<uint8_t> rgba = {10, 20, 30, 255, 200, 100, 50, 255, 1, 2, 3, 255};
  test::write_png(d + "/rgba.png", 3, 1, PNG_FORMAT_RGBA, rgba);
  t = decode_image(d + "/rgba.png");
  EXPECT_EQ(at(t, 0, 0, 1), 200);
  EXPECT_EQ(at(t, 1, 0, 1), 100);
  EXPECT_EQ(at(t, 2, 0, 2), 3);
}

TEST(Image, JpegDecodesWithinCompressionTolerance) {
  std::string d = tmpdir("jpg");
  // A smooth gradient (JPEG's quantisation error stays small on it).
  const int w = 16, h = 16;
  std::vector<uint8_t> px;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) px.push_back(static_cast<uint8_t>(40 + 6 * x + 3 * y + 20 * c));
  test::write_raw(d + "/a.jpg", test::jpeg_bytes(w, h, 3, px));
  Tensor t = decode_image(d + "/a.jpg");
  ASSERT_EQ(t.shape(), (Shape{3, h, w}));
  int worst = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        worst = std::max(worst, std::abs(at(t, c, y, x) - px[(y * w + x) * 3 + c]));
  EXPECT_LE(worst, 4);
  // Grayscale JPEG -> three equal channels.
  std::vector<uint8_t> g(w * h);
  for (int i = 0; i < w * h; ++i) g[i] = static_cast<uint8_t>(60 + i / 2);
  test::write_raw(d + "/g.jpeg", test::jpeg_bytes(w, h, 1, g));
  t = decode_image(d + "/g.jpeg");
  for (int i = 0; i < w * h; ++i) {
    EXPECT_EQ(at(t, 0, i / w, i % w), at(t, 2, i / w, i % w));
    EXPECT_LE(std::abs(at(t, 1, i / w, i % w) - g[i]), 3);
  }
  // CMYK (Adobe, inverted) -> RGB as PIL: R = C·K / 255 on the stored values.
  std::vector<uint8_t> cmyk;
  for (int i = 0; i < w * h; ++i) cmyk.insert(cmyk.end(), {255, 128, 0, 200});
  test::write_raw(d + "/cmyk.jpg", test::jpeg_bytes(w, h, 4, cmyk));
  t = decode_image(d + "/cmyk.jpg");
  EXPECT_NEAR(at(t, 0, 3, 3), 200, 3);
  EXPECT_NEAR(at(t, 1, 3, 3), 100, 3);
  EXPECT_NEAR(at(t, 2, 3, 3), 0, 3);
}

TEST(Image, CorruptAndTruncatedFilesNameTheFile) {
  std::string d = tmpdir("badimg");
  std::vector<uint8_t> px = pattern(32, 32);
  std::string jpg = test::jpeg_bytes(32, 32, 3, px);
  test::write_raw(d + "/cut.jpg", jpg.substr(0, jpg.size() / 2));
  std::string e = error_of([&] { decode_image(d + "/cut.jpg"); });
  EXPECT_NE(e.find("[image] " + d + "/cut.jpg: corrupt or truncated JPEG"), std::string::npos) << e;
  std::string garbled = jpg;
  for (size_t i = 20; i < 40; ++i) garbled[i] = static_cast<char>(0xFF);  // ruin the tables
  test::write_raw(d + "/garbled.jpg", garbled);
  e = error_of([&] { decode_image(d + "/garbled.jpg"); });
  EXPECT_NE(e.find(d + "/garbled.jpg: corrupt or truncated JPEG"), std::string::npos) << e;

  test::write_png(d + "/full.png", 32, 32, PNG_FORMAT_RGB, px);
  std::ifstream f(d + "/full.png", std::ios::binary);
  std::string png(std::istreambuf_iterator<char>(f), {});
  test::write_raw(d + "/cut.png", png.substr(0, png.size() - 30));
  e = error_of([&] { decode_image(d + "/cut.png"); });
  EXPECT_NE(e.find("[image] " + d + "/cut.png:"), std::string::npos) << e;
  test::write_raw(d + "/x.png", "hello, not an image");
  e = error_of([&] { decode_image(d + "/x.png"); });
  EXPECT_NE(e.find(d + "/x.png: not a JPEG or PNG file"), std::string::npos) << e;
  e = error_of([&] { decode_image(d + "/missing.png"); });
  EXPECT_NE(e.find(d + "/missing.png: no such file"), std::string::npos) << e;
}

Tensor ramp(int64_t h, int64_t w, int step) {
  Tensor t(DType::kUI8, {3, h, w});
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        t.data<uint8_t>()[(c * h + y) * w + x] = static_cast<uint8_t>(step * x + c);
  return t;
}

TEST(Image, ResizeIsAntialiasedBilinearAndCropsTheCentre) {
  // Same size: identity.
  Tensor p = ramp(5, 6, 9);
  Tensor same = resize_center_crop(p, 5, 6);
  for (int64_t i = 0; i < p.numel(); ++i) ASSERT_EQ(same.data<uint8_t>()[i], p.data<uint8_t>()[i]);
  // 8x8 -> 4x4: PIL's triangle of half-width 2 gives taps 1:3:3:1 / 8 around each output; at the
  // left edge the tap at -1 is dropped and the rest renormalised. Row v = 10·x: 7, 25, 45, 63.
  Tensor r = resize_center_crop(ramp(8, 8, 10), 4, 4);
  ASSERT_EQ(r.shape(), (Shape{3, 4, 4}));
  const int want[4] = {7, 25, 45, 63};
  for (int x = 0; x < 4; ++x) {
    EXPECT_EQ(at(r, 0, 2, x), want[x]) << x;
    EXPECT_EQ(at(r, 2, 1, x), want[x] + 2) << x;  // a constant offset passes through
  }
  // 4x8 -> 4x4: the shorter side already fits, so this is the centre crop: columns 2..5.
  Tensor wide = ramp(4, 8, 30);
  Tensor c = resize_center_crop(wide, 4, 4);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) EXPECT_EQ(at(c, 1, y, x), at(wide, 1, y, x + 2));
  // Upscaling a constant image stays constant.
  Tensor k(DType::kUI8, {3, 2, 3});
  std::fill(k.data<uint8_t>(), k.data<uint8_t>() + k.numel(), 77);
  Tensor up = resize_center_crop(k, 7, 7);
  for (int64_t i = 0; i < up.numel(); ++i) ASSERT_EQ(up.data<uint8_t>()[i], 77);
}

TEST(Image, CropRatioCoversTheLargerSizeThenKeepsTheCentre) {
  // Ratio 0.875 at 7x7: cover floor(7 / 0.875) = 8, i.e. the 8x8 image unscaled, then the centre
  // 7x7 at offset round(0.5) = 0 (half to even): rows and columns 0..6.
  Tensor p = ramp(8, 8, 10);
  Tensor c = resize_center_crop(p, 7, 7, 0.875);
  ASSERT_EQ(c.shape(), (Shape{3, 7, 7}));
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 7; ++x) EXPECT_EQ(at(c, 2, y, x), at(p, 2, y, x)) << y << "," << x;
  // Ratio 0.5 at 4x4 from 8x8: cover 8, crop the centre 4x4 (offset 2), no resampling.
  Tensor h = resize_center_crop(p, 4, 4, 0.5);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) EXPECT_EQ(at(h, 0, y, x), at(p, 0, y + 2, x + 2));
  // Ratio 1 is the plain resize; out-of-range ratios are refused.
  Tensor one = resize_center_crop(p, 4, 4, 1.0), plain = resize_center_crop(p, 4, 4);
  for (int64_t i = 0; i < one.numel(); ++i)
    ASSERT_EQ(one.data<uint8_t>()[i], plain.data<uint8_t>()[i]);
  EXPECT_THROW(resize_center_crop(p, 4, 4, 0.0), Error);
  EXPECT_THROW(resize_center_crop(p, 4, 4, 1.5), Error);
}

TEST(Image, PreprocessNormalisesWithMeanAndStd) {
  std::string d = tmpdir("prep");
  std::vector<uint8_t> px(4 * 4 * 3);
  for (int i = 0; i < 16; ++i) {
    px[i * 3] = 255;
    px[i * 3 + 1] = 0;
    px[i * 3 + 2] = 51;
  }
  test::write_png(d + "/a.png", 4, 4, PNG_FORMAT_RGB, px);
  Tensor f = preprocess_image(d + "/a.png", 2, 2, kImageNetNorm.mean, kImageNetNorm.std);
  ASSERT_EQ(f.shape(), (Shape{3, 2, 2}));
  EXPECT_NEAR(f.data<float>()[0], (1.0 - 0.485) / 0.229, 1e-5);
  EXPECT_NEAR(f.data<float>()[4], (0.0 - 0.456) / 0.224, 1e-5);
  EXPECT_NEAR(f.data<float>()[11], (0.2 - 0.406) / 0.225, 1e-5);
}

// DIR/{train,val}/{cat,dog}/: solid-colour images of assorted sizes and kinds.
void solid_png(const std::string& path, int w, int h, uint8_t r, uint8_t g, uint8_t b) {
  std::vector<uint8_t> px;
  for (int i = 0; i < w * h; ++i) px.insert(px.end(), {r, g, b});
  test::write_png(path, w, h, PNG_FORMAT_RGB, px);
}

TEST(Image, FolderTreeClassesLabelsAndSizes) {
  namespace fs = std::filesystem;
  std::string d = tmpdir("folder");
  for (const char* s : {"train", "val"})
    for (const char* c : {"dog", "cat"}) fs::create_directories(d + "/" + s + "/" + c);
  solid_png(d + "/train/cat/a.png", 10, 7, 200, 0, 0);
  solid_png(d + "/train/cat/b.PNG", 6, 9, 201, 0, 0);
  test::write_png(d + "/train/cat/c.png", 5, 5, PNG_FORMAT_GRAY, std::vector<uint8_t>(25, 90));
  std::vector<uint8_t> blue;
  for (int i = 0; i < 64; ++i) blue.insert(blue.end(), {0, 0, 250});
  test::write_raw(d + "/train/dog/x.JPEG", test::jpeg_bytes(8, 8, 3, blue));
  solid_png(d + "/train/dog/y.png", 12, 12, 0, 50, 0);
  test::write_raw(d + "/train/dog/notes.txt", "not an image: ignored");
  solid_png(d + "/val/cat/v.png", 4, 4, 1, 2, 3);
  solid_png(d + "/val/dog/w.png", 4, 4, 4, 5, 6);

  Splits s = load_dataset(DatasetKind::imagenette, LoadOptions{.dir = d, .height = 4, .width = 4});
  EXPECT_EQ(s.class_names, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(s.train.x.shape(), (Shape{5, 3, 4, 4}));
  ASSERT_EQ(s.train.x.dtype(), DType::kUI8);
  EXPECT_EQ(s.train.mean, kImageNetNorm.mean);
  const std::vector<int32_t> labels = {0, 0, 0, 1, 1};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.train.y.data<int32_t>()[i], labels[i]);
  auto px = [&](int n, int c) { return s.train.x.data<uint8_t>()[n * 48 + c * 16 + 5]; };
  EXPECT_EQ(px(0, 0), 200);       // a.png
  EXPECT_EQ(px(1, 0), 201);       // b.PNG (extensions in any case)
  EXPECT_EQ(px(2, 1), 90);        // gray replicated
  EXPECT_NEAR(px(3, 2), 250, 3);  // JPEG
  EXPECT_EQ(px(4, 1), 50);
  EXPECT_EQ(s.test.size(), 2);
  EXPECT_EQ(s.test.y.data<int32_t>()[1], 1);

  // limit keeps an evenly strided subset (both classes survive).
  Splits lim = load_dataset(DatasetKind::imagenette,
                            LoadOptions{.dir = d, .limit = 2, .height = 4, .width = 4});
  ASSERT_EQ(lim.train.size(), 2);
  EXPECT_EQ(lim.train.y.data<int32_t>()[0], 0);
  EXPECT_EQ(lim.train.y.data<int32_t>()[1], 1);

  // Errors: no size, a corrupt image, mismatched class folders.
  std::string e = error_of([&] { load_dataset(DatasetKind::imagenette, LoadOptions{.dir = d}); });
  EXPECT_NE(e.find("input size"), std::string::npos) << e;
  test::write_raw(d + "/train/dog/z.jpg", "\xFF\xD8\xFF\xE0 truncated");
  e = error_of([&] {
    load_dataset(DatasetKind::imagenette, LoadOptions{.dir = d, .height = 4, .width = 4});
  });
  EXPECT_NE(e.find(d + "/train/dog/z.jpg: corrupt or truncated JPEG"), std::string::npos) << e;
  fs::remove(d + "/train/dog/z.jpg");
  fs::create_directories(d + "/val/emu");
  solid_png(d + "/val/emu/e.png", 4, 4, 0, 0, 0);
  e = error_of([&] {
    load_dataset(DatasetKind::imagenette, LoadOptions{.dir = d, .height = 4, .width = 4});
  });
  EXPECT_NE(e.find("class folders differ"), std::string::npos) << e;
}

}  // namespace
}  // namespace netspec::data
