// Hardening of the dataset readers (issue 25): a FIFO (or any non-regular file) given as an
// IDX, CIFAR, image or text file is refused by name without blocking; PNG and JPEG headers that
// claim more than the pixel limit are refused before the pixel buffer is allocated.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "data/cifar.h"
#include "data/idx.h"
#include "data/image.h"
#include "data/text.h"
#include "tests/data/idx_fixture.h"
#include "tests/data/image_fixture.h"
#include "tests/error_of.h"
#include "tests/support/test_files.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  return netspec::test_util::fresh_dir("hard_data", name);
}

using test_util::error_of;

TEST(DataHardening, AFifoIsRefusedByNameForEveryReader) {
  fs::path d = fresh_dir("fifo");
  const std::string p = (d / "pipe").string();
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  const std::string want = "cannot read '" + p + "': it is a FIFO (expected a regular file)";
  // Opening a FIFO for reading blocked forever here before (no writer ever comes).
  EXPECT_NE(error_of([&] { read_idx_images(p); }).find("[idx] " + want), std::string::npos);
  EXPECT_NE(error_of([&] { read_idx_labels(p); }).find(want), std::string::npos);
  EXPECT_NE(error_of([&] { read_cifar10_batch(p); }).find("[cifar10] " + want), std::string::npos);
  EXPECT_NE(error_of([&] { decode_image(p); }).find("[image] " + want), std::string::npos);
  EXPECT_NE(error_of([&] { load_text(p); }).find("[text] " + want), std::string::npos);
  EXPECT_NE(error_of([&] { load_vocab(p); }).find("[vocab] " + want), std::string::npos);
  // A directory and a device are named too.
  EXPECT_NE(error_of([&] { read_idx_images(d.string()); }).find("it is a directory"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_cifar10_batch("/dev/zero"); }).find("it is a device"),
            std::string::npos);
}

void put_be32(std::string& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
}

using netspec::test_util::slurp;

long max_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A tiny valid PNG whose IHDR is patched to claim w x h (CRC recomputed).
std::string png_claiming(const fs::path& d, uint32_t w, uint32_t h) {
  test::write_png((d / "small.png").string(), 2, 2, PNG_FORMAT_GRAY, {0, 50, 100, 150});
  std::string b = slurp(d / "small.png");
  put_be32(b, 16, w);
  put_be32(b, 20, h);
  uLong crc = crc32(0, reinterpret_cast<const Bytef*>(b.data() + 12), 17);
  put_be32(b, 29, static_cast<uint32_t>(crc));
  return b;
}

TEST(DataHardening, APngClaimingTooManyPixelsIsRefusedBeforeAllocating) {
  fs::path d = fresh_dir("png_bomb");
  std::ofstream(d / "bomb.png", std::ios::binary) << png_claiming(d, 20000, 20000);
  long before = max_rss_kb();
  std::string e = error_of([&] { decode_image((d / "bomb.png").string()); });
  EXPECT_NE(e.find("bomb.png: 20000x20000 is 400000000 pixels, more than the limit of 89478485"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("NETSPEC_MAX_IMAGE_PIXELS"), std::string::npos);
  EXPECT_LT(max_rss_kb() - before, 100 * 1024);  // 1.5 GB before the cap
  // The limit is overridable: 2x2 passes a limit of 4 and fails one of 3.
  test::write_png((d / "ok.png").string(), 2, 2, PNG_FORMAT_GRAY, {0, 50, 100, 150});
  setenv("NETSPEC_MAX_IMAGE_PIXELS", "4", 1);
  EXPECT_EQ(decode_image((d / "ok.png").string()).shape(), (Shape{3, 2, 2}));
  setenv("NETSPEC_MAX_IMAGE_PIXELS", "3", 1);
  EXPECT_NE(error_of([&] { decode_image((d / "ok.png").string()); }).find("limit of 3"),
            std::string::npos);
  setenv("NETSPEC_MAX_IMAGE_PIXELS", "-1", 1);
  EXPECT_NE(error_of([&] {
              decode_image((d / "ok.png").string());
            }).find("NETSPEC_MAX_IMAGE_PIXELS must be a positive integer (got '-1')"),
            std::string::npos);
  unsetenv("NETSPEC_MAX_IMAGE_PIXELS");
}

TEST(DataHardening, AJpegClaimingTooManyPixelsIsRefusedBeforeAllocating) {
  fs::path d = fresh_dir("jpeg_bomb");
  std::string b = test::jpeg_bytes(8, 8, 3, std::vector<uint8_t>(8 * 8 * 3, 128));
  size_t sof = b.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  // SOF0: FF C0, length (2), precision (1), height (2), width (2).
  b[sof + 5] = static_cast<char>(60000 >> 8);
  b[sof + 6] = static_cast<char>(60000 & 0xff);
  b[sof + 7] = static_cast<char>(60000 >> 8);
  b[sof + 8] = static_cast<char>(60000 & 0xff);
  std::ofstream(d / "bomb.jpg", std::ios::binary) << b;
  long before = max_rss_kb();
  std::string e = error_of([&] { decode_image((d / "bomb.jpg").string()); });
  EXPECT_NE(e.find("bomb.jpg: 60000x60000 is 3600000000 pixels, more than the limit"),
            std::string::npos)
      << e;
  EXPECT_LT(max_rss_kb() - before, 100 * 1024);
}

// Found by the fuzz test under UBSan: dims whose product overflows int64 (signed overflow, UB).
TEST(DataHardening, IdxDimsWhoseProductOverflowsAreRefused) {
  fs::path d = fresh_dir("idx_dims");
  std::string b = test::idx_bytes({2628368067u, 4000000000u, 4000000000u}, {1, 2, 3});
  test::write_raw((d / "x.idx").string(), b);
  std::string e = error_of([&] { read_idx_images((d / "x.idx").string()); });
  EXPECT_NE(e.find("x.idx: truncated (got 19 bytes, the header's dims [2628368067] "
                   "need more)"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace netspec::data
