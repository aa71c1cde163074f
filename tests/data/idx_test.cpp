#include "data/idx.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "data/data_test_util.h"
#include "data/datasets.h"
#include "data/idx_fixture.h"
#include "data/loader.h"

namespace netspec::data {
namespace {

using test::error_of;
using test::tmpdir;

TEST(Idx, ReadsRawAndGzipImagesAndLabels) {
  std::string d = tmpdir("read");
  // Two 2x3 images.
  std::string img = test::idx_bytes({2, 2, 3}, {0, 255, 51, 102, 0, 0, 1, 2, 3, 4, 5, 255});
  test::write_raw(d + "/img", img);
  test::write_gz(d + "/img.gz", img);
  for (const char* f : {"/img", "/img.gz"}) {
    Tensor t = read_idx_images(d + f, 0.5f, 0.25f);
    ASSERT_EQ(t.shape(), (Shape{2, 1, 2, 3}));
    // (v/255 - 0.5) / 0.25: 0 -> -2, 255 -> 2, 51 -> (0.2-0.5)*4 = -1.2.
    EXPECT_FLOAT_EQ(t.data<float>()[0], -2.f);
    EXPECT_FLOAT_EQ(t.data<float>()[1], 2.f);
    EXPECT_NEAR(t.data<float>()[2], -1.2f, 1e-6);
    EXPECT_FLOAT_EQ(t.data<float>()[11], 2.f);
  }
  test::write_gz(d + "/lab.gz", test::idx_bytes({3}, {7, 0, 9}));
  Tensor l = read_idx_labels(d + "/lab.gz");
  ASSERT_EQ(l.shape(), (Shape{3}));
  EXPECT_EQ(l.data<int32_t>()[0], 7);
  EXPECT_EQ(l.data<int32_t>()[2], 9);
}

TEST(Idx, BadFilesNameTheFileAndFault) {
  std::string d = tmpdir("bad");
  std::string img = test::idx_bytes({2, 2, 3}, std::vector<uint8_t>(12, 1));
  std::string bad = img;
  bad[0] = 1;
  test::write_raw(d + "/magic", bad);
  std::string e = error_of([&] { read_idx_images(d + "/magic"); });
  EXPECT_NE(e.find(d + "/magic: bad magic"), std::string::npos) << e;
  test::write_gz(d + "/short.gz", img.substr(0, img.size() - 5));
  e = error_of([&] { read_idx_images(d + "/short.gz"); });
  EXPECT_NE(e.find(d + "/short.gz: truncated (got 23 bytes, expected 28)"), std::string::npos) << e;
  // A cut gzip stream (not just a short payload) is also an error naming the file.
  std::string gz = d + "/full.gz";
  test::write_gz(gz, std::string(4000, 'x'));
  std::string raw;
  {
    std::ifstream f(gz, std::ios::binary);
    raw.assign(std::istreambuf_iterator<char>(f), {});
  }
  test::write_raw(d + "/cut.gz", raw.substr(0, raw.size() - 10));
  e = error_of([&] { read_idx_images(d + "/cut.gz"); });
  EXPECT_NE(e.find(d + "/cut.gz:"), std::string::npos) << e;
  test::write_raw(d + "/lab", test::idx_bytes({2}, {3, 10}));
  e = error_of([&] { read_idx_labels(d + "/lab"); });
  EXPECT_NE(e.find("label 10 out of range at record 1"), std::string::npos) << e;
  test::write_raw(d + "/good", img);
  e = error_of([&] { read_idx_labels(d + "/good"); });
  EXPECT_NE(e.find("wrong rank (got 3, expected 1)"), std::string::npos) << e;
  e = error_of([&] { load_idx_split(d, true, 0, 1); });
  EXPECT_NE(e.find("no train-images-idx3-ubyte[.gz]"), std::string::npos) << e;
}

TEST(Idx, FashionMnistSplitsCarryClassNamesAndTheBlackPixel) {
  std::string d = tmpdir("fashion");
  test::write_synthetic_split(d, "train", 30, 1);
  test::write_synthetic_split(d, "t10k", 10, 2);
  Splits s = load_dataset(DatasetKind::fashionMnist, LoadOptions{.dir = d, .limit = 12});
  EXPECT_EQ(s.train.size(), 12);
  EXPECT_EQ(s.test.size(), 10);
  ASSERT_EQ(s.class_names.size(), 10u);
  EXPECT_EQ(s.class_names[0], "T-shirt/top");
  EXPECT_EQ(s.class_names[9], "Ankle boot");
  // Bytes normalised per batch; a black pixel (the crop padding) is -mean/std.
  EXPECT_EQ(s.train.x.dtype(), DType::kUI8);
  ASSERT_EQ(s.train.pixel_values.size(), 256u);
  EXPECT_FLOAT_EQ(s.train.pixel_values[0], -kFashionMean / kFashionStd);
  EXPECT_EQ(dataset_normalization(DatasetKind::fashionMnist).mean,
            std::vector<float>{kFashionMean});
}

Dataset tiny(int n) {
  Dataset ds{Tensor(DType::kF32, {n, 1, 1, 2}), Tensor(DType::kI32, {n})};
  for (int i = 0; i < n; ++i) {
    ds.x.data<float>()[2 * i] = static_cast<float>(i);
    ds.x.data<float>()[2 * i + 1] = static_cast<float>(-i);
    ds.y.data<int32_t>()[i] = i;  // label == image index, so pairing is checkable
  }
  return ds;
}

// Training batches: ceil(10 / 3) = 4, the last a smaller [1, ...] tensor (PyTorch's
// drop_last=False), so every sample is trained exactly once per epoch with its own label.
TEST(Loader, ShuffleKeepsLabelsWithImagesAndTrainsTheTail) {
  Dataset ds = tiny(10);
  Loader ld(ds, 3, /*train=*/true, 7);
  EXPECT_EQ(ld.num_batches(), 4);
  ld.start_epoch(0);
  std::vector<int64_t> o0 = ld.order();
  ld.start_epoch(1);
  EXPECT_NE(ld.order(), o0);  // a new permutation per epoch
  ld.start_epoch(0);
  EXPECT_EQ(ld.order(), o0);  // and the same for the same seed and epoch
  for (int64_t epoch : {0, 1}) {
    ld.start_epoch(epoch);
    std::vector<int> seen(10, 0);
    for (int64_t b = 0; b < ld.num_batches(); ++b) {
      Tensor x, y;
      const int64_t n = ld.batch(b, x, y);
      EXPECT_EQ(n, b < 3 ? 3 : 1);
      EXPECT_EQ(ld.batch_rows(b), n);
      EXPECT_EQ(x.shape(), (Shape{n, 1, 1, 2}));  // the tail is not padded in training
      EXPECT_EQ(y.shape(), (Shape{n}));
      for (int k = 0; k < n; ++k) {
        int lab = y.data<int32_t>()[k];
        EXPECT_EQ(lab, ld.order()[static_cast<size_t>(3 * b + k)]);  // label == image index
        EXPECT_EQ(x.data<float>()[2 * k], static_cast<float>(lab));
        EXPECT_EQ(x.data<float>()[2 * k + 1], static_cast<float>(-lab));
        ++seen[lab];
      }
    }
    EXPECT_EQ(seen, std::vector<int>(10, 1)) << "epoch " << epoch;
  }
  // A training set smaller than one batch is one partial batch; an empty one is refused.
  Loader small(ds, 16, true, 0);
  EXPECT_EQ(small.num_batches(), 1);
  EXPECT_EQ(small.batch_rows(0), 10);
  Dataset none{Tensor(DType::kF32, {0, 1, 1, 2}), Tensor(DType::kI32, {0})};
  std::string e = error_of([&] { Loader(none, 4, true, 0); });
  EXPECT_NE(e.find("training set is empty"), std::string::npos) << e;
}

TEST(Loader, EvalCountsEverySampleOnce) {
  Dataset ds = tiny(10);
  Loader ld(ds, 4, /*train=*/false, 0);
  ld.start_epoch(3);
  EXPECT_EQ(ld.num_batches(), 3);
  int64_t total = 0;
  for (int64_t b = 0; b < 3; ++b) {
    Tensor x, y;
    int64_t n = ld.batch(b, x, y);
    EXPECT_EQ(n, b < 2 ? 4 : 2);
    for (int k = 0; k < n; ++k) EXPECT_EQ(y.data<int32_t>()[k], total + k);
    if (b == 2) {
      EXPECT_EQ(x.data<float>()[2 * 3], 0.f);  // padding is zero
    }
    total += n;
  }
  EXPECT_EQ(total, 10);
}

// MNIST/Fashion-MNIST are held as bytes and normalised when a batch is assembled. Without
// augmentation the batch must equal, bit for bit, what the former f32 storage held:
// v·(1/(255·std)) - mean/std per pixel (read_idx_images), and the padding of a crop -mean/std.
TEST(Idx, ByteStorageBatchesEqualTheFormerF32Storage) {
  std::string d = tmpdir("bytes");
  test::write_synthetic_split(d, "train", 40, 5);
  test::write_synthetic_split(d, "t10k", 12, 6);
  const Splits s = load_dataset(DatasetKind::mnist, LoadOptions{.dir = d});
  ASSERT_EQ(s.train.x.dtype(), DType::kUI8);
  const Tensor f32 = read_idx_images(d + "/train-images-idx3-ubyte.gz", kMnistMean, kMnistStd);
  const float inv = 1.f / (255.f * kMnistStd), off = kMnistMean / kMnistStd;
  const uint8_t* bytes = s.train.x.data<uint8_t>();
  for (int64_t i = 0; i < f32.numel(); ++i)  // the former loop's formula, written out
    ASSERT_EQ(f32.data<float>()[i], static_cast<float>(bytes[i]) * inv - off) << i;
  const Dataset former(f32, s.train.y);  // the f32 storage
  for (bool train : {false, true}) {
    Loader ld(s.train, 16, train, 3);
    ld.start_epoch(1);
    Loader ref(former, 16, train, 3);  // no augmentation
    ref.start_epoch(1);
    for (int64_t b = 0; b < ld.num_batches(); ++b) {
      Tensor x, y, rx, ry;
      ASSERT_EQ(ld.batch(b, x, y), ref.batch(b, rx, ry));
      ASSERT_EQ(x.dtype(), DType::kF32);
      ASSERT_EQ(x.shape(), rx.shape());
      ASSERT_EQ(std::memcmp(x.raw(), rx.raw(), x.nbytes()), 0) << "batch " << b;
      ASSERT_EQ(std::memcmp(y.raw(), ry.raw(), y.nbytes()), 0);
    }
  }
  // With crop augmentation the padding is the former `black`, -mean/std.
  Augment crop{true, 2, false};
  Loader ld(s.train, 8, true, 4, crop);
  const Dataset former_black(f32, s.train.y, {}, {}, {-kMnistMean / kMnistStd});
  Loader ref(former_black, 8, true, 4, crop);
  ld.start_epoch(0);
  ref.start_epoch(0);
  Tensor x, y, rx, ry;
  ld.batch(0, x, y);
  ref.batch(0, rx, ry);
  EXPECT_EQ(std::memcmp(x.raw(), rx.raw(), x.nbytes()), 0);
}

// RandAugment / AutoAugment now apply to MNIST (refused while it was f32): the bytes go through
// the policy, then the normalisation; every value is one of the 256 normalised byte values.
TEST(Idx, RandAugmentAndAutoAugmentRunOnMnistBytes) {
  std::string d = tmpdir("ra");
  test::write_synthetic_split(d, "train", 24, 7);
  test::write_synthetic_split(d, "t10k", 4, 8);
  const Splits s = load_dataset(DatasetKind::mnist, LoadOptions{.dir = d});
  for (bool autoaug : {false, true}) {
    Augment a{true, 2, false};
    a.rand_augment = !autoaug;
    a.auto_augment = autoaug;
    Loader ld(s.train, 24, true, 1, a), plain(s.train, 24, true, 1, Augment{true, 2, false});
    ld.start_epoch(0);
    plain.start_epoch(0);
    Tensor x, y, px, py;
    ld.batch(0, x, y);
    plain.batch(0, px, py);
    EXPECT_EQ(x.shape(), (Shape{24, 1, 28, 28}));
    EXPECT_NE(std::memcmp(x.raw(), px.raw(), x.nbytes()), 0) << "the policy changed nothing";
    const std::vector<float>& lut = s.train.pixel_values;
    for (float v : x.span<float>())
      ASSERT_TRUE(std::find(lut.begin(), lut.end(), v) != lut.end()) << v;
  }
}

}  // namespace
}  // namespace netspec::data
