// Streamed image folders (data/sample_source.h): the same batches as the in-RAM path, bit for
// bit, for any decode thread count, augmented or not, train and eval, RGB and grayscale; subsets
// (take_rows) and ImageNet's flat val likewise; the in-RAM / streaming choice follows the budget;
// a corrupt file in a streamed split is named when its batch is assembled. RandomResizedCrop
// (whole images decoded in RAM vs window-decoded from the files): bit for bit without DCT
// scaling, within a level on average with it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.h"
#include "data/image_fixture.h"
#include "data/loader.h"
#include "data/own_data.h"
#include "data/sample_source.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

// DIR/{train,val}/<c0..c2>/: JPEGs and PNGs of varied sizes (so resize and crop both work).
fs::path write_tree(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("ns_stream_" + name);
  fs::remove_all(d);
  std::mt19937 r(7);
  for (const char* split : {"train", "val"})
    for (int c = 0; c < 3; ++c) {
      fs::create_directories(d / split / fmt::format("c{}", c));
      const int n = split[0] == 't' ? 9 + c : 4;
      for (int i = 0; i < n; ++i) {
        const int w = 20 + static_cast<int>(r() % 30), h = 18 + static_cast<int>(r() % 30);
        std::vector<uint8_t> px(static_cast<size_t>(w * h * 3));
        for (size_t k = 0; k < px.size(); ++k)
          px[k] = static_cast<uint8_t>((k / 3 % w) * 5 + c * 60 + r() % 40);
        const fs::path base = d / split / fmt::format("c{}", c) / fmt::format("{:02}", i);
        if (i % 3 == 0) {
          test::write_png(base.string() + ".png", w, h, PNG_FORMAT_RGB, px);
        } else {
          std::ofstream(base.string() + ".jpg", std::ios::binary) << test::jpeg_bytes(w, h, 3, px);
        }
      }
    }
  return d;
}

Splits load(const fs::path& d, int64_t memory_mb, int64_t channels = 3, bool whole = false,
            bool dct = false) {
  PipelineOptions& p = pipeline_options();
  const PipelineOptions saved = p;
  p.stream_allowed = true;
  p.memory_mb = memory_mb;
  p.dct_scale = dct;  // bit for bit needs full-resolution decodes
  Splits s = load_image_folder_dataset(d.string(), channels, 16, 16, 0, 0.875, whole);
  p = saved;
  return s;
}

bool same(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// Every batch of two epochs through a Prefetcher, streamed with `threads` vs in RAM.
void expect_same_batches(const Dataset& ram, const Dataset& streamed, bool train, Augment aug,
                         int threads, bool whole = false) {
  ASSERT_EQ(ram.streamed(), whole);  // whole images in RAM are a (decoded) source too
  ASSERT_TRUE(streamed.streamed());
  Loader a(ram, 4, train, 11, aug), b(streamed, 4, train, 11, aug);
  b.set_decode_threads(threads);
  Prefetcher pa(a), pb(b);
  for (int epoch = 0; epoch < 2; ++epoch) {
    pa.start_epoch(epoch);
    pb.start_epoch(epoch);
    Batch x, y;
    int batches = 0;
    while (pa.next(x)) {
      ASSERT_TRUE(pb.next(y));
      EXPECT_EQ(x.valid, y.valid);
      EXPECT_TRUE(same(x.x, y.x)) << "epoch " << epoch << " batch " << x.index;
      EXPECT_TRUE(same(x.y, y.y)) << "epoch " << epoch << " batch " << x.index;
      ++batches;
    }
    EXPECT_FALSE(pb.next(y));
    EXPECT_EQ(batches, a.num_batches());
  }
}

TEST(Stream, SameBatchesAsInRamForAnyThreadCount) {
  const fs::path d = write_tree("same");
  const Splits ram = load(d, 1 << 20), st = load(d, 0);
  EXPECT_NE(ram.pipeline.find("in RAM"), std::string::npos) << ram.pipeline;
  EXPECT_NE(st.pipeline.find("streaming 42 images"), std::string::npos) << st.pipeline;
  ASSERT_EQ(st.train.size(), 30);
  ASSERT_EQ(st.test.size(), 12);
  EXPECT_EQ(st.class_names, ram.class_names);
  Augment ra = Augment::standard();
  ra.rand_augment = true;
  for (int threads : {1, 3}) {
    expect_same_batches(ram.train, st.train, true, Augment::standard(), threads);
    expect_same_batches(ram.train, st.train, true, ra, threads);
    expect_same_batches(ram.train, st.train, true, Augment{}, threads);
    expect_same_batches(ram.test, st.test, false, Augment{}, threads);  // crop ratio 0.875
  }
  // A 1-channel net reads the folder as gray on both paths.
  const Splits gram = load(d, 1 << 20, 1), gst = load(d, 0, 1);
  expect_same_batches(gram.train, gst.train, true, Augment::standard(), 3);
  // Subsets (a --val-split hold-out, repeated augmentation) keep streaming the same rows.
  const std::vector<int64_t> rows = {29, 3, 3, 17, 0, 8};
  const Dataset sub = take_rows(st.train, rows);
  EXPECT_TRUE(sub.streamed());
  expect_same_batches(take_rows(ram.train, rows), sub, true, Augment::standard(), 2);
  EXPECT_THROW(take_rows(st.train, {30}), Error);
}

// Larger smooth JPEGs (4:2:0, like photographs) so random-resized crops can DCT-scale at 16x16.
fs::path write_photo_tree(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("ns_stream_" + name);
  fs::remove_all(d);
  std::mt19937 r(5);
  for (int c = 0; c < 2; ++c) {
    fs::create_directories(d / "train" / fmt::format("c{}", c));
    for (int i = 0; i < 10; ++i) {
      const int w = 40 + static_cast<int>(r() % 90), h = 40 + static_cast<int>(r() % 90);
      const double fx = 0.05 + (r() % 10) * 0.01, fy = 0.04 + (r() % 10) * 0.01;
      std::vector<uint8_t> px(static_cast<size_t>(w * h * 3));
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          for (int k = 0; k < 3; ++k)
            px[static_cast<size_t>((y * w + x) * 3 + k)] = static_cast<uint8_t>(
                128 + 90 * std::sin(fx * x * (k + 1) + fy * y) + c * 20 - 10);
      std::ofstream(d / "train" / fmt::format("c{}", c) / fmt::format("{:02}.jpg", i),
                    std::ios::binary)
          << test::jpeg_bytes(w, h, 3, px, 90, true);
    }
  }
  return d;
}

TEST(Stream, RandomResizedCropStreamsAsInRam) {
  const fs::path d = write_photo_tree("rrc");
  const Splits ram = load(d, 1 << 20, 3, true), st = load(d, 0, 3, true);
  EXPECT_NE(ram.pipeline.find("whole images for randomResizedCrop"), std::string::npos)
      << ram.pipeline;
  EXPECT_NE(ram.train.source->describe().find("decoded in RAM"), std::string::npos);
  EXPECT_NE(st.pipeline.find("streaming 20 images"), std::string::npos) << st.pipeline;
  Augment rrc;
  rrc.rrc = rrc.flip = true;
  Augment rrc_ra = rrc;
  rrc_ra.rand_augment = true;
  PipelineOptions& p = pipeline_options();
  const PipelineOptions saved = p;
  p.dct_scale = false;  // the streamed Loaders decode at full resolution
  for (int threads : {1, 3}) {
    expect_same_batches(ram.train, st.train, true, rrc, threads, true);
    expect_same_batches(ram.train, st.train, true, rrc_ra, threads, true);
  }
  // With DCT scaling the streamed crops come from 1/2..1/8-scale decodes: close, not equal.
  p.dct_scale = true;
  const Splits sc = load(d, 0, 3, true, true);
  Loader a(ram.train, 20, true, 11, rrc), b(sc.train, 20, true, 11, rrc);
  p = saved;
  double sum = 0, worst = 0;
  int64_t n = 0, differ = 0;
  for (int epoch = 0; epoch < 3; ++epoch) {
    a.start_epoch(epoch);
    b.start_epoch(epoch);
    Tensor xa, ya, xb, yb;
    a.batch(0, xa, ya);
    b.batch(0, xb, yb);
    for (int64_t i = 0; i < xa.numel(); ++i) {
      // Back to 8-bit levels: a normalised step is 1 / (255·std).
      const double lv = std::abs(xa.data<float>()[i] - xb.data<float>()[i]) * 255.0 * 0.224;
      sum += lv;
      worst = std::max(worst, lv);
      differ += lv > 0.5;
      ++n;
    }
  }
  // Measured on these images (periods down to ~15 px, harsher than photographs): mean 1.28
  // levels, worst 19.9; a full-resolution resize vs PIL is within 1 level.
  EXPECT_GT(differ, 0);  // some crops were large enough to scale
  EXPECT_LE(sum / static_cast<double>(n), 1.5);
  EXPECT_LE(worst, 24.0);
}

TEST(Stream, ImageNetFlatValStreamsAsInRam) {
  // ImageNet's layout: val/ flat with a labels file naming each image's class folder.
  const fs::path d = write_tree("flatval");
  std::ofstream labels(d / "val_labels.txt");
  for (int c = 0; c < 3; ++c)
    for (const auto& e : fs::directory_iterator(d / "val" / fmt::format("c{}", c))) {
      const std::string name = fmt::format("c{}_{}", c, e.path().filename().string());
      fs::rename(e.path(), d / "val" / name);
      labels << name << " c" << c << "\n";
    }
  labels.close();
  for (int c = 0; c < 3; ++c) fs::remove(d / "val" / fmt::format("c{}", c));
  const Splits ram = load(d, 1 << 20), st = load(d, 0);
  ASSERT_EQ(st.test.size(), 12);
  EXPECT_EQ(st.test.y.data<int32_t>()[11], 2);
  expect_same_batches(ram.test, st.test, false, Augment{}, 3);
}

TEST(Stream, BudgetChoosesThePath) {
  PipelineOptions& p = pipeline_options();
  const PipelineOptions saved = p;
  p.stream_allowed = true;
  p.memory_mb = 1;
  EXPECT_FALSE(choose_pipeline(1 << 20, 10).stream);
  const PipelineChoice over = choose_pipeline((1 << 20) + 1, 10);
  EXPECT_TRUE(over.stream);
  EXPECT_NE(over.line.find("over the budget 1 MiB, --data-memory"), std::string::npos)
      << over.line;
  p.stream_allowed = false;  // commands that read whole splits never stream
  EXPECT_FALSE(choose_pipeline(int64_t{1} << 40, 10).stream);
  p = saved;
  EXPECT_GE(default_data_memory_mb(), 1);
  EXPECT_GE(default_decode_threads(), 1);
}

TEST(Stream, CorruptFileIsNamedWhenItsBatchIsRead) {
  const fs::path d = write_tree("corrupt");
  const fs::path bad = d / "train" / "c1" / "01.jpg";
  const auto size = fs::file_size(bad);
  fs::resize_file(bad, size / 2);  // truncated mid-scan
  const Splits st = load(d, 0);    // listing does not decode: the load succeeds
  Loader ld(st.train, 64, false, 0);
  ld.set_decode_threads(3);
  Tensor x, y;
  try {
    ld.batch(0, x, y);
    FAIL() << "a truncated JPEG was decoded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(ld.set_decode_threads(0), Error);
}

}  // namespace
}  // namespace netspec::data
