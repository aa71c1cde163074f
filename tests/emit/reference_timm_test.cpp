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

// netspec name -> the timm tensor loaded into it.
std::map<std::string, std::string> torch_names(const RefResult& r) {
  std::map<std::string, std::string> m;
  for (const NamePair& p : r.mapping) m[p.netspec] = p.torch;
  return m;
}

// MobileNetV4-Conv-M (timm mobilenetv4_conv_medium) at 64x64: the stride-32 net ends at 2x2.
TEST(ReferenceTimm, MobilenetV4ConvMedium) {
  NETSPEC_SKIP_WITHOUT_TIMM();
  RefOptions o;
  RefResult r =
      compare_zoo_with_torchvision("mobilenet-v4-conv-medium", "timm:mobilenetv4_conv_medium", o);
  expect_close(r);
  // timm's names, spot-checked: stem, the fused stage, a UIB with both depthwise convs, head.
  std::map<std::string, std::string> timm_of = torch_names(r);
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

// MobileViT-S (timm mobilevit_s) at 64x64: the three MobileViT blocks run on 8x8, 4x4, 2x2 maps
// (2x2 patches). models/mobilevit-s.json is timm's net; its count is timm's (zoo_test.cpp).
TEST(ReferenceTimm, MobileVitS) {
  NETSPEC_SKIP_WITHOUT_TIMM();
  RefOptions o;
  o.extra_args = "--perturb 0.05";
  RefResult r = compare_zoo_with_torchvision("mobilevit-s", "timm:mobilevit_s", o);
  expect_close(r);
  std::map<std::string, std::string> timm_of = torch_names(r);
  EXPECT_EQ(timm_of["layers.4.transformer.1.attn.qkv.weight"],
            "stages.2.1.transformer.1.attn.qkv.weight");
  EXPECT_EQ(timm_of["layers.8.conv_fusion.bn.running_var"],
            "stages.4.1.conv_fusion.bn.running_var");
  EXPECT_EQ(timm_of["layers.12.weight"], "head.fc.weight");
}

// timm's state_dict order -> netspec's (torchvision's) where they differ: a block's
// attn.relative_position_bias_table comes after attn.proj, a PatchMerging's reduction before its
// norm. Names stay timm's (the mapping shows them); shapes are checked by eval_weights.
SafeTensors swin_torchvision_order(const SafeTensors& st) {
  SafeTensors out;
  const std::pair<std::string, Tensor>* table = nullptr;
  std::vector<const std::pair<std::string, Tensor>*> norm;
  for (const auto& e : st.tensors) {
    const std::string& n = e.first;
    if (ends_with(n, "attn.relative_position_bias_table")) {
      table = &e;
    } else if (n.find("downsample.norm.") != std::string::npos) {
      norm.push_back(&e);
    } else {
      out.tensors.push_back(e);
      if (table && ends_with(n, "attn.proj.bias"))
        out.tensors.push_back(*std::exchange(table, nullptr));
      if (!norm.empty() && ends_with(n, "downsample.reduction.weight")) {
        for (const auto* p : norm) out.tensors.push_back(*p);
        norm.clear();
      }
    }
  }
  EXPECT_EQ(out.tensors.size(), st.tensors.size());
  return out;
}

// Swin-T (timm swin_tiny_patch4_window7_224) at its 224x224: maps 56, 28, 14 are shifted
// (window 7), the 7x7 map of the last stage is one unshifted window. Counting: eval_weights pairs
// every timm tensor with a netspec parameter of equal shape, so the counts are equal (at 1000
// classes both are 28288354, tests/spec/zoo_test.cpp).
TEST(ReferenceTimm, SwinTiny) {
  NETSPEC_SKIP_WITHOUT_TIMM();
  RefOptions o;
  o.size = 224;
  o.extra_args = "--perturb 0.05";
  TempDir dir;
  RefFiles f = run_torchvision_reference("timm:swin_tiny_patch4_window7_224", o, dir.path);
  f.weights = swin_torchvision_order(f.weights);
  RefResult r = compare_eval(zoo_net("swin-tiny", o), f, o);
  expect_close(r);
  EXPECT_EQ(r.mapping.size(), 173u);
  std::map<std::string, std::string> timm_of = torch_names(r);
  EXPECT_EQ(timm_of["layers.1.blocks.1.attn.relative_position_bias_table"],
            "layers.0.blocks.1.attn.relative_position_bias_table");
  EXPECT_EQ(timm_of["layers.2.norm.weight"], "layers.1.downsample.norm.weight");
  EXPECT_EQ(timm_of["layers.11.weight"], "head.fc.weight");
}

}  // namespace
}  // namespace netspec::reference
