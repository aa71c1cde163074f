// Reference equality against timm 1.0.31 (issue 7): timm's model with random weights and
// randomised BN statistics (tools/torchvision_reference.py --model timm:NAME, run by Debian's
// python with the oracle venv's timm package) loads into the zoo net's eval module, whose logits on
// the cpu executor must equal timm's f64 logits within max|Δ| <= 1e-4 · max|ref| (2 images,
// 10 classes). Skips without torch/torchvision (Debian) or the venv's timm (install-oracles.sh).
#include "reference_util.h"

namespace netspec::reference {
namespace {

constexpr double kRelTol = 1e-4;

void expect_close(const RefResult& r) {
  std::cout << "[ reference ] " << r.str() << "\n";
  EXPECT_GT(r.max_abs_ref, 0.1) << r.str();  // logits that are not ~0, so the bound means something
  EXPECT_LE(r.max_abs_diff, kRelTol * r.max_abs_ref) << r.str();
}

// MobileNetV4-Conv-M (timm mobilenetv4_conv_medium) at 64x64: the stride-32 net ends at 2x2.
TEST(ReferenceTimm, MobilenetV4ConvMedium) {
  NETSPEC_SKIP_WITHOUT_TIMM();
  RefOptions o;
  RefResult r =
      compare_zoo_with_torchvision("mobilenet-v4-conv-medium", "timm:mobilenetv4_conv_medium", o);
  expect_close(r);
  // timm's names, spot-checked: stem, the fused stage, a UIB with both depthwise convs, head.
  std::map<std::string, std::string> timm_of;
  for (const NamePair& p : r.mapping) timm_of[p.netspec] = p.torch;
  EXPECT_EQ(r.mapping.size(), 387u);
  EXPECT_EQ(timm_of["layers.0.conv.weight"], "conv_stem.weight");
  EXPECT_EQ(timm_of["layers.1.block0.expand.conv.weight"], "blocks.0.0.conv_exp.weight");
  EXPECT_EQ(timm_of["layers.2.dw_mid.conv.weight"], "blocks.1.0.dw_mid.conv.weight");
  EXPECT_EQ(timm_of["layers.25.bn.running_var"], "norm_head.running_var");
  EXPECT_EQ(timm_of["layers.27.weight"], "classifier.weight");
}

// ViT-Tiny/16 (timm vit_tiny_patch16_224) at 64x64: 16 patches + the class token. timm's init
// leaves every bias 0 and the class token ~1e-6, so all parameters get 0.05·N(0, 1) on top.
TEST(ReferenceTimm, VitTiny) {
  NETSPEC_SKIP_WITHOUT_TIMM();
  RefOptions o;
  o.extra_args = "--timm-arg img_size=64 --perturb 0.05";
  NetSpec net = zoo_net("vit-tiny", o);
  std::get<PatchEmbed>(net.layers[0]).nPatches = (o.size / 16) * (o.size / 16);
  RefResult r = compare_net_with_torchvision(net, "timm:vit_tiny_patch16_224", o);
  expect_close(r);
  EXPECT_EQ(r.mapping.size(), 152u);
  EXPECT_EQ(r.mapping.front().torch, "cls_token");
  EXPECT_EQ(r.mapping.back().torch, "head.bias");
}

}  // namespace
}  // namespace netspec::reference
