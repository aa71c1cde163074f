// End-to-end tests of `netspec emit`: FILE.mlir + FILE.manifest.json are written, the module
// runs back through `netspec run` with hand-computed results, and bad nets / modules / layers not
// lowered yet exit 2 with a message naming them.
#include <gtest/gtest.h>

#include "tests/cli/cli_util.h"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/npy.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;
using cli_test::Result;
using cli_test::run_netspec;
using cli_test::sh;

fs::path temp_dir(const std::string& name) { return cli_test::temp_dir("netspec_emitcli_", name); }

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

// linear (flatten, dense 784 -> 3) forward at batch 2 with W = 0 and b = (1, 2, 3): every row of
// the logits is b.
TEST(EmitCli, WritesModuleAndManifestAndRunsBack) {
  fs::path d = temp_dir("fwd");
  fs::path mlir = d / "lin.mlir";
  Result r = sh("emit linear --module forward --batch 2 --classes 3 -o " + mlir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  ASSERT_TRUE(fs::exists(mlir));
  ASSERT_TRUE(fs::exists(d / "lin.manifest.json")) << r.out;
  std::string text = read_text(mlir), man = read_text(d / "lin.manifest.json");
  EXPECT_TRUE(has(text, "func.func public @main(")) << text.substr(0, 400);
  EXPECT_TRUE(has(text, "tensor<2x1x28x28xf32>"));
  EXPECT_TRUE(has(man, "\"module\": \"forward\"")) << man;
  EXPECT_TRUE(has(man, "\"role\": \"param\""));
  EXPECT_TRUE(has(man, "\"role\": \"input\""));
  EXPECT_TRUE(has(man, "\"shape\": [\n        3,\n        784\n      ]")) << man;
  write_npy((d / "w.npy").string(), Tensor(DType::kF32, {3, 784}));
  write_npy((d / "b.npy").string(), Tensor::from<float>(DType::kF32, {3}, {1, 2, 3}));
  Tensor x(DType::kF32, {2, 1, 28, 28});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 7);
  write_npy((d / "x.npy").string(), x);
  for (const char* backend : {"ref", "cpu"}) {
    fs::path od = d / backend;
    Result run = sh("run " + mlir.string() + " --backend " + backend + " --input " +
                    (d / "w.npy").string() + " --input " + (d / "b.npy").string() + " --input " +
                    (d / "x.npy").string() + " --output-dir " + od.string());
    ASSERT_EQ(run.status, 0) << run.out;
    Tensor t = read_npy((od / "result0.npy").string());
    ASSERT_EQ(t.shape(), (Shape{2, 3}));
    for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(t.data<float>()[i], 1 + i % 3) << backend;
  }
  fs::remove_all(d);
}

TEST(EmitCli, TrainStepParsesBackAndStdoutWithoutOutputFile) {
  fs::path d = temp_dir("train");
  fs::path mlir = d / "mlp.train_step.mlir";
  Result r = sh("emit mlp --module train_step --batch 4 --optimizer sgd -o " + mlir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  std::string man = read_text(d / "mlp.train_step.manifest.json");
  for (const char* role : {"\"param\"", "\"label\"", "\"hyperparameter\"", "\"loss\""})
    EXPECT_TRUE(has(man, role)) << role << "\n" << man;
  // Parsed back: without inputs `run` reports the entry's arity rather than a parse error.
  Result run = sh("run " + mlir.string());
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(has(run.out, "argument(s), got 0")) << run.out;
  EXPECT_FALSE(has(run.out, "error: ")) << run.out;
  Result out = sh("emit mlp --module forward --batch 1");
  EXPECT_EQ(out.status, 0) << out.out;
  EXPECT_TRUE(has(out.out, "func.func public @main(")) << out.out.substr(0, 400);
  fs::remove_all(d);
}

TEST(EmitCli, BadNetModuleAndUnloweredLayerExit2) {
  Result net = sh("emit no-such-net --module forward");
  EXPECT_EQ(net.status, 2) << net.out;
  EXPECT_TRUE(has(net.out, "unknown net 'no-such-net'")) << net.out;
  Result mod = sh("emit mlp --module backward");
  EXPECT_EQ(mod.status, 2) << mod.out;
  EXPECT_TRUE(has(mod.out, "--module backward: unknown")) << mod.out;
  EXPECT_TRUE(has(mod.out, "train_step")) << mod.out;  // the choices are listed
  Result opt = sh("emit mlp --module train_step --optimizer nope");
  EXPECT_EQ(opt.status, 2) << opt.out;
  EXPECT_TRUE(has(opt.out, "--optimizer nope: unknown")) << opt.out;
}

// `netspec list` marks each zoo net lowered ("yes") or names the kinds it still lacks.
TEST(ListCli, MarksLoweredNets) {
  Result r = sh("list");
  ASSERT_EQ(r.status, 0) << r.out;
  auto line = [&](const std::string& net) {
    size_t p = r.out.find("\n" + net + " ");
    if (p == std::string::npos) return std::string();
    return r.out.substr(p + 1, r.out.find('\n', p + 1) - p - 1);
  };
  EXPECT_TRUE(has(line("swin-tiny"), " yes")) << line("swin-tiny");
  EXPECT_TRUE(has(line("resnet18"), " yes")) << line("resnet18");
  EXPECT_TRUE(has(line("protein-fold"), " yes")) << line("protein-fold");
}

}  // namespace
}  // namespace netspec
