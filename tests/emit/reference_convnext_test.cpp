// Reference equality (issue 7) for the zoo's ConvNeXt, ShuffleNetV2, SqueezeNet, DenseNet and
// GoogLeNet: torchvision's model with random weights and randomised BN statistics
// (tools/torchvision_reference.py) and netspec's eval module on the cpu executor give the same
// logits within max|Δ| <= 1e-4 · max|ref| on a 2x3x64x64 input with 10 classes. Skips without
// torchvision (Debian python3-torchvision).
#include "reference_util.h"

namespace netspec::reference {
namespace {

constexpr double kRelTol = 1e-4;

void expect_close(const RefResult& r) {
  std::cout << "[ reference ] " << r.str() << "\n";
  EXPECT_GT(r.max_abs_ref, 0) << r.str();
  EXPECT_LE(r.max_abs_diff, kRelTol * r.max_abs_ref) << r.str();
}

TEST(ReferenceConvNext, ConvNextTiny) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_close(compare_zoo_with_torchvision("convnext-tiny", "convnext_tiny"));
}

TEST(ReferenceConvNext, ShuffleNetV2) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_close(compare_zoo_with_torchvision("shufflenet-v2", "shufflenet_v2_x1_0"));
}

// SqueezeNet 1.1's pools are ceil_mode=True (the zoo's maxPool ceilMode).
TEST(ReferenceConvNext, SqueezeNet) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_close(compare_zoo_with_torchvision("squeezenet", "squeezenet1_1"));
}

TEST(ReferenceConvNext, DenseNet121) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_close(compare_zoo_with_torchvision("densenet121", "densenet121"));
}

// GoogLeNet: torchvision builds aux classifiers by default (unused in eval): their tensors are
// dropped from the file. Its max pools are ceil_mode=True (the zoo's ceilMode); at 64x64 the
// stride-2 pools see 32, 16 and 8 (even), where ceil and floor differ, so this checks them.
TEST(ReferenceConvNext, GoogLeNet) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  RefOptions o;
  TempDir dir;
  RefFiles f = run_torchvision_reference("googlenet", o, dir.path);
  auto& ts = f.weights.tensors;
  size_t before = ts.size();
  std::erase_if(ts, [](const auto& e) { return e.first.rfind("aux", 0) == 0; });
  EXPECT_GT(before, ts.size());
  expect_close(compare_eval(zoo_net("googlenet", o), f, o));
}

}  // namespace
}  // namespace netspec::reference
