// Reference equality (issue 7): the zoo's ResNets, MobileNets and EfficientNets load the weights
// of torchvision's model (random weights, randomised BN statistics: tools/torchvision_reference.py)
// and their eval logits on the cpu executor equal torchvision's (f64) within
// max|Δ| <= 1e-4 · max|ref| on a 2x3x64x64 input with 10 classes. Skips without torchvision.
#include "reference_util.h"

namespace netspec::reference {
namespace {

constexpr double kRelTol = 1e-4;

void expect_matches(const std::string& zoo, const std::string& tv_model, RefOptions o = {}) {
  RefResult r = compare_zoo_with_torchvision(zoo, tv_model, o);
  std::cout << "[ reference ] " << r.str() << "\n";
  EXPECT_GT(r.max_abs_ref, 0) << r.str();
  EXPECT_LE(r.max_abs_diff, kRelTol * r.max_abs_ref) << r.str();
}

TEST(ReferenceResnetMobile, Resnet18) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_matches("resnet18", "resnet18");
}

TEST(ReferenceResnetMobile, Resnet34) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_matches("resnet34", "resnet34");
}

TEST(ReferenceResnetMobile, Resnet50) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_matches("resnet50", "resnet50");
}

TEST(ReferenceResnetMobile, MobilenetV2) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_matches("mobilenet-v2", "mobilenet_v2");
}

// MobileNetV3 and EfficientNetV2 use BN eps 1e-3 in torchvision (bnEps in their zoo files);
// EfficientNet-B0 keeps nn.BatchNorm2d's 1e-5 (torchvision sets 1e-3 only for B5-B7 and V2).
TEST(ReferenceResnetMobile, MobilenetV3Large) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_matches("mobilenet-v3-large", "mobilenet_v3_large");
}

TEST(ReferenceResnetMobile, MobilenetV3Small) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_matches("mobilenet-v3-small", "mobilenet_v3_small");
}

TEST(ReferenceResnetMobile, EfficientnetB0) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_matches("efficientnet-b0", "efficientnet_b0");
}

TEST(ReferenceResnetMobile, EfficientnetV2S) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  // torch 1.13's f64 forward of this net costs ~25 s of CPU: its logits are taken in f32 (torch's
  // own f32 vs f64 gap here is ~4e-6 relative, far inside the tolerance).
  RefOptions o;
  o.f64_logits = false;
  expect_matches("efficientnet-v2-s", "efficientnet_v2_s", o);
}

// The loader refuses weights that do not fit: a ResNet-18 file into ResNet-34 names the
// first mismatching tensor instead of loading something misaligned.
TEST(ReferenceResnetMobile, MismatchedWeightsAreRefused) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  RefOptions o;
  TempDir dir;
  RefFiles f = run_torchvision_reference("resnet18", o, dir.path);
  ParamTable t = build_param_table(zoo_net("resnet34", o));
  try {
    eval_weights(t, f.weights);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parameter count"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace netspec::reference
