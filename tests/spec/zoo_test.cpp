// Zoo tests: every bundled net loads, validates, round-trips through its file format, and where
// torchvision or timm defines the net its parameter count equals theirs at 1000 and 10 classes.
// Reference counts were computed with torchvision 0.14 (Debian python3-torchvision) and timm
// 1.0: sum(p.numel() for p in model(num_classes=N).parameters()).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "spec/param_table.h"
#include "spec/zoo.h"
#include "layers/param_table.h"

namespace netspec {
namespace {

std::string models() { return std::string(NETSPEC_SOURCE_DIR) + "/models"; }

SpecFile zoo(const std::string& name) {
  return load_spec_file(models() + "/" + name + ".json");
}

struct RefCount {
  const char* net;
  int64_t at1000;
  int64_t at10;
};

// torchvision: resnet18/34/50, mobilenet_v2, mobilenet_v3_large/small, efficientnet_b0,
// efficientnet_v2_s, convnext_tiny, squeezenet1_1, shufflenet_v2_x1_0, densenet121,
// GoogLeNet(aux_logits=False), swin_t. timm: vit_tiny_patch16_224, mobilenetv4_conv_medium,
// mobilevit_s (swin_tiny_patch4_window7_224 has swin_t's count).
constexpr RefCount kRefs[] = {
    {"resnet18", 11689512, 11181642},           {"resnet34", 21797672, 21289802},
    {"resnet50", 25557032, 23528522},           {"mobilenet-v2", 3504872, 2236682},
    {"mobilenet-v3-large", 5483032, 4214842},   {"mobilenet-v3-small", 2542856, 1528106},
    {"efficientnet-b0", 5288548, 4020358},      {"efficientnet-v2-s", 21458488, 20190298},
    {"convnext-tiny", 28589128, 27827818},      {"squeezenet", 1235496, 727626},
    {"shufflenet-v2", 2278604, 1263854},        {"densenet121", 7978856, 6964106},
    {"googlenet", 6624904, 5610154},            {"swin-tiny", 28288354, 27527044},
    {"vit-tiny", 5717416, 5526346},             {"mobilenet-v4-conv-medium", 9715512, 8447322},
    {"mobilevit-s", 5578632, 4944042},
};

class RefCountTest : public ::testing::TestWithParam<RefCount> {};

TEST_P(RefCountTest, MatchesReferenceAt1000And10Classes) {
  const RefCount& r = GetParam();
  NetSpec net = zoo(r.net).net;
  EXPECT_EQ(num_classes(net), 1000);
  EXPECT_EQ(build_param_table(net).total_params(), r.at1000) << r.net;
  set_num_classes(net, 10);
  EXPECT_EQ(build_param_table(net).total_params(), r.at10) << r.net;
}

INSTANTIATE_TEST_SUITE_P(Zoo, RefCountTest, ::testing::ValuesIn(kRefs),
                         [](const auto& info) {
                           std::string n = info.param.net;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(Zoo, ListsTheRequiredNets) {
  setenv("NETSPEC_MODELS_DIR", models().c_str(), 1);
  auto names = zoo_names();
  std::set<std::string> have(names.begin(), names.end());
  for (const char* n : {"linear", "mlp", "mnist-cnn", "cifar-cnn", "cifar-bn", "resnet18",
                        "resnet34", "resnet50", "mobilenet-v2", "mobilenet-v3-large",
                        "mobilenet-v3-small", "efficientnet-b0", "efficientnet-v2-s",
                        "convnext-tiny", "vit-tiny", "mobilenet-v4-conv-medium", "squeezenet",
                        "shufflenet-v2", "densenet121", "googlenet", "unet", "fpn-det",
                        "tiny-gpt", "ddpm-unet"})
    EXPECT_TRUE(have.count(n)) << n;
}

TEST(Zoo, EveryNetValidatesAndRoundTrips) {
  setenv("NETSPEC_MODELS_DIR", models().c_str(), 1);
  for (const auto& name : zoo_names()) {
    SCOPED_TRACE(name);
    SpecFile a = zoo(name);
    EXPECT_EQ(a.net.name, name);
    ParamTable t = build_param_table(a.net);
    EXPECT_GT(t.total_params(), 0);
    EXPECT_GT(t.total_flops(), 0);
    if (a.train) {
      EXPECT_NO_THROW(validate(*a.train));
    }
    std::string text = dump_spec(a);
    SpecFile b = parse_spec(text, name + " (dumped)");
    EXPECT_EQ(a, b);
    EXPECT_EQ(dump_spec(b), text);
    // Names are unique.
    std::set<std::string> names;
    for (const auto& p : t.params) EXPECT_TRUE(names.insert(p.name).second) << p.name;
  }
}

TEST(Zoo, EveryLayerKindAppearsInSomeNet) {
  setenv("NETSPEC_MODELS_DIR", models().c_str(), 1);
  std::set<std::string> seen;
  for (const auto& name : zoo_names())
    for (const auto& l : zoo(name).net.layers) seen.insert(std::string(layer_kind(l)));
  for (auto k : layer_kind_names()) EXPECT_TRUE(seen.count(std::string(k))) << k;
  EXPECT_EQ(layer_kind_names().size(), kNumLayerKinds);
}

// ddpm-unet-gn (issue 45 item 6): ddpm-unet with GroupNorm for every BN (same parameter names
// and shapes) plus a final groupNorm(32) before the 1x1 output conv; cosine β in its train block.
TEST(Zoo, DdpmUnetGnIsDdpmUnetWithGroupNorm) {
  SpecFile bn = zoo("ddpm-unet"), gn = zoo("ddpm-unet-gn");
  ParamTable tb = build_param_table(bn.net), tg = build_param_table(gn.net);
  EXPECT_EQ(tb.total_params(), 1343937);
  EXPECT_EQ(tg.total_params(), 1343937 + 2 * 32);  // + the final groupNorm's weight and bias
  EXPECT_EQ(tb.bns.size(), 17u);
  EXPECT_TRUE(tg.bns.empty());
  EXPECT_EQ(tg.total_flops(), tb.total_flops());
  ASSERT_EQ(tg.params.size(), tb.params.size() + 2);
  for (size_t i = 0; i + 2 < tb.params.size(); ++i) {  // up to the output conv
    EXPECT_EQ(tg.params[i].name, tb.params[i].name);
    EXPECT_EQ(tg.params[i].shape, tb.params[i].shape);
  }
  EXPECT_EQ(tg.params[tg.params.size() - 4].name, "layers.21.weight");
  ASSERT_TRUE(gn.train);
  EXPECT_EQ(gn.train->betaSchedule, BetaSchedule::cosine);
  EXPECT_TRUE(gn.train->ddpm);
  EXPECT_EQ(bn.train->betaSchedule, BetaSchedule::linear);
}

TEST(Zoo, ResolveByNameAndPathAndMiss) {
  setenv("NETSPEC_MODELS_DIR", models().c_str(), 1);
  EXPECT_EQ(resolve_net("mlp").net.name, "mlp");
  EXPECT_EQ(resolve_net(models() + "/linear.json").net.layers.size(), 2u);
  try {
    resolve_net("resnet19");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[net] unknown net 'resnet19'; did you mean 'resnet18'? "
                                         "(expected a .json file or one of cifar-bn"),
              std::string::npos)
        << e.what();
  }
}

// The rule: $NETSPEC_MODELS_DIR, else <exe dir>/../share/netspec/models (installed), else the
// source tree's models/ (compiled in for build dirs).
TEST(Zoo, DirIsEnvThenInstalledThenSourceTree) {
  namespace fs = std::filesystem;
  fs::path prefix = fs::temp_directory_path() / ("zoo_dir_" + std::to_string(::getpid()));
  fs::remove_all(prefix);
  fs::create_directories(prefix / "bin");
  fs::path exe = prefix / "bin" / "netspec";
  std::ofstream(exe) << "";
  EXPECT_EQ(zoo_dir_for("/some/where", exe), "/some/where");
  // No installed zoo beside the binary: the source tree's models/.
  EXPECT_EQ(fs::canonical(zoo_dir_for(nullptr, exe)), fs::canonical(models()));
  EXPECT_EQ(fs::canonical(zoo_dir_for("", fs::path())), fs::canonical(models()));
  fs::create_directories(prefix / "share" / "netspec" / "models");
  EXPECT_EQ(zoo_dir_for(nullptr, exe), (prefix / "share" / "netspec" / "models").string());
  EXPECT_EQ(zoo_dir_for("/some/where", exe), "/some/where");
  fs::remove_all(prefix);
}

}  // namespace
}  // namespace netspec
