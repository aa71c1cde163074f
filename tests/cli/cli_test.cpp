// End-to-end tests of the `netspec` binary: exit codes, help text, running the bundled example,
// inputs and outputs as .npy, and error messages for bad input.
#include <gtest/gtest.h>

#include "tests/cli/cli_util.h"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/npy.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;
using cli_test::Result;
using cli_test::run_netspec;
using cli_test::sh;

fs::path temp_dir(const std::string& name) { return cli_test::temp_dir("netspec_cli_", name); }

std::string src(const std::string& rel) { return std::string(NETSPEC_SOURCE_DIR) + "/" + rel; }

void write_text(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

TEST(Cli, HelpListsRunFlagsWithDefaults) {
  Result r = sh("run --help");
  EXPECT_EQ(r.status, 0);
  for (const char* flag : {"--entry", "--input", "--output-dir", "--backend", "--replicas", "--split"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  EXPECT_NE(r.out.find("cpu"), std::string::npos);  // default backend shown
  EXPECT_EQ(sh("--help").status, 0);
}

TEST(Cli, BadFlagExits2) {
  EXPECT_EQ(sh("run --no-such-flag x.mlir").status, 2);
  EXPECT_EQ(sh("no-such-command").status, 2);
  EXPECT_EQ(sh("run " + src("examples/mlp.mlir") + " --backend gpu").status, 2);
}

// Expected values computed by hand in examples/mlp.mlir's comment-free arithmetic:
// row0 relu([2.6, 0.2, -0.45, 0.6]) W2 + b2 = [2.9, 1.5, -3.2]; row1 -> [0.1, 2.45, -0.375].
TEST(Cli, RunsBundledExampleOnBothBackends) {
  for (const char* backend : {"ref", "cpu"}) {
    fs::path d = temp_dir(std::string("mlp_") + backend);
    Result r = sh("run " + src("examples/mlp.mlir") + " --backend " + backend + " --output-dir " + d.string());
    ASSERT_EQ(r.status, 0) << r.out;
    Tensor t = read_npy((d / "result0.npy").string());
    ASSERT_EQ(t.shape(), (Shape{2, 3}));
    const float want[] = {2.9f, 1.5f, -3.2f, 0.1f, 2.45f, -0.375f};
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(t.data<float>()[i], want[i], 1e-5) << backend << " " << i;
    fs::remove_all(d);
  }
  Result p = sh("run " + src("examples/mlp.mlir"));
  EXPECT_EQ(p.status, 0) << p.out;
  EXPECT_NE(p.out.find("result0: tensor<2x3xf32> = [2.9, 1.5, -3.2, 0.1, 2.45, -0.375]"), std::string::npos) << p.out;
}

TEST(Cli, InputsAreCheckedAndUsed) {
  fs::path d = temp_dir("inputs");
  write_text(d / "f.mlir",
             "func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {\n"
             "  %0 = stablehlo.multiply %a, %b : tensor<3xf32>\n"
             "  return %0 : tensor<3xf32>\n}\n");
  write_npy((d / "a.npy").string(), Tensor::from<float>(DType::kF32, {3}, {1, 2, 3}));
  write_npy((d / "b.npy").string(), Tensor::from<float>(DType::kF32, {3}, {4, 5, -6}));
  write_npy((d / "bad.npy").string(), Tensor::from<float>(DType::kF32, {2}, {4, 5}));
  std::string base = "run " + (d / "f.mlir").string() + " --input " + (d / "a.npy").string();
  Result ok = sh(base + " --input " + (d / "b.npy").string() + " --output-dir " + (d / "out").string());
  ASSERT_EQ(ok.status, 0) << ok.out;
  Tensor t = read_npy((d / "out" / "result0.npy").string());
  EXPECT_FLOAT_EQ(t.data<float>()[0], 4);
  EXPECT_FLOAT_EQ(t.data<float>()[1], 10);
  EXPECT_FLOAT_EQ(t.data<float>()[2], -18);

  Result missing = sh(base);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("takes 2 argument(s), got 1"), std::string::npos) << missing.out;
  Result wrong = sh(base + " --input " + (d / "bad.npy").string());
  EXPECT_EQ(wrong.status, 2);
  EXPECT_NE(wrong.out.find("argument 1 (%arg1) expects tensor<3xf32>, got tensor<2xf32>"), std::string::npos)
      << wrong.out;
  fs::remove_all(d);
}

TEST(Cli, ParseErrorsGiveFileLineCol) {
  fs::path d = temp_dir("parse");
  write_text(d / "bad.mlir",
             "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
             "  %0 = stablehlo.add %a, %nope : tensor<3xf32>\n"
             "  return %0 : tensor<3xf32>\n}\n");
  Result r = sh("run " + (d / "bad.mlir").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("bad.mlir:2:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error:"), std::string::npos) << r.out;
  Result none = sh("run " + (d / "missing.mlir").string());
  EXPECT_EQ(none.status, 2);
  fs::remove_all(d);
}

TEST(Cli, SplitFilesRunEachPart) {
  fs::path d = temp_dir("split");
  write_text(d / "s.mlir",
             "func.func @main() -> tensor<i32> {\n"
             "  %0 = stablehlo.constant dense<7> : tensor<i32>\n"
             "  return %0 : tensor<i32>\n}\n"
             "// -----\n"
             "func.func @main() -> tensor<i32> {\n"
             "  %0 = stablehlo.constant dense<8> : tensor<i32>\n"
             "  return %0 : tensor<i32>\n}\n");
  Result first = sh("run " + (d / "s.mlir").string());
  EXPECT_EQ(first.status, 0) << first.out;
  EXPECT_NE(first.out.find("= [7]"), std::string::npos) << first.out;
  EXPECT_EQ(first.out.find("= [8]"), std::string::npos) << first.out;
  Result both = sh("run --split " + (d / "s.mlir").string() + " --output-dir " + (d / "o").string());
  ASSERT_EQ(both.status, 0) << both.out;
  EXPECT_EQ(read_npy((d / "o" / "part1" / "result0.npy").string()).as_int64(0), 8);
  fs::remove_all(d);
}

}  // namespace
}  // namespace netspec
