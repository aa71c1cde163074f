// Augmentation and the Prefetcher.
#include "data/loader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "core/error.h"
#include "data/data_test_util.h"

namespace netspec::data {
namespace {

// n images [C=2, 6, 6], f32, pixel value 1000·n + 100·c + 10·y + x (every pixel tells where it
// came from); black = -1 / -2 per channel; label = n.
Dataset images(int n) {
  Dataset ds{Tensor(DType::kF32, {n, 2, 6, 6}), Tensor(DType::kI32, {n}), {}, {}, {-1.f, -2.f}};
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < 2; ++c)
      for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 6; ++x)
          ds.x.data<float>()[((i * 2 + c) * 6 + y) * 6 + x] =
              static_cast<float>(1000 * i + 100 * c + 10 * y + x);
    ds.y.data<int32_t>()[i] = i;
  }
  return ds;
}

bool same(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(Augment, PadDefaultsAndDrawsAreSeededAndCoverTheRange) {
  Augment a = Augment::standard();
  EXPECT_EQ(a.pad_for(32, 32), 4);  // torchvision RandomCrop(32, padding=4)
  EXPECT_EQ(a.pad_for(28, 28), 4);
  EXPECT_EQ(a.pad_for(224, 224), 28);
  EXPECT_EQ((Augment{true, 2, false}.pad_for(32, 32)), 2);
  int flips = 0;
  std::vector<int> dys(9, 0);
  bool epoch_differs = false;
  for (int i = 0; i < 2000; ++i) {
    AugmentDraw d = augment_draw(a, 5, 3, i, 32, 32);
    AugmentDraw again = augment_draw(a, 5, 3, i, 32, 32);
    ASSERT_EQ(d.dy, again.dy);
    ASSERT_EQ(d.dx, again.dx);
    ASSERT_EQ(d.flip, again.flip);
    ASSERT_GE(d.dy, 0);
    ASSERT_LE(d.dy, 8);
    ASSERT_LE(d.dx, 8);
    ++dys[d.dy];
    flips += d.flip;
    AugmentDraw other = augment_draw(a, 5, 4, i, 32, 32);
    epoch_differs |= other.dy != d.dy || other.dx != d.dx || other.flip != d.flip;
  }
  EXPECT_TRUE(epoch_differs);
  EXPECT_GT(flips, 900);  // p = 0.5 over 2000 draws
  EXPECT_LT(flips, 1100);
  for (int k = 0; k < 9; ++k) EXPECT_GT(dys[k], 150) << k;  // uniform over 0..8 (~222 each)
}

TEST(Augment, CropsAndFlipsMovePixelsAsDrawn) {
  Dataset ds = images(12);
  const Augment a{true, 2, true};
  Loader ld(ds, 4, /*train=*/true, 11, a);
  ld.start_epoch(2);
  bool moved = false, flipped = false;
  for (int64_t b = 0; b < ld.num_batches(); ++b) {
    Tensor x, y;
    ASSERT_EQ(ld.batch(b, x, y), 4);
    for (int k = 0; k < 4; ++k) {
      const int n = y.data<int32_t>()[k];
      const AugmentDraw d = augment_draw(a, 11, 2, n, 6, 6);
      moved |= d.dy != 2 || d.dx != 2;
      flipped |= d.flip;
      for (int c = 0; c < 2; ++c)
        for (int yy = 0; yy < 6; ++yy)
          for (int xx = 0; xx < 6; ++xx) {
            const int64_t sy = yy + d.dy - 2, sx = (d.flip ? 5 - xx : xx) + d.dx - 2;
            const float want = sy < 0 || sy >= 6 || sx < 0 || sx >= 6
                                   ? (c == 0 ? -1.f : -2.f)
                                   : static_cast<float>(1000 * n + 100 * c + 10 * sy + sx);
            ASSERT_EQ(x.data<float>()[((k * 2 + c) * 6 + yy) * 6 + xx], want)
                << "sample " << n << " c " << c << " y " << yy << " x " << xx;
          }
    }
  }
  EXPECT_TRUE(moved);
  EXPECT_TRUE(flipped);
  // Flip only: row 0 of every sample is either the original or exactly its mirror.
  Loader fl(ds, 12, true, 1, Augment{false, 0, true});
  fl.start_epoch(0);
  Tensor x, y;
  fl.batch(0, x, y);
  int mirrored = 0;
  for (int k = 0; k < 12; ++k) {
    const int n = y.data<int32_t>()[k];
    const float first = x.data<float>()[k * 72];
    ASSERT_TRUE(first == 1000.f * n || first == 1000.f * n + 5) << first;
    mirrored += first == 1000.f * n + 5;
  }
  EXPECT_GT(mirrored, 0);
  EXPECT_LT(mirrored, 12);
}

// RandomResizedCrop on stored (fixed-size) images: with scale (1, 1) and the image's own aspect
// every draw is the whole image, resized to itself (identity taps), so each output row is the
// normalised image, mirrored exactly when the sample's flip draw says so; the default ranges
// give crops that differ per sample and per epoch, and are seeded.
TEST(Augment, RandomResizedCropOfStoredImages) {
  const int64_t n = 6, H = 20, W = 30;
  Dataset ds{Tensor(DType::kUI8, {n, 3, H, W}), Tensor(DType::kI32, {n}), {0.5f, 0.5f, 0.5f},
             {0.25f, 0.25f, 0.25f}};
  for (int64_t i = 0; i < ds.x.numel(); ++i)
    ds.x.data<uint8_t>()[i] = static_cast<uint8_t>((i * 37 + i / 7) % 256);
  for (int64_t i = 0; i < n; ++i) ds.y.data<int32_t>()[i] = static_cast<int32_t>(i);
  Augment whole;
  whole.rrc = whole.flip = true;
  whole.rrc_params = {1.0, 1.0, 1.5, 1.5};
  Loader ld(ds, n, true, 5, whole);
  ld.start_epoch(0);
  Tensor x, y;
  ld.batch(0, x, y);
  int flips = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t s = y.data<int32_t>()[k];
    const bool flip = augment_draw(whole, 5, 0, s, H, W).flip;
    flips += flip;
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t r = 0; r < H; ++r)
        for (int64_t q = 0; q < W; ++q) {
          const uint8_t v = ds.x.data<uint8_t>()[((s * 3 + c) * H + r) * W + (flip ? W - 1 - q : q)];
          ASSERT_EQ(x.data<float>()[((k * 3 + c) * H + r) * W + q], (v / 255.f - 0.5f) / 0.25f)
              << "sample " << s << " flip " << flip;
        }
  }
  EXPECT_GT(flips, 0);
  EXPECT_LT(flips, n);
  // Default ranges: seeded (the same twice), different across epochs.
  Augment rrc;
  rrc.rrc = rrc.flip = true;
  Loader a(ds, n, true, 5, rrc), b(ds, n, true, 5, rrc);
  Tensor xa, ya, xb, yb, xc, yc;
  a.start_epoch(1);
  b.start_epoch(1);
  a.batch(0, xa, ya);
  b.batch(0, xb, yb);
  EXPECT_EQ(0, std::memcmp(xa.raw(), xb.raw(), xa.nbytes()));
  b.start_epoch(2);
  b.batch(0, xc, yc);
  EXPECT_NE(0, std::memcmp(xa.raw(), xc.raw(), xa.nbytes()));
  // f32 storage cannot be crop-resized as bytes: refused by name.
  Dataset f{Tensor(DType::kF32, {n, 3, H, W}), ds.y};
  EXPECT_THROW(Loader(f, 2, true, 0, rrc), Error);
}

TEST(Augment, RepeatsBitForBitAndLeavesEvaluationAlone) {
  Dataset ds = images(12);
  Loader a(ds, 4, true, 9, Augment::standard()), b(ds, 4, true, 9, Augment::standard());
  Loader other_seed(ds, 4, true, 10, Augment::standard());
  a.start_epoch(1);
  b.start_epoch(1);
  other_seed.start_epoch(1);
  bool differs = false;
  for (int64_t i = 0; i < a.num_batches(); ++i) {
    Tensor xa, ya, xb, yb, xo, yo;
    a.batch(i, xa, ya);
    b.batch(i, xb, yb);
    other_seed.batch(i, xo, yo);
    EXPECT_TRUE(same(xa, xb));
    EXPECT_TRUE(same(ya, yb));
    differs |= !same(xa, xo);
  }
  EXPECT_TRUE(differs);
  Loader ev(ds, 5, /*train=*/false, 9, Augment::standard());
  ev.start_epoch(4);
  Tensor x, y;
  ev.batch(0, x, y);
  EXPECT_EQ(std::memcmp(x.raw(), ds.x.raw(), x.nbytes()), 0);  // untouched, in order

  // ui8 storage: padding is a black pixel after normalisation, (0 - mean) / std.
  Dataset u{Tensor(DType::kUI8, {4, 1, 2, 2}), Tensor(DType::kI32, {4}), {0.5f}, {0.25f}, {}};
  std::fill(u.x.data<uint8_t>(), u.x.data<uint8_t>() + 16, uint8_t{255});
  Loader lu(u, 4, true, 0, Augment{true, 1, false});
  lu.start_epoch(0);
  lu.batch(0, x, y);
  for (int64_t i = 0; i < x.numel(); ++i) {
    float v = x.data<float>()[i];
    ASSERT_TRUE(v == 2.f || v == -2.f) << v;  // 255 -> (1 - .5)/.25, pad -> -.5/.25
  }
  // Token windows cannot be cropped: refused, not silently skipped.
  Dataset t{Tensor(DType::kI32, {4, 8}), Tensor(DType::kI32, {4, 8}), {}, {}, {}};
  std::string e = test::error_of([&] { Loader(t, 2, true, 0, Augment::standard()); });
  EXPECT_NE(e.find("augmentation needs images [N, C, H, W] (got tensor<4x8xi32>)"),
            std::string::npos)
      << e;
}

// A split the data does not have is an empty Dataset{} (a flat image folder's test split):
// named as empty, not as "label rows differ from sample count (got 0, expected 0)" (issue 39).
TEST(Loader, AnEmptySplitIsNamedAsEmpty) {
  const std::string e = test::error_of([] { Loader(Dataset{}, 4, false, 0); });
  EXPECT_NE(e.find("[loader] the split is empty (got no samples"), std::string::npos) << e;
  Dataset bad{Tensor(DType::kF32, {3, 2}), Tensor(DType::kI32, {2}), {}, {}, {}};
  const std::string b = test::error_of([&] { Loader(bad, 4, false, 0); });
  EXPECT_NE(b.find("label rows differ from sample count (got 2, expected 3)"), std::string::npos)
      << b;
}

// Every batch of `ld` for `epoch`, assembled synchronously.
std::vector<Batch> sync_batches(Loader& ld, int64_t epoch) {
  ld.start_epoch(epoch);
  std::vector<Batch> out(static_cast<size_t>(ld.num_batches()));
  for (int64_t i = 0; i < ld.num_batches(); ++i) {
    out[i].index = i;
    out[i].valid = ld.batch(i, out[i].x, out[i].y);
  }
  return out;
}

TEST(Prefetcher, SameBatchesAsTheSynchronousLoader) {
  Dataset ds = images(23);
  for (bool train : {true, false}) {
    Loader ld(ds, 4, train, 3, Augment::standard());
    Loader ref(ds, 4, train, 3, Augment::standard());
    Prefetcher pf(ld, 2);
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      std::vector<Batch> want = sync_batches(ref, epoch);
      pf.start_epoch(epoch);
      Batch b;
      size_t k = 0;
      while (pf.next(b)) {
        ASSERT_LT(k, want.size());
        EXPECT_EQ(b.index, want[k].index);
        EXPECT_EQ(b.valid, want[k].valid);
        EXPECT_TRUE(same(b.x, want[k].x)) << "epoch " << epoch << " batch " << k;
        EXPECT_TRUE(same(b.y, want[k].y));
        ++k;
      }
      EXPECT_EQ(k, want.size());
      EXPECT_EQ(k, 6u);  // ceil(23 / 4): the tail of 3 in training too
      // Training's tail is a [3, ...] batch; evaluation's is zero-padded to [4, ...].
      EXPECT_EQ(want.back().valid, 3);
      EXPECT_EQ(want.back().x.shape()[0], train ? 3 : 4);
      EXPECT_FALSE(pf.next(b));  // stays at the end
    }
  }
}

TEST(Prefetcher, WorksAheadOfTheCaller) {
  Dataset ds = images(40);
  Loader ld(ds, 4, true, 0, Augment::standard());
  Prefetcher pf(ld, 3);
  pf.start_epoch(0);
  Batch b;
  ASSERT_TRUE(pf.next(b));
  // While the caller holds batch 0, batches 1..3 get assembled (bounded by depth = 3).
  for (int i = 0; i < 2000 && pf.ready() < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(pf.ready(), 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(pf.ready(), 3);  // and no further
}

TEST(Prefetcher, StopsCleanlyMidEpoch) {
  Dataset ds = images(64);
  Loader ld(ds, 2, true, 0, Augment::standard());
  for (int depth : {1, 3}) {
    auto pf = std::make_unique<Prefetcher>(ld, depth);
    pf->start_epoch(0);
    Batch b;
    ASSERT_TRUE(pf->next(b));
    pf->start_epoch(1);  // abandons epoch 0 mid-way
    ASSERT_TRUE(pf->next(b));
    EXPECT_EQ(b.index, 0);
    pf.reset();  // worker blocked on a full queue: must wake, exit and join
  }
  { Prefetcher never_started(ld); }
  std::string e = test::error_of([&] { Prefetcher(ld, 0); });
  EXPECT_NE(e.find("depth must be >= 1"), std::string::npos) << e;
}

}  // namespace
}  // namespace netspec::data
