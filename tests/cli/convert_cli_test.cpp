// `netspec convert` as a user runs it: a torch.save'd state dict of the PyTorch peer's CIFAR
// ResNet-18 becomes resnet18-cifar weights that `train --init-from ... --classes N` fine-tunes on
// a small image folder and `predict --checkpoint` loads; the wrong net is refused naming the key
// and both shapes; GoogLeNet's auxiliary classifiers are listed as unused. ImageNet's flat val/
// with a labels file trains through `--dataset imagenet`; `train --help` lists only loadable
// datasets. The torch parts skip without Debian's python3-torch.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include "cli/cli_util.h"
#include "data/image_fixture.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

bool python_torch() {
  static const bool ok =
      std::system("/usr/bin/python3 -c 'import torch, torchvision' >/dev/null 2>&1") == 0;
  return ok;
}

// `n` RGB PNGs of size x size per class; class c is a vertical bar at column band c of 4.
void write_images(const fs::path& dir, int n, int size, uint32_t seed, bool flat,
                  std::ofstream* labels = nullptr) {
  std::mt19937 r(seed);
  const char* names[] = {"n01", "n02", "n03", "n04"};
  for (int c = 0; c < 4; ++c) {
    for (int i = 0; i < n; ++i) {
      std::vector<uint8_t> px(size * size * 3);
      for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x)
          for (int k = 0; k < 3; ++k)
            px[(y * size + x) * 3 + k] =
                static_cast<uint8_t>((x * 4 / size == c ? 200 : 40) + static_cast<int>(r() % 30));
      const std::string file = fmt::format("img_{}_{:02}.png", c, i);
      fs::path p = flat ? dir / file : dir / names[c] / file;
      fs::create_directories(p.parent_path());
      test::write_png(p.string(), size, size, PNG_FORMAT_RGB, px);
      if (labels) *labels << fs::path(file).stem().string() << " " << names[c] << "\n";
    }
  }
}

TEST(ConvertCli, TrainHelpListsOnlyLoadableDatasets) {
  Result r = sh("train --help");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "mnist | fashion-mnist | cifar10 | imagenette | imagenet | folder"))
      << r.out;
  Result bad = sh("train mlp --dataset nosuch --epochs 1");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_TRUE(has(bad.out, "expected one of mnist, fashion-mnist")) << bad.out;
}

TEST(ConvertCli, ImagenetLayoutWithFlatValAndLabelsFile) {
  fs::path d = temp_dir("ns_convert_", "imagenet");
  write_images(d / "data" / "train", 8, 16, 1, false);
  {
    std::ofstream labels(d / "data" / "LOC_val_solution.csv");
    labels << "ImageId,PredictionString\n";
    write_images(d / "data" / "val", 3, 16, 2, true, &labels);
  }
  fs::path spec = d / "tiny.json";
  std::ofstream(spec) << R"({"name": "tiny16", "inputChannels": 3, "inputHeight": 16,
 "inputWidth": 16, "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 768, "out": 4}]})";
  const std::string base = fmt::format(
      "train {} --dataset imagenet --data {} --epochs 6 --batch 8 "
      "--lr 0.01 --run-dir {}",
      spec.string(), (d / "data").string(), (d / "run").string());
  Result r = sh(base);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "32 train / 12 test samples")) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("test accuracy ([0-9.]+)%"))) << r.out;
  EXPECT_GE(std::stod(m[1].str()), 90.0) << r.out;
  // A label outside the training classes stops the run at load, naming file, line and label.
  std::ofstream(d / "data" / "LOC_val_solution.csv", std::ios::app) << "img_0_00,n09 1 2 3 4\n";
  Result bad = sh(base + " --overwrite");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_TRUE(
      has(bad.out, "LOC_val_solution.csv:14: label 'n09' of img_0_00 is not a training class"))
      << bad.out;
}

// The PyTorch peer's CIFAR ResNet-18 (random weights and BN statistics) saved by torch.save.
TEST(ConvertCli, FineTunesResnet18CifarFromTorchWeights) {
  if (!python_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch: skipped";
  const std::string peer = std::string(NETSPEC_SOURCE_DIR) + "/../shared/peers/torch_train_step.py";
  if (!fs::exists(peer)) GTEST_SKIP() << peer << " absent: skipped";
  fs::path d = temp_dir("ns_convert_", "finetune");
  const fs::path pth = d / "peer_resnet18.pth";
  const std::string gen = fmt::format(
      "/usr/bin/python3 {}/tools/torchvision_reference.py --model peer:resnet18 --size 32 "
      "--out {} --save-pth {} >{}/gen.log 2>&1",
      NETSPEC_SOURCE_DIR, (d / "ref").string(), pth.string(), d.string());
  ASSERT_EQ(std::system(gen.c_str()), 0) << slurp(d / "gen.log");

  const fs::path conv = d / "r18.safetensors";
  Result c = sh(fmt::format("convert {} --net resnet18-cifar -o {}", pth.string(), conv.string()));
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_TRUE(has(c.out,
                  "resnet18-cifar: 62 parameters + 20 BNs' running statistics mapped in "
                  "file order; 20 num_batches_tracked dropped"))
      << c.out;
  EXPECT_TRUE(has(c.out, "wrote " + conv.string() + ": 102 tensors")) << c.out;

  // The wrong net: the first tensor that does not fit, with both shapes.
  Result wrong =
      sh(fmt::format("convert {} --net resnet18 -o {}", pth.string(), (d / "x").string()));
  EXPECT_EQ(wrong.status, 2) << wrong.out;
  EXPECT_TRUE(has(wrong.out,
                  "'stem.0.weight' -> layers.0.conv.weight: shape (got [64, 3, 3, 3], "
                  "expected [64, 3, 7, 7])"))
      << wrong.out;

  // Fine-tune on a 4-class folder: the 10-class head is re-initialised, the rest loaded.
  write_images(d / "data" / "train", 4, 32, 3, false);
  write_images(d / "data" / "val", 2, 32, 4, false);
  auto finetune = [&](const fs::path& init, const std::string& run) {
    return sh(fmt::format(
        "train resnet18-cifar --init-from {} --classes 4 --dataset folder --data {} --epochs 1 "
        "--batch 8 --run-dir {}",
        init.string(), (d / "data").string(), (d / run).string()));
  };
  Result t = finetune(conv, "run");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, "100 tensors loaded, head re-initialised: layers.7.weight")) << t.out;
  EXPECT_TRUE(has(t.out, "16 train / 8 test samples")) << t.out;

  // Or straight from the .pth: converted on the way, the 10-class head free to differ.
  Result direct = finetune(pth, "run2");
  ASSERT_EQ(direct.status, 0) << direct.out;
  EXPECT_TRUE(has(direct.out, "PyTorch names, converted as `netspec convert` does")) << direct.out;
  EXPECT_TRUE(has(direct.out, "100 tensors loaded, head re-initialised: layers.7.weight"))
      << direct.out;

  // The converted file is a weights-only checkpoint for predict (10 classes, as converted).
  Result p = sh(fmt::format("predict resnet18-cifar --checkpoint {} --dataset cifar10 {} --json",
                            conv.string(), (d / "data" / "val" / "n01" / "img_0_00.png").string()));
  EXPECT_EQ(p.status, 0) << p.out;
  EXPECT_TRUE(has(p.out, "\"label\"")) << p.out;
}

TEST(ConvertCli, GooglenetAuxClassifiersAreListedUnused) {
  if (!python_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch: skipped";
  fs::path d = temp_dir("ns_convert_", "googlenet");
  const fs::path pth = d / "g.pth";
  const std::string gen = fmt::format(
      "/usr/bin/python3 -c 'import torch, torchvision; torch.save(torchvision.models.googlenet("
      "num_classes=10, aux_logits=True, init_weights=False).state_dict(), \"{}\")' >{}/gen.log "
      "2>&1",
      pth.string(), d.string());
  ASSERT_EQ(std::system(gen.c_str()), 0) << slurp(d / "gen.log");
  Result c = sh(fmt::format("convert {} --net googlenet --classes 10 --show-map", pth.string()));
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_TRUE(has(c.out, "unused (no place in googlenet): aux1.conv.conv.weight, ")) << c.out;
  EXPECT_TRUE(has(c.out, "  layers.0.conv.weight <- conv1.conv.weight\n")) << c.out;
  EXPECT_TRUE(fs::exists(d / "g.netspec.safetensors"));
}

}  // namespace
}  // namespace netspec::cli_test
