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

// SqueezeNet 1.1's pools are ceil_mode=True; at 64 (and 224) every pool input is odd
// (64 -> 31 -> 15 -> 7 -> 3), where ceil and floor agree, so the zoo's `valid` pools match.
TEST(ReferenceConvNext, SqueezeNet) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_close(compare_zoo_with_torchvision("squeezenet", "squeezenet1_1"));
}

TEST(ReferenceConvNext, DenseNet121) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  expect_close(compare_zoo_with_torchvision("densenet121", "densenet121"));
}

// GoogLeNet: torchvision builds aux classifiers by default (unused in eval): their tensors are
// dropped from the file. Its stride-2 max pools are MaxPool2d(3, 2, ceil_mode=True), i.e. no
// low padding, which maxPool cannot express yet (the zoo's `same` + symmetric pads 1 on both
// sides: equal sizes, different windows). This check replaces pools 1-3 by `valid` ones and
// runs at 46x46, where their inputs (23, 11, 5) are odd so ceil = floor, and pool 4 (2x2/2)
// sees an even map (2), where its `same` is unpadded as in torchvision: it verifies the stem, every
// inception module (branch order, 3x3 "5x5" branch, stride-1 pool branch), BN eps 1e-3 and the
// head; not the zoo file's pools at 224.
TEST(ReferenceConvNext, GoogLeNetWithValidPools) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  RefOptions o;
  o.size = 46;
  TempDir dir;
  RefFiles f = run_torchvision_reference("googlenet", o, dir.path);
  auto& ts = f.weights.tensors;
  size_t before = ts.size();
  std::erase_if(ts, [](const auto& e) { return e.first.rfind("aux", 0) == 0; });
  EXPECT_GT(before, ts.size());
  NetSpec net = zoo_net("googlenet", o);
  int changed = 0;
  for (Layer& l : net.layers)
    if (auto* p = std::get_if<MaxPool>(&l); p && p->size == 3 && p->stride == 2) {
      p->pad = Padding::valid;
      ++changed;
    }
  EXPECT_EQ(changed, 3);
  expect_close(compare_eval(net, f, o));
}

}  // namespace
}  // namespace netspec::reference
