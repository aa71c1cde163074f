// Tasks: which task a spec selects, the fields one task reads refused by name on another, labels
// that do not fit the loss refused naming the field to change (before anything is compiled), and
// the regression task (floatTargetMse, target = input) trained and scored against a reconstruction
// MSE computed here from the eval module's outputs.
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"
#include "data/datasets.h"
#include "spec/zoo.h"
#include "tasks/task.h"
#include "train/config.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/trainer.h"
#include "../train/train_test_util.h"

namespace netspec::tasks {
namespace {

using train::test_util::uniform_noise;

TaskKind zoo_task(const std::string& net) {
  const SpecFile s = resolve_net(net);
  return task_kind(s.net, s.train.value_or(TrainConfig{}));
}

TEST(TaskKind, ZooNetsSelectTheirTask) {
  EXPECT_EQ(zoo_task("mlp"), TaskKind::classification);
  EXPECT_EQ(zoo_task("resnet18-cifar"), TaskKind::classification);
  EXPECT_EQ(zoo_task("unet"), TaskKind::segmentation);
  EXPECT_EQ(zoo_task("fpn-seg"), TaskKind::segmentation);
  EXPECT_EQ(zoo_task("fpn-det"), TaskKind::detection);
  EXPECT_EQ(zoo_task("detr"), TaskKind::detection);
  EXPECT_EQ(zoo_task("yolo-csp"), TaskKind::detection);
  EXPECT_EQ(zoo_task("ddpm-unet"), TaskKind::diffusion);
  EXPECT_EQ(zoo_task("tiny-gpt"), TaskKind::text);
  EXPECT_EQ(zoo_task("mamba-lm"), TaskKind::text);
  EXPECT_EQ(zoo_task("nerf"), TaskKind::nerf);
  EXPECT_EQ(zoo_task("protein-fold"), TaskKind::fold);
  TrainConfig c;
  c.lossKind = LossKind::floatTargetMse;
  EXPECT_EQ(task_kind(NetSpec{}, c), TaskKind::regression);
  c.ddpm = true;  // ddpm wins over the loss
  EXPECT_EQ(task_kind(NetSpec{}, c), TaskKind::diffusion);
  EXPECT_EQ(task_name(TaskKind::segmentation), "segmentation");
  // The dataset's descriptor decides for a class-index loss: token windows are text.
  TrainConfig t;
  t.dataset = DatasetKind::text;
  EXPECT_EQ(task_kind(NetSpec{}, t), TaskKind::text);
  t.dataset = DatasetKind::cifar10;
  EXPECT_EQ(task_kind(NetSpec{}, t), TaskKind::classification);
}

// The evaluation crop comes from the dataset's descriptor: image folders of any size are centre
// cropped by testCropRatio, fixed-size sets are taken whole.
TEST(TaskKind, EvalCropRatioFollowsTheDatasetDescriptor) {
  TrainConfig c;
  c.testCropRatio = 0.8;
  for (DatasetKind k : {DatasetKind::folder, DatasetKind::imagenet, DatasetKind::imagenette}) {
    c.dataset = k;
    EXPECT_EQ(train::eval_crop_ratio(c), 0.8) << enum_name(k);
  }
  for (DatasetKind k : {DatasetKind::mnist, DatasetKind::cifar10, DatasetKind::pets}) {
    c.dataset = k;
    EXPECT_EQ(train::eval_crop_ratio(c), 1.0) << enum_name(k);
  }
}

// The message of the error f throws ("" when it does not throw).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TaskFields, AFieldOfAnotherTaskIsRefusedByName) {
  TrainConfig c;
  c.fpnAffineProb = 0.5;
  std::string e = error_of([&] { refuse_foreign_fields(TaskKind::classification, c); });
  EXPECT_NE(e.find("fpnAffineProb is read by the detection task only"), std::string::npos) << e;
  EXPECT_NE(e.find("this run is classification"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { refuse_foreign_fields(TaskKind::detection, c); }), "");
  TrainConfig d;
  d.ddpmSteps = 50;
  e = error_of([&] { refuse_foreign_fields(TaskKind::segmentation, d); });
  EXPECT_NE(e.find("ddpmSteps is read by the diffusion task only"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { refuse_foreign_fields(TaskKind::diffusion, d); }), "");
  // Every owned field is refused when set on another task (a field missing from the list of its
  // owner would pass silently).
  for (const TaskFields& owned : task_owned_fields())
    for (const std::string& f : owned.fields) {
      TrainConfig x;
      bool found = false;
      x.visit([&](const char* name, auto& v, const char*) {
        if (name != f) return;
        found = true;
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>)
          v = !v;
        else if constexpr (std::is_same_v<T, DoubleList>)
          v = {1.0, 2.0};
        else if constexpr (std::is_arithmetic_v<T>)
          v = v + 1;
        else if constexpr (std::is_enum_v<T>)  // the next name (betaSchedule: cosine)
          v = static_cast<T>(static_cast<int>(v) + 1);
      });
      ASSERT_TRUE(found) << f << " is not a TrainConfig field";
      const TaskKind other =
          owned.task == TaskKind::classification ? TaskKind::text : TaskKind::classification;
      EXPECT_NE(error_of([&] { refuse_foreign_fields(other, x); }).find(f + " is read by"),
                std::string::npos)
          << f;
    }
}

// Fashion-MNIST-shaped noise: n images 1x8x8 with labels y (class indices or maps).
data::Splits noise_images(int64_t n, Tensor y_train, Tensor y_test) {
  data::Splits s;
  s.train = data::Dataset(uniform_noise({n, 1, 8, 8}, 1), std::move(y_train));
  s.test = data::Dataset(uniform_noise({n, 1, 8, 8}, 2), std::move(y_test));
  return s;
}

const char* kConvPair = R"({"name": "ae", "inputChannels": 1, "inputHeight": 8,
  "inputWidth": 8, "layers": [{"kind": "conv2d", "ic": 1, "oc": 4, "k": 3, "act": "relu"},
  {"kind": "conv2d", "ic": 4, "oc": 1, "k": 3, "act": "identity"}]})";

TEST(TaskChecks, FloatTargetMseOnAClassifierIsRefusedNamingTheShapes) {
  SpecFile spec = parse_spec(R"({"name": "m", "inputChannels": 1, "inputHeight": 8,
    "inputWidth": 8, "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 64, "out": 10}]})",
                             "m");
  TrainConfig c;
  c.lossKind = LossKind::floatTargetMse;
  c.epochs = 1;
  c.batchSize = 4;
  spec.train = c;
  data::Splits d = noise_images(8, Tensor(DType::kI32, {8}), Tensor(DType::kI32, {8}));
  const std::string e = error_of([&] { train::run_training(spec, d, {}); });
  EXPECT_NE(e.find("lossKind floatTargetMse (regression)"), std::string::npos) << e;
  EXPECT_NE(e.find("output 10 must equal the input sample"), std::string::npos) << e;
}

TEST(TaskChecks, AClassifierOnPerPixelLabelsIsRefusedNamingLossKind) {
  SpecFile spec = parse_spec(R"({"name": "m", "inputChannels": 1, "inputHeight": 8,
    "inputWidth": 8, "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 64, "out": 3}]})",
                             "m");
  TrainConfig c;
  c.dataset = DatasetKind::pets;
  c.epochs = 1;
  c.batchSize = 4;
  spec.train = c;
  data::Splits d = noise_images(8, Tensor(DType::kI32, {8, 8, 8}), Tensor(DType::kI32, {8, 8, 8}));
  const std::string e = error_of([&] { train::run_training(spec, d, {}); });
  EXPECT_NE(e.find("dataset pets has per-pixel labels"), std::string::npos) << e;
  EXPECT_NE(e.find("lossKind perPixelCE"), std::string::npos) << e;
  // A segmentation loss on class-index labels is refused the other way round.
  c.lossKind = LossKind::perPixelCE;
  spec = parse_spec(kConvPair, "ae");
  spec.train = c;
  d = noise_images(8, Tensor(DType::kI32, {8}), Tensor(DType::kI32, {8}));
  const std::string e2 = error_of([&] { train::run_training(spec, d, {}); });
  EXPECT_NE(e2.find("needs per-pixel labels i32 [N, H, W]"), std::string::npos) << e2;
}

// An autoencoder: conv 1->4->1 learns to reproduce its input. The reported validation loss is
// the mean of (output - input)² over every test value, recomputed here from the eval module.
TEST(RegressionTask, AutoencoderTrainsOnItsInputAndScoresTheReconstruction) {
  SpecFile spec = parse_spec(kConvPair, "ae");
  TrainConfig c;
  c.lossKind = LossKind::floatTargetMse;
  c.epochs = 3;
  c.batchSize = 8;
  c.learningRate = 0.01;
  spec.train = c;
  data::Splits d = noise_images(40, Tensor(DType::kI32, {40}), Tensor(DType::kI32, {40}));
  d.test = data::take_first(d.test, 20);  // a tail batch of 4 in the evaluation
  std::ostringstream log;
  train::TrainOptions o;
  o.log = &log;
  o.progress_every_s = -1;
  const train::TrainResult r = train::run_training(spec, d, o);
  ASSERT_EQ(r.epochs.size(), 3u);
  const train::EvalMetrics& v = r.epochs.back().val;
  EXPECT_TRUE(v.regression);
  EXPECT_EQ(v.count, 20 * 64);
  EXPECT_LT(v.loss, r.epochs.front().val.loss);  // it learns
  EXPECT_NE(log.str().find("(reconstruction mse)"), std::string::npos) << log.str();
  EXPECT_EQ(r.final_line.rfind("test loss ", 0), 0u) << r.final_line;
  // The same MSE from the eval module's outputs, batch by batch.
  auto be = exec::make_backend("cpu");
  train::Evaluator ev(spec.net, 8, *be);
  double sum = 0;
  for (int64_t b = 0; b < 20; b += 8) {
    Tensor x(DType::kF32, {8, 1, 8, 8});
    const int64_t n = std::min<int64_t>(8, 20 - b);
    std::copy_n(d.test.x.data<float>() + b * 64, n * 64, x.data<float>());
    const Tensor out = ev.logits(r.params, {}, x);
    for (int64_t i = 0; i < n * 64; ++i) {
      const double e = double(out.data<float>()[i]) - x.data<float>()[i];
      sum += e * e;
    }
  }
  EXPECT_NEAR(v.loss, sum / (20 * 64), 1e-9 * v.loss);
}

}  // namespace
}  // namespace netspec::tasks
