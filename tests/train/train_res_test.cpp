// TrainConfig trainRes (RSB-A3's train/test resolution split): training at trainRes x trainRes
// equals, bit for bit, training the same net declared at that size on the split resized by
// data::resize_images (checked against PIL in tests/data/pil_oracle_test.cpp), while evaluation
// runs at the net's own size; nets whose parameters depend on the input size are refused. A
// streamed image folder and random-resized crops give trainRes-sized batches, in RAM as streamed.
#include "train/train_res.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/error.h"
#include "data/image.h"
#include "data/image_fixture.h"
#include "data/loader.h"
#include "data/own_data.h"
#include "data/sample_source.h"
#include "layers/param_table.h"
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

// An image folder of smooth JPEGs and PNGs of 20-70 px, 3 classes.
std::filesystem::path write_folder(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / ("ns_tres_" + name);
  fs::remove_all(d);
  std::mt19937 r(9);
  for (int c = 0; c < 3; ++c) {
    fs::create_directories(d / "train" / fmt::format("c{}", c));
    for (int i = 0; i < 6; ++i) {
      const int w = 20 + static_cast<int>(r() % 50), h = 20 + static_cast<int>(r() % 50);
      std::vector<uint8_t> px(static_cast<size_t>(w * h * 3));
      for (size_t k = 0; k < px.size(); ++k)
        px[k] = static_cast<uint8_t>((k / 3 % static_cast<size_t>(w)) * 3 + c * 50 + r() % 30);
      const fs::path base = d / "train" / fmt::format("c{}", c) / fmt::format("{:02}", i);
      if (i % 3 == 0)
        test::write_png(base.string() + ".png", w, h, PNG_FORMAT_RGB, px);
      else
        std::ofstream(base.string() + ".jpg", std::ios::binary) << test::jpeg_bytes(w, h, 3, px);
    }
  }
  return d;
}

// A folder loaded at the net's 1x16x16 (gray), in RAM or streamed (full-resolution decodes).
data::Splits load_folder(const std::filesystem::path& d, bool stream, bool whole) {
  data::PipelineOptions& p = data::pipeline_options();
  const data::PipelineOptions saved = p;
  p.stream_allowed = true;
  p.memory_mb = stream ? 0 : 1 << 20;
  p.dct_scale = false;
  data::Splits s = data::load_image_folder_dataset(d.string(), 1, 16, 16, 0, 1.0, whole);
  p = saved;
  return s;
}

// trainRes on a streamed split: each sample resized to trainRes as it is read, the bytes of the
// in-RAM path's resize; with randomResizedCrop (whole images, in RAM or streamed) the crops are
// rendered at trainRes. Batches [B, 1, 10, 10], equal bit for bit without DCT scaling.
TEST(TrainRes, StreamedSplitsAndRandomResizedCropsAreAtTrainRes) {
  const std::filesystem::path d = write_folder("batches");
  const SpecFile s = pooled_net(16, 10);
  const ParamTable table = build_param_table(s.net);
  data::PipelineOptions& p = data::pipeline_options();
  const data::PipelineOptions saved = p;
  p.dct_scale = false;  // the streamed Loaders decode at full resolution
  for (const bool whole : {false, true}) {
    const data::Splits ram = load_folder(d, false, whole), st = load_folder(d, true, whole);
    ASSERT_EQ(st.train.size(), 18);
    ASSERT_TRUE(st.train.streamed());
    const auto a = train_resolution(s.net, table, *s.train, ram.train);
    const auto b = train_resolution(s.net, table, *s.train, st.train);
    ASSERT_TRUE(a && b);
    data::Augment aug = data::Augment::standard();
    if (whole) {
      aug.rrc = true;
      aug.crop = false;
    } else {  // the in-RAM split is the stored one resized by resize_images
      EXPECT_TRUE(test_util::same_bits({a->train.x}, {data::resize_images(ram.train.x, 10, 10)}));
    }
    data::Loader la(a->train, 8, true, 5, aug), lb(b->train, 8, true, 5, aug);
    for (int epoch = 0; epoch < 2; ++epoch) {
      la.start_epoch(epoch);
      lb.start_epoch(epoch);
      for (int64_t i = 0; i < la.num_batches(); ++i) {
        Tensor xa, ya, xb, yb;
        const int64_t n = la.batch(i, xa, ya);
        EXPECT_EQ(lb.batch(i, xb, yb), n);
        EXPECT_EQ(xa.shape(), (Shape{n, 1, 10, 10}));
        EXPECT_TRUE(test_util::same_bits({xa, ya}, {xb, yb})) << whole << " batch " << i;
      }
    }
  }
  p = saved;
}

}  // namespace
}  // namespace netspec::train
