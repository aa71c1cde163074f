// TrainConfig trainRes (RSB-A3's train/test resolution split): training at trainRes x trainRes
// equals, bit for bit, training the same net declared at that size on the split resized by
// data::resize_images (checked against PIL in tests/data/pil_oracle_test.cpp), while evaluation
// runs at the net's own size; nets whose parameters depend on the input size are refused.
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"
#include "data/image.h"
#include "spec/spec_json.h"
#include "spec/zoo.h"
#include "train/train_test_util.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

using test_util::uniform_noise;

// convBn 1->4 (stride 2) -> convBn 4->4 -> global average pool -> dense 4->10, 28x28 inputs.
SpecFile pooled_net(int res, int train_res) {
  SpecFile s = test_util::bn_spec(2, 16, false);
  s.net.inputHeight = s.net.inputWidth = res;
  s.train->trainRes = train_res;
  s.train->augment = true;  // random crop + flip run at the training size
  return s;
}

data::Splits splits() {  // 10 classes, a class-dependent brightness on noise
  data::Splits sp;
  auto make = [](int64_t n, uint64_t seed) {
    Tensor x = uniform_noise({n, 1, 28, 28}, seed);
    std::vector<int32_t> y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      y[size_t(i)] = static_cast<int32_t>(i % 10);
      for (int64_t j = 0; j < 28 * 28; ++j) x.data<float>()[i * 784 + j] += 0.2f * float(i % 10);
    }
    return data::Dataset(x, Tensor::from<int32_t>(DType::kI32, {n}, y));
  };
  sp.train = make(80, 1);
  sp.test = make(40, 2);
  return sp;
}

TEST(TrainRes, EqualsTheNetDeclaredAtTrainResOnResizedDataAndEvaluatesAtFullSize) {
  const data::Splits sp = splits();
  std::ostringstream log;
  TrainOptions o;
  o.log = &log;
  o.progress_every_s = -1;
  TrainResult a = run_training(pooled_net(28, 20), sp, o);
  EXPECT_NE(log.str().find("trainRes: training at 20x20, evaluating at 28x28"), std::string::npos)
      << log.str();
  ASSERT_EQ(a.epochs.size(), 2u);
  EXPECT_EQ(a.epochs.back().val.count, 40);  // evaluated on the 28x28 test split
  // The reference: the net declared at 20x20, its training split resized beforehand.
  data::Splits small = sp;
  small.train.x = data::resize_images(sp.train.x, 20, 20);
  small.test.x = data::resize_images(sp.test.x, 20, 20);
  TrainResult b = run_training(pooled_net(20, 0), small, {});
  EXPECT_TRUE(test_util::same_bits(a.params, b.params));
  // ...and not what training at 28x28 gives.
  TrainResult full = run_training(pooled_net(28, 0), sp, {});
  EXPECT_FALSE(test_util::same_bits(a.params, full.params));
}

TEST(TrainRes, NetsWhoseParametersDependOnTheInputSizeAreRefused) {
  SpecFile s = parse_spec(test_util::kSmallMlp);  // flatten -> dense 784 -> ...
  TrainConfig c;
  c.dataset = DatasetKind::fashionMnist;
  c.epochs = 1;
  c.batchSize = 16;
  c.trainRes = 20;
  s.train = c;
  try {
    run_training(s, splits(), {});
    FAIL() << "trainRes on a flatten->dense net was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("trainRes 20"), std::string::npos) << m;
    // dense's input features are the flattened 20x20 map: the error names the layer and both.
    EXPECT_NE(m.find("cannot run on 20x20 inputs: [layer 1 dense] input features (got 400, "
                     "expected 784)"),
              std::string::npos)
        << m;
  }
}

// A ViT declares its patch count (its position embedding has one row per patch): refused naming
// the layer and both counts.
TEST(TrainRes, AViTsPatchCountIsNamed) {
  SpecFile s = resolve_net("vit-cifar-tiny");
  s.train->trainRes = 16;
  s.train->epochs = 1;
  data::Splits sp;
  sp.train = data::Dataset(uniform_noise({8, 3, 32, 32}, 5),
                           Tensor::from<int32_t>(DType::kI32, {8}, {0, 1, 2, 3, 4, 5, 6, 7}));
  try {
    run_training(s, sp, {});
    FAIL() << "trainRes on a ViT was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("trainRes 16: the net cannot run on 16x16 inputs: [layer 0 patchEmbed] "
                     "nPatches (got 64, expected 16)"),
              std::string::npos)
        << m;
  }
}

}  // namespace
}  // namespace netspec::train
