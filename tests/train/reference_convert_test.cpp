// `netspec convert`'s mapping (train/convert_weights.h) agrees with
// tools/torchvision_to_safetensors.py on every zoo net torchvision or timm defines: torch.save'd
// random state dicts, generated here by Debian's python3 (tests/train/convert_reference.py), give
// exactly the tool's tensors (names, order, values), also when the same tensors come as a
// safetensors file in the safetensors library's order (sorted by dtype and name). Weights converted
// from the PyTorch peer's CIFAR ResNet-18 give the torch model's logits. Skips without torch (timm
// nets without timm).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "emit/reference_util.h"
#include "train/convert_weights.h"

namespace netspec::reference {
namespace {

namespace fs = std::filesystem;

struct Job {
  Job(std::string z, std::string m, int s = 64, std::string a = "",
      nlohmann::json t = nlohmann::json::object())
      : zoo(std::move(z)),
        model(std::move(m)),
        size(s),
        adjust(std::move(a)),
        timm_args(std::move(t)) {}
  std::string zoo, model;
  int size;
  std::string adjust;  // "aux" | "swin" (see convert_reference.py)
  nlohmann::json timm_args;
};

NetSpec job_net(const Job& j) {
  RefOptions o;
  o.size = j.size;
  NetSpec net = zoo_net(j.zoo, o);
  if (j.zoo == "vit-tiny")
    std::get<PatchEmbed>(net.layers[0]).nPatches = (j.size / 16) * (j.size / 16);
  return net;
}

// The safetensors library's order: dtype size descending, then name.
TorchTensors library_order(TorchTensors t) {
  std::stable_sort(t.tensors.begin(), t.tensors.end(), [](const auto& a, const auto& b) {
    const size_t x = dtype_size(a.second.dtype()), y = dtype_size(b.second.dtype());
    return x != y ? x > y : a.first < b.first;
  });
  return t;
}

void expect_same(const train::ConvertedWeights& got, const SafeTensors& want,
                 const std::string& what) {
  ASSERT_EQ(got.st.tensors.size(), want.tensors.size()) << what;
  for (size_t i = 0; i < want.tensors.size(); ++i) {
    const auto& [gn, g] = got.st.tensors[i];
    const auto& [wn, w] = want.tensors[i];
    ASSERT_EQ(gn, wn) << what << " tensor " << i;
    ASSERT_EQ(g.shape(), w.shape()) << what << " " << wn;
    ASSERT_EQ(g.dtype(), DType::kF32);
    ASSERT_EQ(std::memcmp(g.raw(), w.raw(), w.nbytes()), 0)
        << what << " " << wn << " values differ";
  }
}

// Generates every job's .pth and the tool's output, then converts and compares.
void check_jobs(const std::vector<Job>& jobs, const std::string& extra_args) {
  TempDir dir;
  nlohmann::json js = nlohmann::json::array();
  std::vector<ParamTable> tables;
  for (const Job& j : jobs) {
    NetSpec net = job_net(j);
    tables.push_back(build_param_table(net));
    emit::EmitOptions eo;
    eo.batch = 1;
    const std::string manifest = dir.path + "/" + j.zoo + ".manifest.json";
    std::ofstream(manifest) << emit::emit_module(net, ModuleKind::eval, eo).manifest.to_json();
    js.push_back({{"name", j.zoo},
                  {"model", j.model},
                  {"classes", 10},
                  {"manifest", manifest},
                  {"adjust", j.adjust},
                  {"timm_args", j.timm_args}});
  }
  std::ofstream(dir.path + "/jobs.json") << js.dump();
  export_openblas_coretype();
  const std::string cmd = fmt::format(
      "{} {}/tests/train/convert_reference.py {}/jobs.json {} --peer-file "
      "{}/../shared/peers/torch_train_step.py {} >{}/gen.log 2>&1",
      kPython, NETSPEC_SOURCE_DIR, dir.path, dir.path, NETSPEC_SOURCE_DIR, extra_args, dir.path);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n"
                                         << std::ifstream(dir.path + "/gen.log").rdbuf();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    const std::string pth = dir.path + "/" + j.zoo + ".pth";
    const SafeTensors want = read_safetensors(dir.path + "/" + j.zoo + ".expected.safetensors");
    const TorchTensors in = read_weight_file(pth);
    train::ConvertedWeights cw = train::convert_state_dict(in, tables[i], pth);
    expect_same(cw, want, j.zoo);
    EXPECT_EQ(cw.reordered, j.adjust == "swin") << j.zoo;
    EXPECT_EQ(cw.unused.empty(), j.adjust != "aux") << j.zoo;
    // The same tensors as a safetensors file in the library's order.
    const std::string st_path = dir.path + "/" + j.zoo + ".sorted.safetensors";
    SafeTensors sorted;
    sorted.tensors = library_order(in).tensors;
    write_safetensors(st_path, sorted);
    const TorchTensors again = read_weight_file(st_path);
    EXPECT_TRUE(again.library_order) << j.zoo;
    train::ConvertedWeights cs = train::convert_state_dict(again, tables[i], st_path);
    expect_same(cs, want, j.zoo + " (library order)");
    EXPECT_TRUE(cs.reordered);
    std::cout << fmt::format(
        "[ convert ] {}: {} tensors as the tool ({} num_batches_tracked, "
        "{} unused)\n",
        j.zoo, cw.st.tensors.size(), cw.batches_tracked, cw.unused.size());
  }
}

TEST(ReferenceConvert, AgreesWithTheToolOnTorchvisionNets) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  std::vector<Job> jobs = {{"resnet18", "resnet18"},
                           {"resnet34", "resnet34"},
                           {"resnet50", "resnet50"},
                           {"mobilenet-v2", "mobilenet_v2"},
                           {"mobilenet-v2-cifar", "mobilenet_v2"},
                           {"mobilenet-v3-large", "mobilenet_v3_large"},
                           {"mobilenet-v3-small", "mobilenet_v3_small"},
                           {"efficientnet-b0", "efficientnet_b0"},
                           {"efficientnet-v2-s", "efficientnet_v2_s"},
                           {"convnext-tiny", "convnext_tiny"},
                           {"shufflenet-v2", "shufflenet_v2_x1_0"},
                           {"squeezenet", "squeezenet1_1"},
                           {"densenet121", "densenet121"},
                           {"googlenet", "googlenet", 64, "aux"}};
  if (fs::exists(std::string(NETSPEC_SOURCE_DIR) + "/../shared/peers/torch_train_step.py"))
    jobs.push_back({"resnet18-cifar", "peer:resnet18", 32});
  check_jobs(jobs, "");
}

TEST(ReferenceConvert, AgreesWithTheToolOnTimmNets) {
  NETSPEC_SKIP_WITHOUT_TIMM();
  std::vector<Job> jobs = {{"mobilenet-v4-conv-medium", "timm:mobilenetv4_conv_medium"},
                           {"vit-tiny", "timm:vit_tiny_patch16_224", 64, "", {{"img_size", 64}}},
                           {"mobilevit-s", "timm:mobilevit_s"},
                           {"swin-tiny", "timm:swin_tiny_patch4_window7_224", 224, "swin"}};
  check_jobs(jobs, fmt::format("--timm-path '{}'", timm_path()));
}

// Converted weights of the peer's CIFAR ResNet-18 (a torch.save'd state dict, random weights and
// BN statistics) in netspec's eval module give torch's logits (the reference tests' tolerance).
TEST(ReferenceConvert, ConvertedPeerResnetGivesTorchLogits) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  const std::string peer = std::string(NETSPEC_SOURCE_DIR) + "/../shared/peers/torch_train_step.py";
  if (!fs::exists(peer)) GTEST_SKIP() << peer << " absent: peer check skipped";
  RefOptions o;
  o.size = 32;
  TempDir dir;
  o.extra_args = "--save-pth " + dir.path + "/peer.pth";
  RefFiles f = run_torchvision_reference("peer:resnet18", o, dir.path);
  NetSpec net = zoo_net("resnet18-cifar", o);
  ParamTable t = build_param_table(net);
  train::ConvertedWeights cw =
      train::convert_state_dict(read_weight_file(dir.path + "/peer.pth"), t, "peer.pth");
  EXPECT_EQ(cw.batches_tracked, static_cast<int64_t>(t.bns.size()));
  std::vector<Tensor> in;
  for (auto& [name, x] : cw.st.tensors) in.push_back(x);
  in.push_back(f.x);
  emit::EmitOptions eo;
  eo.batch = f.x.shape()[0];
  auto exe = exec::make_backend("cpu")->load(
      std::shared_ptr<const hlo::Module>(emit::emit_module(net, ModuleKind::eval, eo).module));
  Tensor y = exe->run("main", in).at(0);
  ASSERT_EQ(y.shape(), f.logits.shape());
  double diff = 0, ref = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    diff = std::max(diff, std::abs(y.as_double(i) - f.logits.as_double(i)));
    ref = std::max(ref, std::abs(f.logits.as_double(i)));
  }
  std::cout << fmt::format(
      "[ convert ] resnet18-cifar from peer.pth: max|Δ| {:.3g}, max|ref| {:.4g}\n", diff, ref);
  EXPECT_GT(ref, 0.1);
  EXPECT_LE(diff, 1e-4 * ref);
}

}  // namespace
}  // namespace netspec::reference
