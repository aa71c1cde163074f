// Bad input to `run`, `gradcheck` and `compile` ends in a clear error (exit 2, `[where] what`)
// or a bounded run: endless while loops stop at --max-iterations or --timeout, directories and
// FIFOs are refused by name, gradcheck samples large inputs and refuses a NaN tolerance.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/npy.h"
#include "tests/cli/cli_util.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;
using cli_test::Result;
using cli_test::sh;

fs::path temp_dir(const std::string& name) { return cli_test::temp_dir("netspec_hard_", name); }

// @main counts from 0 while `i < limit` (limit = -1: the condition is constant true).
fs::path write_loop(const fs::path& dir, int limit) {
  fs::path p = dir / "loop.mlir";
  std::string cond = limit < 0 ? "    %c = stablehlo.constant dense<true> : tensor<i1>\n"
                               : "    %n = stablehlo.constant dense<" + std::to_string(limit) +
                                     "> : tensor<i32>\n"
                                     "    %c = stablehlo.compare  LT, %iterArg, %n,  SIGNED : "
                                     "(tensor<i32>, tensor<i32>) -> tensor<i1>\n";
  std::ofstream(p) << "func.func @main() -> tensor<i32> {\n"
                      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
                      "  %0 = stablehlo.while(%iterArg = %z) : tensor<i32>\n"
                      "   cond {\n" +
                          cond +
                          "    stablehlo.return %c : tensor<i1>\n"
                          "  } do {\n"
                          "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
                          "    %s = stablehlo.add %iterArg, %one : tensor<i32>\n"
                          "    stablehlo.return %s : tensor<i32>\n"
                          "  }\n"
                          "  return %0 : tensor<i32>\n"
                          "}\n";
  return p;
}

bool has(const Result& r, const std::string& s) { return r.out.find(s) != std::string::npos; }

TEST(Hardening, EndlessWhileStopsAtTheIterationCap) {
  fs::path d = temp_dir("while_cap");
  fs::path endless = write_loop(d, -1);
  for (const char* backend : {"ref", "cpu"}) {
    Result r = sh("run " + endless.string() + " --backend " + backend + " --max-iterations 1000");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_TRUE(has(r, "[while] the loop ran 1000 iterations")) << r.out;
  }
  // A loop of exactly 5 iterations fits a cap of 5, not of 4.
  fs::path five = write_loop(d, 5);
  Result ok = sh("run " + five.string() + " --max-iterations 5");
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_TRUE(has(ok, "result0: tensor<i32> = [5]")) << ok.out;
  EXPECT_EQ(sh("run " + five.string() + " --max-iterations 4").status, 2);
  // The default is large and stated.
  Result help = sh("run --help");
  EXPECT_TRUE(has(help, "--max-iterations")) << help.out;
  EXPECT_TRUE(has(help, "10000000")) << help.out;
  fs::remove_all(d);
}

TEST(Hardening, TimeoutStopsAnEndlessWhile) {
  fs::path d = temp_dir("timeout");
  fs::path endless = write_loop(d, -1);
  auto t0 = std::chrono::steady_clock::now();
  Result r = sh("run " + endless.string() + " --max-iterations 1000000000000 --timeout 0.5");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r, "[while] ran past the wall-clock limit of 0.5 s")) << r.out;
  EXPECT_LT(s, 30.0);
  for (const char* bad : {"--timeout -1", "--timeout nan", "--max-iterations 0"}) {
    Result b = sh("run " + endless.string() + " " + bad);
    EXPECT_EQ(b.status, 2) << bad << ": " << b.out;
    EXPECT_TRUE(has(b, "[run]")) << bad << ": " << b.out;
  }
  fs::remove_all(d);
}

TEST(Hardening, RunRefusesDirectoriesFifosAndDevicesByName) {
  fs::path d = temp_dir("nonregular");
  fs::create_directories(d / "dir.mlir");
  ASSERT_EQ(mkfifo((d / "fifo.mlir").c_str(), 0600), 0);
  ASSERT_EQ(mkfifo((d / "fifo.npy").c_str(), 0600), 0);
  fs::path loop = write_loop(d, 1);
  struct Case {
    std::string args, what;
  };
  for (const Case& c :
       {Case{"run " + (d / "dir.mlir").string(), "it is a directory"},
        Case{"run --split " + (d / "dir.mlir").string(), "it is a directory"},
        Case{"run " + (d / "fifo.mlir").string(), "it is a FIFO"},
        Case{"run /dev/zero", "it is a device"},
        Case{"gradcheck " + (d / "dir.mlir").string(), "it is a directory"},
        Case{"run " + loop.string() + " --input " + (d / "fifo.npy").string(), "it is a FIFO"},
        Case{"run " + loop.string() + " --input " + d.string(), "it is a directory"}}) {
    // `timeout` keeps a regression (a read that blocks forever) from hanging the suite.
    Result direct = cli_test::run_netspec("timeout 20", c.args);
    EXPECT_EQ(direct.status, 2) << c.args << ": " << direct.out;
    EXPECT_TRUE(has(direct, c.what)) << c.args << ": " << direct.out;
    EXPECT_TRUE(has(direct, "(expected a regular file)")) << c.args << ": " << direct.out;
  }
  fs::remove_all(d);
}

// f(x) = sum(x * x) over n elements; gradient 2x.
fs::path write_square_sum(const fs::path& dir, int n) {
  fs::path p = dir / ("sq" + std::to_string(n) + ".mlir");
  std::string t = "tensor<" + std::to_string(n) + "xf32>";
  std::ofstream(p) << "func.func @main(%x: " + t +
                          ") -> tensor<f32> {\n"
                          "  %0 = stablehlo.multiply %x, %x : " +
                          t +
                          "\n"
                          "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
                          "  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across "
                          "dimensions = [0] : (" +
                          t +
                          ", tensor<f32>) -> tensor<f32>\n"
                          "  return %1 : tensor<f32>\n"
                          "}\n";
  return p;
}

TEST(Hardening, GradcheckSamplesLargeInputsAndSaysHowMany) {
  fs::path d = temp_dir("gc_sample");
  fs::path m = write_square_sum(d, 4096);
  Result r = sh("gradcheck " + m.string() + " --max-coords 50");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r, "4096 elements, 50 checked at random")) << r.out;
  EXPECT_TRUE(has(r, "gradients match")) << r.out;
  Result help = sh("gradcheck --help");
  EXPECT_TRUE(has(help, "--max-coords")) << help.out;
  EXPECT_TRUE(has(help, "1000")) << help.out;
  // Progress lines on stderr once a run takes more than a second; a timeout ends it with exit 2.
  // (65536 coordinates x 2 runs of a 65536-element function: minutes without the timeout.)
  fs::path big = write_square_sum(d, 65536);
  Result slow = sh("gradcheck " + big.string() + " --max-coords 65536 --timeout 3");
  EXPECT_EQ(slow.status, 2) << slow.out;
  EXPECT_TRUE(has(slow, "[gradcheck] ran past the wall-clock limit of 3 s")) << slow.out;
  EXPECT_TRUE(has(slow, "[gradcheck] input 0: ")) << slow.out;
  EXPECT_TRUE(has(slow, " of 65536 coordinates")) << slow.out;
  fs::remove_all(d);
}

TEST(Hardening, GradcheckRefusesBadTolerances) {
  fs::path d = temp_dir("gc_tol");
  fs::path m = write_square_sum(d, 8);
  for (const char* t : {"nan", "-1", "inf"}) {
    Result r = sh("gradcheck " + m.string() + " --tolerance " + t);
    EXPECT_EQ(r.status, 2) << t << ": " << r.out;
    EXPECT_TRUE(has(r, "[gradcheck] --tolerance must be a finite number >= 0"))
        << t << ": " << r.out;
  }
  EXPECT_EQ(sh("gradcheck " + m.string() + " --max-coords 0").status, 2);
  fs::remove_all(d);
}

// dot_general with an `algorithm` clause runs; the algorithm is a hint (the executors compute
// in the operand type): [[1, 2], [3, 4]] . [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
TEST(Hardening, DotGeneralWithAnAlgorithmRuns) {
  fs::path d = temp_dir("dot_alg");
  fs::path p = d / "dot.mlir";
  std::ofstream(p)
      << "func.func @main() -> tensor<2x2xf32> {\n"
         "  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>\n"
         "  %b = stablehlo.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>\n"
         "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <\n"
         "    lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32,\n"
         "    lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1,\n"
         "    allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> "
         "tensor<2x2xf32>\n"
         "  return %0 : tensor<2x2xf32>\n"
         "}\n";
  for (const char* backend : {"ref", "cpu"}) {
    Result r = sh("run " + p.string() + " --backend " + backend);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(has(r, "result0: tensor<2x2xf32> = [19, 22, 43, 50]")) << backend << ": " << r.out;
  }
  fs::remove_all(d);
}

}  // namespace
}  // namespace netspec
