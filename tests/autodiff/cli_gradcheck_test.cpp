// `netspec gradcheck` end to end: exit 0 on a correct gradient, 1 on a mismatch (a staircase the
// rules call flat), 2 on bad input (an op without a VJP rule, an unknown --wrt). Skips when the
// netspec binary has not been built in this build tree.
#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include "hlo/text/printer.h"
#include "test_util.h"

namespace netspec::autodiff::testing {
namespace {

std::string netspec_binary() { return std::string(NETSPEC_BINARY_DIR) + "/netspec"; }

// Runs the command; returns its exit status and stdout+stderr.
std::pair<int, std::string> run(const std::string& args) {
  std::string cmd = netspec_binary() + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

std::string write_module(const hlo::Module& m, const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "netspec_gradcheck_test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / name).string();
  std::ofstream(path) << hlo::print_module(m);
  return path;
}

class GradcheckCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(netspec_binary())) GTEST_SKIP() << "netspec binary not built";
  }
};

// A text module with an RNN loop: counted (5 turns), its gradient checks on both executors;
// with a computed bound, the refusal names the loop's line and column and the exit status is 2.
TEST_F(GradcheckCli, ChecksACountedLoopAndRefusesAnUncountedOneWithItsPlace) {
  const std::string text = R"(module @rnn {
  func.func public @main(%h0: tensor<4xf32>, %w: tensor<4x4xf32>) -> tensor<4xf32> {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.while(%i = %c0, %h = %h0) : tensor<i32>, tensor<4xf32>
     cond {
      %n = stablehlo.constant dense<5> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %wh = stablehlo.dot_general %w, %h, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %t = stablehlo.tanh %wh : tensor<4xf32>
      stablehlo.return %i1, %t : tensor<i32>, tensor<4xf32>
    }
    return %r#1 : tensor<4xf32>
  }
}
)";
  auto dir = std::filesystem::temp_directory_path() / "netspec_gradcheck_test";
  std::filesystem::create_directories(dir);
  const std::string counted = (dir / "rnn.mlir").string(), open = (dir / "rnn_open.mlir").string();
  std::ofstream(counted) << text;
  std::string computed = text;
  const std::string bound = "%n = stablehlo.constant dense<5> : tensor<i32>";
  computed.replace(computed.find(bound), bound.size(),
                   "%n = stablehlo.multiply %i, %i : tensor<i32>");
  std::ofstream(open) << computed;
  for (const char* backend : {"ref", "cpu"}) {
    auto [rc, out] = run("gradcheck " + counted + " --backend " + backend);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("gradients match"), std::string::npos) << out;
  }
  auto [rc, out] = run("gradcheck " + open);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("stablehlo.while (line 4, column 12)"), std::string::npos) << out;
  EXPECT_NE(out.find("static trip count"), std::string::npos) << out;
}

TEST_F(GradcheckCli, PassesOnACorrectGradient) {
  auto m = make_module({f32({3, 4}), f32({4, 2})}, [](Builder& b, auto a) {
    hlo::DotDims mm{{}, {}, {1}, {0}};
    return std::vector<Value*>{b.tanh(b.dot_general(a[0], a[1], mm))};
  });
  auto [rc, out] = run("gradcheck " + write_module(*m, "ok.mlir") + " --seed 3 --backend ref");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("input 0"), std::string::npos) << out;
  EXPECT_NE(out.find("input 1"), std::string::npos) << out;
  EXPECT_NE(out.find("gradients match"), std::string::npos) << out;
  std::tie(rc, out) = run("gradcheck " + write_module(*m, "ok.mlir") + " --wrt %arg1");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out.find("input 0"), std::string::npos) << out;
  std::tie(rc, out) = run("gradcheck --help");
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("1e-6"), std::string::npos) << out;  // the tolerance is stated
}

TEST_F(GradcheckCli, ExitsOneOnAMismatch) {
  // floor(x·1e5): the rule says 0 (piecewise constant), but a step of h = 1e-5 crosses a stair.
  auto m = make_module({f32({3})}, [](Builder& b, auto a) {
    Value* s = b.floor(b.multiply(a[0], b.constant_splat(1e5, a[0]->type)));
    return std::vector<Value*>{b.add(s, a[0])};
  });
  auto [rc, out] = run("gradcheck " + write_module(*m, "bad.mlir"));
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("FAILED"), std::string::npos) << out;
}

TEST_F(GradcheckCli, ExitsTwoOnBadInput) {
  auto m = make_module({f32({3})}, [](Builder& b, auto a) {
    return b.map({a[0]}, {0}, [](Builder& rb, const std::vector<Value*>& x) {
      return std::vector<Value*>{rb.multiply(rb.reshape(x[0], {}), x[0])};  // not liftable
    });
  });
  auto [rc, out] = run("gradcheck " + write_module(*m, "map.mlir"));
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("stablehlo.map"), std::string::npos) << out;
  std::tie(rc, out) = run("gradcheck " + write_module(*m, "map.mlir") + " --wrt %arg7");
  EXPECT_EQ(rc, 2) << out;
  std::tie(rc, out) = run("gradcheck /nonexistent/file.mlir");
  EXPECT_EQ(rc, 2) << out;
}

}  // namespace
}  // namespace netspec::autodiff::testing
