// The DDPM sample judge (sample_judge.h): confident fraction and class counts of hand-made
// logits, the [-1, 1] -> classifier-input mapping, and a 1-input classifier over a padded batch.
#include "tasks/diffusion/sample_judge.h"

#include <gtest/gtest.h>

#include <cmath>

#include "data/datasets.h"
#include "exec/backend.h"
#include "layers/param_table.h"

namespace netspec::train {
namespace {

TEST(SampleJudge, CountsConfidentSamplesAndClasses) {
  // Rows: [0, 0, 5] p2 = e^5/(2 + e^5) = 0.9867; [1, 1, 0] p0 = e/(2e + 1) = 0.42 (first max);
  // [3, 0, 0] p0 = e^3/(e^3 + 2) = 0.9094; the 4th row is padding (n = 3).
  Tensor l = Tensor::from<float>(DType::kF32, {4, 3}, {0, 0, 5, 1, 1, 0, 3, 0, 0, 9, 0, 0});
  JudgeResult r;
  judge_logits(l, 3, r);
  EXPECT_EQ(r.n, 3);
  EXPECT_EQ(r.confident, 2);
  EXPECT_EQ(r.top_class, (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(r.confident_class, (std::vector<int64_t>{1, 0, 1}));
  EXPECT_FALSE(r.every_class());
  EXPECT_EQ(r.summary(),
            "2/3 (66.7%) with p >= 0.9; top class counts 0:2 1:0 2:1 (confident 0:1 1:0 2:1); "
            "every class: no");
  r.p_min = 0.95;  // the third row (0.9094) no longer counts
  judge_logits(Tensor::from<float>(DType::kF32, {1, 3}, {0, 4, 0}), 1, r);  // p1 = 0.9647
  EXPECT_EQ(r.confident, 3);
  EXPECT_TRUE(r.every_class());
}

TEST(SampleJudge, MapsSamplesToTheClassifiersInput) {
  const data::Normalization nm = data::dataset_normalization(DatasetKind::fashionMnist);
  Tensor s = Tensor::from<float>(DType::kF32, {1, 1, 1, 4}, {-1, 0, 1, 3});
  Tensor x = judge_input(s, DatasetKind::fashionMnist);
  const double m = nm.mean[0], sd = nm.std[0];
  EXPECT_NEAR(x.data<float>()[0], (0 - m) / sd, 1e-6);
  EXPECT_NEAR(x.data<float>()[1], (0.5 - m) / sd, 1e-6);
  EXPECT_NEAR(x.data<float>()[2], (1 - m) / sd, 1e-6);
  EXPECT_NEAR(x.data<float>()[3], (1 - m) / sd, 1e-6);        // clamped to 1
  EXPECT_THROW(judge_input(s, DatasetKind::cifar10), Error);  // 3 channels expected
}

// logits = (-v, v) for the single normalised pixel v: p1 = 1/(1 + exp(-2v)). Batch 2, 3 samples.
TEST(SampleJudge, ClassifiesEverySampleInPaddedBatches) {
  NetSpec net = NetBuilder("judge").input(1, 1, 1).add(Flatten{}).add(Dense{1, 2}).build();
  ParamTable t = build_param_table(net);
  auto backend = exec::make_backend("ref");
  Evaluator ev(net, 2, *backend, &t);
  ASSERT_EQ(t.params.size(), 2u);
  std::vector<Tensor> params{Tensor::from<float>(DType::kF32, t.params[0].shape, {-1, 1}),
                             Tensor(DType::kF32, t.params[1].shape)};
  Tensor s = Tensor::from<float>(DType::kF32, {3, 1, 1, 1}, {-1, 1, 0});
  const JudgeResult r = judge_samples(ev, params, {}, s, DatasetKind::fashionMnist, 0.9);
  const data::Normalization nm = data::dataset_normalization(DatasetKind::fashionMnist);
  auto p1 = [&](double v01) { return 1 / (1 + std::exp(-2 * (v01 - nm.mean[0]) / nm.std[0])); };
  ASSERT_LT(1 - p1(0), 0.9);  // sample -1: class 0 at p 0.83, not confident
  ASSERT_GE(p1(1), 0.9);      // sample 1: class 1 at p 0.98
  ASSERT_LT(p1(0.5), 0.9);    // sample 0: class 1 at p 0.77
  EXPECT_EQ(r.n, 3);
  EXPECT_EQ(r.confident, 1);
  EXPECT_EQ(r.top_class, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r.confident_class, (std::vector<int64_t>{0, 1}));
}

}  // namespace
}  // namespace netspec::train
