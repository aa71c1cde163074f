// TTA: evaluate_tta equals the mean, over views v, of the eval module's logits on each sample
// cropped/flipped by hand from augment_draw(seed, epoch v, sample) as loader.h defines it (pixel
// (y, x) reads (y + dy - pad, (flip ? W-1-x : x) + dx - pad), black 0 outside), with a tail batch.
#include "train/tta.h"

#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "data/sample_source.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

TEST(Tta, MeanOfHandAugmentedViews) {
  SpecFile s = parse_spec(R"({"name": "t", "inputChannels": 1, "inputHeight": 8, "inputWidth": 8,
    "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 64, "out": 3}]})",
                          "t");
  const ParamTable t = build_param_table(s.net);
  auto be = exec::make_backend("cpu");
  const int64_t n = 10, b = 4;
  Evaluator ev(s.net, b, *be, &t);
  std::vector<int32_t> lab(n);
  for (int64_t i = 0; i < n; ++i) lab[i] = static_cast<int32_t>(i % 3);
  data::Dataset ds(test_util::uniform_noise({n, 1, 8, 8}, 5),
                   Tensor::from<int32_t>(DType::kI32, {n}, lab));
  const auto params = init_params(t, InitKind::he, 2);
  const data::Augment aug = data::Augment::standard();
  const int views = 3;
  const uint64_t seed = 9;
  EvalMetrics got = evaluate_tta(ev, params, {}, ds, aug, views, seed);

  const int64_t pad = aug.pad_for(8, 8);
  std::vector<double> mean(static_cast<size_t>(n * 3), 0.0);
  int64_t differ = 0;
  for (int v = 0; v < views; ++v)
    for (int64_t i = 0; i < n; ++i) {
      const data::AugmentDraw d = data::augment_draw(aug, seed, v, i, 8, 8);
      Tensor x(DType::kF32, {b, 1, 8, 8});
      for (int64_t y = 0; y < 8; ++y)
        for (int64_t q = 0; q < 8; ++q) {
          const int64_t sy = y + d.dy - pad, sx = (d.flip ? 7 - q : q) + d.dx - pad;
          const bool in = sy >= 0 && sy < 8 && sx >= 0 && sx < 8;
          x.data<float>()[y * 8 + q] = in ? ds.x.data<float>()[i * 64 + sy * 8 + sx] : 0.f;
          differ += x.data<float>()[y * 8 + q] != ds.x.data<float>()[i * 64 + y * 8 + q];
        }
      Tensor z = ev.logits(params, {}, x);
      for (int c = 0; c < 3; ++c) mean[i * 3 + c] += z.data<float>()[c] / views;
    }
  EXPECT_GT(differ, 100);  // the views are really augmented
  Scorer sc;
  for (int64_t i0 = 0; i0 < n; i0 += b) {
    const int64_t rows = std::min(b, n - i0);
    Tensor z(DType::kF32, {b, 3}), y(DType::kI32, {b});
    for (int64_t r = 0; r < rows; ++r) {
      for (int c = 0; c < 3; ++c)
        z.data<float>()[r * 3 + c] = static_cast<float>(mean[(i0 + r) * 3 + c]);
      y.data<int32_t>()[r] = lab[i0 + r];
    }
    sc.add(z, y, rows);
  }
  EvalMetrics want = sc.result();
  EXPECT_EQ(got.count, n);
  EXPECT_NEAR(got.loss, want.loss, 1e-5);
  EXPECT_EQ(got.top1, want.top1);
}

// Sample i is a byte pattern of i; samples in `bad` fail as a corrupt file would.
class TtaSource final : public data::SampleSource {
 public:
  TtaSource(int64_t n, std::set<int64_t> bad) : n_(n), bad_(std::move(bad)) {}
  int64_t size() const override { return n_; }
  void read(int64_t i, uint8_t* dst) const override {
    if (bad_.count(i)) fail("stream", "img{}.jpg: corrupt JPEG data", i);
    for (int64_t k = 0; k < 3 * 8 * 8; ++k) dst[k] = static_cast<uint8_t>((i * 97 + k * 13) % 253);
  }
  std::string describe() const override { return "tta pattern"; }

 private:
  int64_t n_;
  std::set<int64_t> bad_;
};

// --skip-bad-images on a streamed split: an unreadable sample is left out of every view (never
// replaced by another sample, which would score that one twice) and out of the scores; every
// other sample's mean logits are those of the split where it reads; without the flag the
// evaluation stops naming the file.
TEST(Tta, UnreadableStreamedSampleIsLeftOutOfEveryView) {
  SpecFile s = parse_spec(R"({"name": "t", "inputChannels": 3, "inputHeight": 8, "inputWidth": 8,
    "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 192, "out": 4}]})",
                          "t");
  const ParamTable t = build_param_table(s.net);
  auto be = exec::make_backend("cpu");
  const int64_t n = 11, b = 4, bad = 5;
  Evaluator ev(s.net, b, *be, &t);
  std::vector<int32_t> lab(n);
  for (int64_t i = 0; i < n; ++i) lab[i] = static_cast<int32_t>(i * 7 % 4);
  auto make = [&](std::set<int64_t> bad_set) {
    return data::streamed_dataset(std::make_shared<TtaSource>(n, std::move(bad_set)), lab, 3, 8, 8,
                                  data::kImageNetNorm);
  };
  const data::Dataset good = make({}), broken = make({bad});
  const auto params = init_params(t, InitKind::he, 3);
  const data::Augment aug = data::Augment::standard();
  const int views = 3;
  bool& flag = data::pipeline_options().skip_bad;
  const bool was = flag;
  flag = false;
  try {
    tta_logits(ev, params, {}, broken, aug, views, 4);
    FAIL() << "expected the unreadable sample to stop the evaluation";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("img5.jpg"), std::string::npos) << e.what();
  }
  flag = true;
  const TtaLogits want = tta_logits(ev, params, {}, good, aug, views, 4);
  const TtaLogits got = tta_logits(ev, params, {}, broken, aug, views, 4);
  const EvalMetrics m = evaluate_tta(ev, params, {}, broken, aug, views, 4);
  flag = was;
  ASSERT_EQ(got.per, 4);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(want.views_read[size_t(i)], views) << i;
    EXPECT_EQ(got.views_read[size_t(i)], i == bad ? 0 : views) << i;
    if (i == bad) continue;
    for (int64_t c = 0; c < 4; ++c)
      EXPECT_NEAR(got.mean[size_t(i * 4 + c)], want.mean[size_t(i * 4 + c)], 1e-5) << i << " " << c;
  }
  // The scores: the good split's mean logits of the other ten samples, scored in order.
  Scorer sc;
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i)
    if (i != bad) kept.push_back(i);
  for (size_t i0 = 0; i0 < kept.size(); i0 += b) {
    const size_t rows = std::min<size_t>(b, kept.size() - i0);
    Tensor z(DType::kF32, {b, 4}), y(DType::kI32, {b});
    for (size_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < 4; ++c)
        z.data<float>()[r * 4 + c] = static_cast<float>(want.mean[size_t(kept[i0 + r] * 4 + c)]);
      y.data<int32_t>()[r] = lab[size_t(kept[i0 + r])];
    }
    sc.add(z, y, int64_t(rows));
  }
  const EvalMetrics ref = sc.result();
  EXPECT_EQ(m.count, n - 1);
  EXPECT_EQ(m.skipped, 1);
  EXPECT_NE(m.skipped_first.find("img5.jpg"), std::string::npos) << m.skipped_first;
  EXPECT_EQ(m.top1, ref.top1);
  EXPECT_NEAR(m.loss, ref.loss, 1e-5);
}

}  // namespace
}  // namespace netspec::train

namespace netspec::train {
namespace {

// RandAugment / AutoAugment through the trainer on ui8 images: the run repeats bit for bit and
// differs from the run without them (the policy really reaches the batches).
TEST(AugTrain, RandAugmentAndAutoAugmentRunDeterministically) {
  const int64_t n = 48;
  Tensor x(DType::kUI8, {n, 3, 8, 8});
  std::vector<int32_t> lab(n);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(i * 53 % 256);
  for (int64_t i = 0; i < n; ++i) lab[i] = static_cast<int32_t>(i % 3);
  data::Splits sp;
  sp.train = data::Dataset(x, Tensor::from<int32_t>(DType::kI32, {n}, lab), {0.5f, 0.5f, 0.5f},
                           {0.25f, 0.25f, 0.25f});
  sp.test = sp.train;
  auto spec = [](bool ra, bool aa) {
    SpecFile s = parse_spec(R"({"name": "u", "inputChannels": 3, "inputHeight": 8, "inputWidth": 8,
      "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 192, "out": 3}]})",
                            "u");
    TrainConfig c;
    c.epochs = 1;
    c.batchSize = 16;
    c.augment = true;
    c.randAugment = ra;
    c.autoAugment = aa;
    c.seed = 5;
    s.train = c;
    return s;
  };
  TrainResult plain = run_training(spec(false, false), sp, {});
  for (auto [ra, aa] : {std::pair{true, false}, std::pair{false, true}}) {
    TrainResult a = run_training(spec(ra, aa), sp, {});
    TrainResult b = run_training(spec(ra, aa), sp, {});
    EXPECT_TRUE(test_util::same_bits(a.params, b.params)) << ra << aa;
    EXPECT_FALSE(test_util::same_bits(a.params, plain.params)) << ra << aa;
  }
}

}  // namespace
}  // namespace netspec::train
