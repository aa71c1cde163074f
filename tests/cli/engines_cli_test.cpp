// `--backend xla|iree` through the CLI: results equal --backend cpu's on examples/mlp.mlir,
// replicas get one PJRT device each, and a missing plugin or a bad `--steps-per-call` exit 2
// naming the reason. The engine runs skip with a message without scripts/install-engines.sh.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_util.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

const std::string kExample = std::string(NETSPEC_SOURCE_DIR) + "/examples/mlp.mlir";

bool have_xla() {
  return fs::exists(fs::path(NETSPEC_BINARY_DIR) / "engines/pjrt/pjrt_c_api_cpu_plugin.so") &&
         sh("run " + kExample + " --backend xla").status == 0;
}

// The "result0: ..." line of a run's output.
std::string result_line(const std::string& out) {
  size_t p = out.find("result0:");
  return p == std::string::npos ? "" : out.substr(p, out.find('\n', p) - p);
}

TEST(EnginesCli, MissingPluginAndBadStepsPerCallExit2) {
  Result r = sh("run " + kExample + " --backend xla --pjrt-plugin /nonexistent/plugin.so");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(r.out.find("[xla] --pjrt-plugin /nonexistent/plugin.so: no such file") !=
                  std::string::npos ||
              r.out.find("built without PJRT support") != std::string::npos)
      << r.out;
  r = sh("train mlp --backend iree --steps-per-call 0 --epochs 1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("[train] --steps-per-call must be in 1..4096 (got 0)"), std::string::npos)
      << r.out;
  r = sh("run " + kExample + " --backend tpu");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("unknown backend 'tpu' (known: cpu, iree, ref"), std::string::npos) << r.out;
}

TEST(EnginesCli, XlaRunEqualsCpuAndReplicates) {
  if (!have_xla()) GTEST_SKIP() << "no xla backend (scripts/install-engines.sh)";
  const Result cpu = sh("run " + kExample + " --backend cpu");
  const Result xla = sh("run " + kExample + " --backend xla");
  ASSERT_EQ(xla.status, 0) << xla.out;
  EXPECT_FALSE(result_line(cpu.out).empty()) << cpu.out;
  EXPECT_EQ(result_line(xla.out), result_line(cpu.out));
  // Two replicas on two PJRT CPU devices (the module has no all_reduce: equal results).
  const Result rep = sh("run " + kExample + " --backend xla --replicas 2");
  ASSERT_EQ(rep.status, 0) << rep.out;
  EXPECT_NE(rep.out.find("replica1.result0:"), std::string::npos) << rep.out;
}

}  // namespace
}  // namespace netspec::cli_test
