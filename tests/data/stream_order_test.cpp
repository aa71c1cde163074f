// The streamed training order (data/loader.h): the global sample order of every epoch hashes the
// same for 1, 2 and 4 processes (each decoding only its rows, set_shard) and 1, 2 or 3 decode
// threads, with each sample decoded once per epoch over all processes; a Prefetcher started at
// batch b (a mid-epoch resume) gives the uninterrupted run's batches from b on and decodes nothing
// before it; --skip-bad-images replaces an unreadable training sample by the next one of the
// order, deterministically, and counts it; an unreadable evaluation sample is left out (the rows
// read equal those of the split without it), counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "data/loader.h"
#include "data/sample_source.h"

namespace netspec::data {
namespace {

constexpr int64_t kC = 3, kH = 6, kW = 6;

// Sample i's pixels are a pattern of i; reads are counted per sample; samples in `bad` fail as
// a corrupt file would, naming it.
class PatternSource final : public SampleSource {
 public:
  PatternSource(int64_t n, std::set<int64_t> bad = {})
      : n_(n), bad_(std::move(bad)), reads_(static_cast<size_t>(n)) {}
  int64_t size() const override { return n_; }
  void read(int64_t i, uint8_t* dst) const override {
    reads_[static_cast<size_t>(i)]++;
    if (bad_.count(i)) fail("stream", "img{}.jpg: corrupt JPEG data", i);
    for (int64_t k = 0; k < kC * kH * kW; ++k)
      dst[k] = static_cast<uint8_t>((i * 131 + k * 7) % 251);
  }
  std::string describe() const override { return "pattern"; }
  int64_t reads(int64_t i) const { return reads_[static_cast<size_t>(i)]; }
  int64_t total_reads() const {
    int64_t t = 0;
    for (const auto& r : reads_) t += r;
    return t;
  }

 private:
  int64_t n_;
  std::set<int64_t> bad_;
  mutable std::vector<std::atomic<int64_t>> reads_;
};

Dataset streamed(const std::shared_ptr<PatternSource>& src) {
  std::vector<int32_t> labels(static_cast<size_t>(src->size()));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>(i % 10);
  return streamed_dataset(src, labels, kC, kH, kW, kImageNetNorm);
}

uint64_t mix(uint64_t h, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) h = splitmix64(h ^ b[i]);
  return h;
}

// The hash of two epochs' global batches (pixels and labels, row by row) assembled from the
// rows each of `world` processes decodes; reads per epoch are checked to be exactly N.
uint64_t order_hash(int64_t n, int64_t batch, int world, int threads) {
  uint64_t h = 0;
  std::vector<std::shared_ptr<PatternSource>> srcs;
  std::vector<Dataset> sets;
  for (int r = 0; r < world; ++r) {
    srcs.push_back(std::make_shared<PatternSource>(n));
    sets.push_back(streamed(srcs.back()));
  }
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::vector<Batch>> per_rank(static_cast<size_t>(world));
    std::vector<std::vector<std::pair<int64_t, int64_t>>> owned(static_cast<size_t>(world));
    for (int r = 0; r < world; ++r) {
      Loader ld(sets[static_cast<size_t>(r)], batch, true, 42, Augment::standard());
      ld.set_decode_threads(threads);
      ld.set_shard(r, 1, world);
      Prefetcher pf(ld, 3);
      pf.start_epoch(epoch);
      for (Batch b; pf.next(b);) {
        owned[static_cast<size_t>(r)].push_back(ld.own_rows(b.index));  // rows rank r decoded
        per_rank[static_cast<size_t>(r)].push_back(std::move(b));
      }
    }
    const size_t nb = per_rank[0].size();
    for (size_t i = 0; i < nb; ++i) {
      const Tensor& y0 = per_rank[0][i].y;
      const int64_t rows = y0.shape()[0], row = kC * kH * kW;
      const int64_t kept = rows - rows % world;  // what the stepper trains
      for (int r = 0; r < world; ++r) {
        const Batch& b = per_rank[static_cast<size_t>(r)][i];
        EXPECT_TRUE(b.y.shape() == y0.shape() &&  // every label, on every rank
                    std::memcmp(b.y.raw(), y0.raw(), y0.nbytes()) == 0);
        const auto [lo, hi] = owned[static_cast<size_t>(r)][i];
        EXPECT_EQ(lo, r * kept / world);
        EXPECT_EQ(hi, (r + 1) * kept / world);
        h = mix(h, b.x.data<float>() + lo * row, static_cast<size_t>((hi - lo) * row) * 4);
      }
      h = mix(h, y0.raw(), static_cast<size_t>(kept) * 4);
    }
    int64_t reads = 0;
    for (const auto& s : srcs) reads += s->total_reads();
    EXPECT_EQ(reads, (epoch + 1) * (n - (n % batch) % world)) << "world " << world;
  }
  return h;
}

TEST(StreamOrder, GlobalOrderHashIsTheSameForAnyWorldSizeAndThreadCount) {
  // 1004 samples, batch 16: the tail batch has 12 rows, which 1, 2 and 4 replicas all divide.
  const uint64_t want = order_hash(1004, 16, 1, 1);
  for (int world : {1, 2, 4})
    for (int threads : {1, 2, 3})
      EXPECT_EQ(order_hash(1004, 16, world, threads), want)
          << "world " << world << ", " << threads << " threads";
  EXPECT_NE(order_hash(1004, 16, 1, 1), order_hash(1000, 16, 1, 1));  // the hash sees the data
}

TEST(StreamOrder, EpochsArePermutationsOfTheWholeSet) {
  auto src = std::make_shared<PatternSource>(100);
  Dataset ds = streamed(src);
  Loader ld(ds, 7, true, 5);
  ld.set_decode_threads(2);
  ld.start_epoch(0);
  const std::vector<int64_t> e0 = ld.order();
  ld.start_epoch(1);
  const std::vector<int64_t> e1 = ld.order();
  EXPECT_NE(e0, e1);
  std::set<int64_t> all(e1.begin(), e1.end());
  EXPECT_EQ(all.size(), 100u);
  EXPECT_EQ(*all.rbegin(), 99);
}

TEST(StreamOrder, ResumeAtABatchReadsNothingBeforeIt) {
  auto full_src = std::make_shared<PatternSource>(200);
  Dataset full_ds = streamed(full_src);
  Loader full(full_ds, 8, true, 9, Augment::standard());
  full.set_decode_threads(2);
  Prefetcher pf(full);
  pf.start_epoch(3);
  std::vector<Batch> all;
  for (Batch b; pf.next(b);) all.push_back(std::move(b));
  ASSERT_EQ(all.size(), 25u);

  auto src = std::make_shared<PatternSource>(200);
  Dataset ds = streamed(src);
  Loader ld(ds, 8, true, 9, Augment::standard());
  ld.set_decode_threads(3);
  Prefetcher resumed(ld);
  resumed.start_epoch(3, 11);
  size_t i = 11;
  for (Batch b; resumed.next(b); ++i) {
    ASSERT_LT(i, all.size());
    EXPECT_EQ(b.index, static_cast<int64_t>(i));
    EXPECT_EQ(std::memcmp(b.x.raw(), all[i].x.raw(), b.x.nbytes()), 0) << "batch " << i;
    EXPECT_EQ(std::memcmp(b.y.raw(), all[i].y.raw(), b.y.nbytes()), 0) << "batch " << i;
  }
  EXPECT_EQ(i, all.size());
  // The samples of batches 0..10 were never decoded; every later one once.
  for (int64_t p = 0; p < 200; ++p)
    EXPECT_EQ(src->reads(ld.order()[static_cast<size_t>(p)]), p < 88 ? 0 : 1) << "position " << p;
  EXPECT_THROW(resumed.start_epoch(3, 26), Error);
}

TEST(StreamOrder, BadSampleStopsOrIsReplacedByTheNextOne) {
  const std::set<int64_t> bad = {17, 18, 60};
  auto good_src = std::make_shared<PatternSource>(90);
  Dataset good = streamed(good_src);
  Loader ref(good, 10, true, 3);
  ref.set_decode_threads(1);
  ref.start_epoch(1);

  // Off: the first batch holding one fails, naming the file.
  auto src = std::make_shared<PatternSource>(90, bad);
  Dataset ds = streamed(src);
  {
    Loader ld(ds, 10, true, 3);
    ld.set_decode_threads(2);
    ld.start_epoch(1);
    std::string what;
    for (int64_t i = 0; i < ld.num_batches() && what.empty(); ++i) {
      Tensor x, y;
      try {
        ld.batch(i, x, y);
      } catch (const Error& e) {
        what = e.what();
      }
    }
    EXPECT_NE(what.find("corrupt JPEG data"), std::string::npos) << what;
    EXPECT_NE(what.find(".jpg"), std::string::npos) << what;
  }
  // On: the batch keeps its size; position p holds the sample of the next readable position,
  // the same for 1 and 3 threads; 3 counted per epoch.
  std::vector<Tensor> xs1;
  for (int threads : {1, 3}) {
    Loader ld(ds, 10, true, 3);
    ld.set_decode_threads(threads);
    ld.set_skip_bad(true);
    ld.start_epoch(1);
    ASSERT_EQ(ld.order(), ref.order());
    const auto& order = ld.order();
    for (int64_t i = 0; i < ld.num_batches(); ++i) {
      Tensor x, y, rx, ry;
      ASSERT_EQ(ld.batch(i, x, y), 10);
      const int64_t row = kC * kH * kW;
      for (int64_t k = 0; k < 10; ++k) {
        int64_t p = i * 10 + k;
        while (bad.count(order[static_cast<size_t>(p % 90)])) ++p;  // the next readable one
        ref.batch(p % 90 / 10, rx, ry);
        const int64_t rk = p % 90 % 10;
        EXPECT_EQ(y.data<int32_t>()[k], ry.data<int32_t>()[rk]) << "position " << i * 10 + k;
        EXPECT_EQ(std::memcmp(x.data<float>() + k * row, rx.data<float>() + rk * row, row * 4), 0);
      }
      if (threads == 1)
        xs1.push_back(x);
      else
        EXPECT_EQ(std::memcmp(x.raw(), xs1[static_cast<size_t>(i)].raw(), x.nbytes()), 0);
    }
    const Loader::Skipped sk = ld.skipped();
    EXPECT_EQ(sk.count, 3);
    EXPECT_NE(sk.first.find("corrupt JPEG data"), std::string::npos) << sk.first;
    ld.start_epoch(2);
    EXPECT_EQ(ld.skipped().count, 0);
  }
}

// Evaluation with --skip-bad-images: an unreadable sample is left out, never replaced; the rows
// after it move up, the freed rows are zero, and every row read is the sample the split without
// the bad ones has (pixels and label), for 1 and 3 decode threads.
TEST(StreamOrder, EvaluationLeavesUnreadableSamplesOut) {
  const std::set<int64_t> bad = {3, 10, 11, 29, 32, 33, 34, 35};  // 32..35: a whole batch's rows
  auto src = std::make_shared<PatternSource>(38, bad);
  Dataset ds = streamed(src);
  auto good_src = std::make_shared<PatternSource>(38);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < 38; ++i)
    if (!bad.count(i)) keep.push_back(i);
  Dataset ref_ds = take_rows(streamed(good_src), keep);  // the split with the bad files removed
  Loader ref(ref_ds, 1, false, 0);                       // batch j: the j-th good sample
  ref.set_decode_threads(1);
  ref.start_epoch(0);
  // Off: the first batch fails naming sample 3's file.
  {
    Loader ld(ds, 8, false, 0);
    ld.start_epoch(0);
    Tensor x, y;
    std::string what = "(scored)";
    try {
      ld.batch(0, x, y);
    } catch (const Error& e) {
      what = e.what();
    }
    EXPECT_NE(what.find("img3.jpg: corrupt JPEG data"), std::string::npos) << what;
  }
  const int64_t row = kC * kH * kW;
  for (int threads : {1, 3}) {
    Loader ld(ds, 8, false, 0);
    ld.set_decode_threads(threads);
    ld.set_skip_bad(true);
    ld.start_epoch(0);
    ASSERT_EQ(ld.num_batches(), 5);
    std::vector<int64_t> seen;
    for (int64_t b = 0; b < ld.num_batches(); ++b) {
      Tensor x, y, rx, ry;
      std::vector<int64_t> rows;
      const int64_t n = ld.batch(b, x, y, &rows);
      std::vector<int64_t> want;  // the good samples of positions [8b, 8b + 8)
      for (int64_t s = 8 * b; s < std::min<int64_t>(38, 8 * b + 8); ++s)
        if (!bad.count(s)) want.push_back(s);
      ASSERT_EQ(n, static_cast<int64_t>(want.size())) << "batch " << b;
      EXPECT_EQ(rows, want) << "batch " << b;
      ASSERT_EQ(x.shape()[0], 8);  // the eval module's fixed batch
      for (int64_t k = 0; k < n; ++k) {
        const auto j = std::find(keep.begin(), keep.end(), want[size_t(k)]) - keep.begin();
        ref.batch(j, rx, ry);
        EXPECT_EQ(y.data<int32_t>()[k], ry.data<int32_t>()[0]) << "batch " << b << " row " << k;
        EXPECT_EQ(y.data<int32_t>()[k], static_cast<int32_t>(want[size_t(k)] % 10));
        EXPECT_EQ(std::memcmp(x.data<float>() + k * row, rx.data<float>(), row * 4), 0)
            << "batch " << b << " row " << k;
      }
      for (int64_t k = n; k < 8; ++k) {  // freed and padded rows: zero, as a padded tail
        EXPECT_EQ(y.data<int32_t>()[k], 0) << "batch " << b << " row " << k;
        for (int64_t e = 0; e < row; ++e) ASSERT_EQ(x.data<float>()[k * row + e], 0.f);
      }
      seen.insert(seen.end(), rows.begin(), rows.end());
    }
    EXPECT_EQ(seen, keep);  // each readable sample once, none twice
    const Loader::Skipped sk = ld.skipped();
    EXPECT_EQ(sk.count, 8);
    EXPECT_NE(sk.first.find("img3.jpg"), std::string::npos) << sk.first;  // the first by position
  }
  // In RAM (no source): the rows are the order's, and nothing is left out.
  Dataset ram = ref_ds;
  std::vector<uint8_t> px(static_cast<size_t>(keep.size() * row));
  for (size_t j = 0; j < keep.size(); ++j) good_src->read(keep[j], px.data() + j * row);
  ram.x = Tensor::from<uint8_t>(DType::kUI8, {int64_t(keep.size()), kC, kH, kW}, px);
  ram.source = nullptr;
  Loader in_ram(ram, 8, false, 0);
  in_ram.set_skip_bad(true);
  in_ram.start_epoch(0);
  Tensor x, y;
  std::vector<int64_t> rows;
  EXPECT_EQ(in_ram.batch(3, x, y, &rows), 6);
  EXPECT_EQ(rows, (std::vector<int64_t>{24, 25, 26, 27, 28, 29}));
}

}  // namespace
}  // namespace netspec::data
