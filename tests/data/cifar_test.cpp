#include "data/cifar.h"

#include <gtest/gtest.h>

#include "data/data_test_util.h"
#include "data/datasets.h"
#include "data/idx_fixture.h"
#include "data/loader.h"

namespace netspec::data {
namespace {

using test::error_of;
using test::tmpdir;

// Record r of file f: label (f + r) % 10, pixel (c, y, x) = (31·f + 7·r + 3·c + y + x) % 256.
std::string cifar_file(int f, int records) {
  std::string b;
  for (int r = 0; r < records; ++r) {
    b.push_back(static_cast<char>((f + r) % 10));
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x)
          b.push_back(static_cast<char>((31 * f + 7 * r + 3 * c + y + x) % 256));
  }
  return b;
}

std::string write_cifar(const std::string& name, int per_file) {
  std::string d = tmpdir(name);
  for (int f = 1; f <= 5; ++f)
    test::write_raw(d + "/data_batch_" + std::to_string(f) + ".bin", cifar_file(f, per_file));
  test::write_raw(d + "/test_batch.bin", cifar_file(0, 3));
  return d;
}

TEST(Cifar10, ReadsBatchesExactlyAndNormalisesPerChannel) {
  std::string d = write_cifar("cifar_ok", 2);
  Splits s = load_dataset(DatasetKind::cifar10, LoadOptions{.dir = d});
  ASSERT_EQ(s.train.x.shape(), (Shape{10, 3, 32, 32}));
  ASSERT_EQ(s.train.x.dtype(), DType::kUI8);
  ASSERT_EQ(s.test.x.shape(), (Shape{3, 3, 32, 32}));
  ASSERT_EQ(s.class_names.size(), 10u);
  EXPECT_EQ(s.class_names[0], "airplane");
  EXPECT_EQ(s.class_names[9], "truck");
  // Train sample 5 is file 3, record 1: label 4, pixel (c=2, y=5, x=9) = 93 + 7 + 6 + 14 = 120.
  EXPECT_EQ(s.train.y.data<int32_t>()[5], 4);
  EXPECT_EQ(s.train.x.data<uint8_t>()[5 * 3072 + 2 * 1024 + 5 * 32 + 9], 120);
  EXPECT_EQ(s.test.y.data<int32_t>()[2], 2);

  // Evaluation batches come out normalised: (v/255 - mean[c]) / std[c].
  Loader ld(s.train, 4, /*train=*/false, 0);
  ld.start_epoch(0);
  Tensor x, y;
  ASSERT_EQ(ld.batch(1, x, y), 4);  // samples 4..7
  ASSERT_EQ(x.dtype(), DType::kF32);
  const float mean[3] = {0.4914f, 0.4822f, 0.4465f}, sd[3] = {0.2470f, 0.2435f, 0.2616f};
  for (int c = 0; c < 3; ++c) {
    const int v = (31 * 3 + 7 * 1 + 3 * c + 5 + 9) % 256;
    EXPECT_NEAR(x.data<float>()[1 * 3072 + c * 1024 + 5 * 32 + 9], (v / 255.0 - mean[c]) / sd[c],
                1e-5)
        << c;
  }
  EXPECT_EQ(y.data<int32_t>()[1], 4);

  Splits lim = load_dataset(DatasetKind::cifar10, LoadOptions{.dir = d, .limit = 3});
  EXPECT_EQ(lim.train.size(), 3);
  EXPECT_EQ(lim.train.mean, s.train.mean);  // the slice keeps its normalisation
  EXPECT_EQ(lim.test.size(), 3);
}

TEST(Cifar10, BadFilesNameTheFileAndFault) {
  std::string d = write_cifar("cifar_bad", 1);
  test::write_raw(d + "/data_batch_3.bin", std::string(1000, '\0'));
  std::string e = error_of([&] { load_dataset(DatasetKind::cifar10, LoadOptions{.dir = d}); });
  EXPECT_EQ(e, "[cifar10] " + d + "/data_batch_3.bin: size 1000 is not a multiple of 3073");
  // A truncated last record.
  test::write_raw(d + "/data_batch_3.bin", cifar_file(3, 2).substr(0, 3073 + 100));
  e = error_of([&] { load_dataset(DatasetKind::cifar10, LoadOptions{.dir = d}); });
  EXPECT_NE(e.find("data_batch_3.bin: size 3173 is not a multiple of 3073"), std::string::npos)
      << e;
  std::string bad = cifar_file(3, 2);
  bad[3073] = 10;  // record 1's label
  test::write_raw(d + "/data_batch_3.bin", bad);
  e = error_of([&] { load_dataset(DatasetKind::cifar10, LoadOptions{.dir = d}); });
  EXPECT_NE(e.find("data_batch_3.bin: label 10 out of range at record 1 (expected < 10)"),
            std::string::npos)
      << e;
  std::filesystem::remove(d + "/data_batch_3.bin");
  e = error_of([&] { load_dataset(DatasetKind::cifar10, LoadOptions{.dir = d}); });
  EXPECT_NE(e.find(d + "/data_batch_3.bin: no such file"), std::string::npos) << e;
  e = error_of([&] { load_dataset(DatasetKind::cifar10, LoadOptions{}); });
  EXPECT_NE(e.find("--data DIR"), std::string::npos) << e;
  EXPECT_NE(e.find("data_batch_1.bin"), std::string::npos) << e;
  EXPECT_NE(e.find("test_batch.bin"), std::string::npos) << e;
}

}  // namespace
}  // namespace netspec::data
