// Segmentation data: the synthetic Oxford-IIIT Pets writer and reader (files, lists, class map),
// nearest resizing of label maps by hand, and label maps following the loader's crop and flip.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "data/brats.h"
#include "data/datasets.h"
#include "data/image.h"
#include "data/loader.h"
#include "data/pets.h"
#include "data/synth.h"
#include "data_test_util.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

int count_lines(const fs::path& p) {
  std::ifstream f(p);
  int n = 0;
  std::string line;
  while (std::getline(f, line)) n += !line.empty() && line[0] != '#';
  return n;
}

TEST(SegData, SynthPetsWritesTheReleaseLayoutAndReadsBack) {
  const std::string dir = test::tmpdir("pets");
  synth_seg({.format = "pets", .n = 10, .out = dir, .seed = 3});
  EXPECT_EQ(count_lines(fs::path(dir) / "annotations" / "trainval.txt"), 8);
  EXPECT_EQ(count_lines(fs::path(dir) / "annotations" / "test.txt"), 2);
  EXPECT_TRUE(fs::exists(fs::path(dir) / "images" / "synth_00001.jpg"));
  // The trimap holds exactly the values 1, 2, 3 at the image's size.
  Tensor img = decode_image(dir + "/images/synth_00001.jpg");
  Tensor tri = decode_image(dir + "/annotations/trimaps/synth_00001.png");
  EXPECT_EQ(img.shape(), tri.shape());
  std::set<int> vals;
  for (int64_t i = 0; i < tri.shape()[1] * tri.shape()[2]; ++i) vals.insert(tri.data<uint8_t>()[i]);
  EXPECT_EQ(vals, (std::set<int>{1, 2, 3}));

  LoadOptions o;
  o.dir = dir;
  o.height = o.width = 32;
  Splits s = load_dataset(DatasetKind::pets, o);
  EXPECT_EQ(s.train.x.shape(), (Shape{8, 3, 32, 32}));
  EXPECT_EQ(s.train.y.shape(), (Shape{8, 32, 32}));
  EXPECT_EQ(s.test.size(), 2);
  EXPECT_EQ(s.class_names, kPetsClasses);
  std::vector<int64_t> hist(3);
  for (int64_t i = 0; i < s.train.y.numel(); ++i) {
    int32_t v = s.train.y.data<int32_t>()[i];
    ASSERT_TRUE(v >= 0 && v < 3) << v;
    ++hist[size_t(v)];
  }
  // Background is the largest class, the border band the smallest, all present.
  EXPECT_GT(hist[0], hist[1]);
  EXPECT_GT(hist[1], hist[2]);
  EXPECT_GT(hist[2], 0);
  // The same seed writes the same files.
  const std::string again = test::tmpdir("pets_again");
  synth_seg({.format = "pets", .n = 10, .out = again, .seed = 3});
  std::ifstream a(dir + "/images/synth_00004.jpg", std::ios::binary),
      b(again + "/images/synth_00004.jpg", std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}),
            std::string(std::istreambuf_iterator<char>(b), {}));
}

// 6 synthetic MSD cases of 8 slices: case 5 (index 4) is the test split; every slice holds brain;
// each modality is z-scored over the brain (mean 0, std 1 there; 0 outside).
TEST(SegData, SynthBratsReadsBackAsMsdTask01) {
  const std::string dir = test::tmpdir("brats");
  synth_seg({.format = "brats", .n = 6, .out = dir, .seed = 2});
  EXPECT_TRUE(fs::exists(fs::path(dir) / "imagesTr" / "BRATS_001.nii.gz"));
  EXPECT_TRUE(fs::exists(fs::path(dir) / "labelsTr" / "BRATS_006.nii.gz"));
  BratsSplits b = load_brats(dir, 224, 224);
  EXPECT_EQ(b.train.x.shape(), (Shape{5 * 8, 4, 224, 224}));
  EXPECT_EQ(b.test.y.shape(), (Shape{8, 224, 224}));
  std::vector<int64_t> hist(4);
  for (int64_t i = 0; i < b.train.y.numel(); ++i) ++hist[size_t(b.train.y.data<int32_t>()[i])];
  for (int k = 0; k < 4; ++k) EXPECT_GT(hist[size_t(k)], 0) << k;
  // Modality 0 of case 1 (the first 8 slices): brain voxels have mean 0 and variance 1.
  double s = 0, s2 = 0, n = 0;
  const int64_t plane = 224 * 224;
  for (int64_t z = 0; z < 8; ++z)
    for (int64_t i = 0; i < plane; ++i) {
      const float v = b.train.x.data<float>()[(z * 4 + 0) * plane + i];
      if (v != 0) s += v, s2 += double(v) * v, n += 1;
    }
  EXPECT_NEAR(s / n, 0, 1e-3);
  EXPECT_NEAR(s2 / n, 1, 1e-2);
  LoadOptions o;
  o.dir = dir;
  o.height = o.width = 224;
  EXPECT_EQ(load_dataset(DatasetKind::brats224, o).class_names, kBratsClasses);
  EXPECT_NE(test::error_of([&] { load_dataset(DatasetKind::brats, o); }).find("240x240"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { load_brats(dir, 256, 256); }).find("smaller than"),
            std::string::npos);
}

TEST(SegData, RefusalsNameTheProblem) {
  EXPECT_NE(test::error_of([] {
              synth_seg({.format = "coco", .n = 4, .out = "/tmp/x"});
            }).find("unknown (expected pets"),
            std::string::npos);
  LoadOptions o;
  o.height = o.width = 8;
  EXPECT_NE(test::error_of([&] { load_dataset(DatasetKind::pets, o); }).find("--data DIR"),
            std::string::npos);
  o.dir = test::tmpdir("pets_empty");
  EXPECT_NE(test::error_of([&] { load_dataset(DatasetKind::pets, o); }).find("trainval.txt"),
            std::string::npos);
}

// 2x4 -> 2x2: cover 2x4 (scale 1), centre crop columns 1..2. 4x4 -> 2x2: rows/cols 1 and 3.
TEST(SegData, ResizeMaskNearestByHand) {
  Tensor m(DType::kUI8, {2, 4});
  for (int i = 0; i < 8; ++i) m.data<uint8_t>()[i] = uint8_t(i);
  Tensor r = resize_mask_nearest(m, 2, 2);
  EXPECT_EQ(std::vector<int32_t>(r.data<int32_t>(), r.data<int32_t>() + 4),
            (std::vector<int32_t>{1, 2, 5, 6}));
  Tensor q(DType::kUI8, {4, 4});
  for (int i = 0; i < 16; ++i) q.data<uint8_t>()[i] = uint8_t(i);
  Tensor s = resize_mask_nearest(q, 2, 2);
  EXPECT_EQ(std::vector<int32_t>(s.data<int32_t>(), s.data<int32_t>() + 4),
            (std::vector<int32_t>{5, 7, 13, 15}));
}

// Images whose pixel value is its label: after the random crop (zero padding) and flip, every
// batch's image still equals its label map.
TEST(SegData, MasksFollowCropAndFlip) {
  const int64_t n = 6, h = 8, w = 8;
  Tensor x(DType::kF32, {n, 1, h, w}), y(DType::kI32, {n, h, w});
  for (int64_t i = 0; i < n * h * w; ++i) {
    int32_t v = int32_t((i * 7 + i / 5) % 3);
    y.data<int32_t>()[i] = v;
    x.data<float>()[i] = float(v);
  }
  Dataset ds(x, y);
  Loader ld(ds, 3, true, 11, Augment{true, 2, true});
  int changed = 0;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    ld.start_epoch(epoch);
    for (int64_t b = 0; b < ld.num_batches(); ++b) {
      Tensor bx, by;
      int64_t rows = ld.batch(b, bx, by);
      for (int64_t k = 0; k < rows * h * w; ++k)
        ASSERT_EQ(bx.data<float>()[k], float(by.data<int32_t>()[k])) << k;
      const int64_t s = ld.order()[size_t(b * 3)];
      changed +=
          std::memcmp(by.data<int32_t>(), y.data<int32_t>() + s * h * w, size_t(h * w) * 4) != 0;
    }
  }
  EXPECT_GT(changed, 0);  // the augmentation did move some label maps
}

}  // namespace
}  // namespace netspec::data
