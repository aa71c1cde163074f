// `netspec compile --iree`: the not-installed message, flags chosen from the environment (checked
// with a stand-in iree-compile script that records its arguments), and a real compile of a tiny
// module to a non-empty .vmfb when BUILD_DIR/venv (scripts/install-oracles.sh) exists.
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

namespace netspec {
namespace {

namespace fs = std::filesystem;
using cli_test::Result;
using cli_test::run_netspec;
using cli_test::sh;

fs::path temp_dir(const std::string& name) { return cli_test::temp_dir("netspec_compile_", name); }

const char* kTiny =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n";

fs::path write_tiny(const fs::path& dir) {
  fs::path p = dir / "tiny.mlir";
  std::ofstream(p) << kTiny;
  return p;
}

// A stand-in iree-compile: writes its arguments, one a line, to the file after -o.
fs::path fake_iree(const fs::path& dir) {
  fs::path p = dir / "fake-iree-compile";
  std::ofstream(p) << "#!/bin/sh\nout=\nprev=\nfor a in \"$@\"; do\n"
                      "  [ \"$prev\" = -o ] && out=$a\n  prev=$a\ndone\n"
                      "for a in \"$@\"; do echo \"$a\"; done > \"$out\"\n";
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const std::string kMessage = "iree-compile is not installed (pip install iree-base-compiler";

TEST(CompileCommand, NotInstalledSaysSoAndExits2) {
  fs::path d = temp_dir("missing");
  fs::path in = write_tiny(d);
  std::string args = "compile --iree " + in.string() + " -o " + (d / "t.vmfb").string();
  // An empty PATH and an explicit, missing binary: never found, whatever the build dir holds.
  Result r = run_netspec("PATH= NETSPEC_IREE_COMPILE=/nonexistent/iree-compile", args);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(kMessage), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scripts/install-oracles.sh"), std::string::npos) << r.out;
  // An empty PATH alone: not installed unless BUILD_DIR/venv/bin or engines/venv/bin holds it.
  if (!fs::exists(fs::path(NETSPEC_BINARY_DIR) / "venv/bin/iree-compile") &&
      !fs::exists(fs::path(NETSPEC_BINARY_DIR) / "engines/venv/bin/iree-compile")) {
    r = run_netspec("PATH= NETSPEC_IREE_COMPILE=", args);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find(kMessage), std::string::npos) << r.out;
  }
  EXPECT_FALSE(fs::exists(d / "t.vmfb"));
}

// An input path that starts with '-' reaches iree-compile after `--`, so it is not read as a flag.
TEST(CompileCommand, DashPathIsPassedAfterDoubleDash) {
  fs::path d = temp_dir("dash");
  fs::path fake = fake_iree(d);
  std::ofstream(d / "-net.mlir") << kTiny;
  Result r = run_netspec("cd " + d.string() + " && NETSPEC_IREE_COMPILE=" + fake.string() +
                             " IREE_BACKEND= IREE_CHIP= IREE_EXTRA_FLAGS=",
                         "compile --iree -o out.vmfb -- -net.mlir");
  ASSERT_EQ(r.status, 0) << r.out;
  std::string got = read(d / "out.vmfb");
  EXPECT_NE(got.find("-o\nout.vmfb\n--\n-net.mlir\n"), std::string::npos) << got;
  EXPECT_EQ(got.substr(got.size() - std::string("--\n-net.mlir\n").size()), "--\n-net.mlir\n");
}

TEST(CompileCommand, FlagsComeFromTheEnvironment) {
  fs::path d = temp_dir("flags");
  fs::path in = write_tiny(d), fake = fake_iree(d), out = d / "t.vmfb";
  std::string args = "compile --iree " + in.string() + " -o " + out.string();
  std::string base = "NETSPEC_IREE_COMPILE=" + fake.string();

  Result r = run_netspec(base + " IREE_BACKEND= IREE_CHIP= IREE_EXTRA_FLAGS=", args);
  ASSERT_EQ(r.status, 0) << r.out;
  std::string got = read(out);
  EXPECT_EQ(got,
            "--iree-hal-target-backends=llvm-cpu\n--iree-llvmcpu-target-cpu=host\n"
            "--iree-input-demote-f64-to-f32=false\n--iree-input-demote-i64-to-i32=false\n"
            "-o\n" +
                out.string() + "\n--\n" + in.string() + "\n");
  // The command is printed before it runs.
  EXPECT_NE(r.out.find(fake.string() + " --iree-hal-target-backends=llvm-cpu"), std::string::npos)
      << r.out;

  r = run_netspec(base + " IREE_BACKEND=cuda IREE_CHIP=sm_80 IREE_EXTRA_FLAGS='--x=1  --y'", args);
  ASSERT_EQ(r.status, 0) << r.out;
  got = read(out);
  EXPECT_NE(got.find("--iree-hal-target-backends=cuda\n--iree-cuda-target=sm_80\n"),
            std::string::npos) << got;
  EXPECT_NE(got.find("--x=1\n--y\n-o\n" + out.string() + "\n--\n" + in.string()), std::string::npos)
      << got;

  r = run_netspec(base + " IREE_BACKEND=rocm IREE_CHIP=gfx942", args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(read(out).find("--iree-hal-target-backends=rocm\n--iree-rocm-target=gfx942\n"),
            std::string::npos);

  r = run_netspec(base + " IREE_BACKEND=rocm IREE_CHIP=", args);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("IREE_BACKEND=rocm needs IREE_CHIP"), std::string::npos) << r.out;
  r = run_netspec(base + " IREE_BACKEND=tpu", args);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("IREE_BACKEND=tpu: unknown"), std::string::npos) << r.out;
  // No target, or a missing input: usage errors.
  EXPECT_EQ(run_netspec(base, "compile " + in.string() + " -o " + out.string()).status, 2);
  EXPECT_EQ(run_netspec(base, "compile --iree " + (d / "nope.mlir").string() + " -o x").status, 2);
}

TEST(CompileCommand, RealIreeCompileWritesVmfb) {
  fs::path iree = fs::path(NETSPEC_BINARY_DIR) / "venv/bin/iree-compile";
  if (!fs::exists(iree)) GTEST_SKIP() << "no " << iree << " (scripts/install-oracles.sh)";
  fs::path d = temp_dir("real");
  fs::path in = write_tiny(d), out = d / "tiny.vmfb";
  Result r = run_netspec("PATH= NETSPEC_IREE_COMPILE= IREE_BACKEND= IREE_CHIP= IREE_EXTRA_FLAGS=",
                         "compile --iree " + in.string() + " -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("venv/bin/iree-compile --iree-hal-target-backends=llvm-cpu"),
            std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(out));
  EXPECT_GT(fs::file_size(out), 0u);
  // A module IREE rejects: exit 2 with the reason.
  fs::path bad = d / "bad.mlir";
  std::ofstream(bad) << "func.func @main( {\n";
  r = run_netspec("PATH= NETSPEC_IREE_COMPILE=", "compile --iree " + bad.string() + " -o " +
                                                     (d / "bad.vmfb").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("iree-compile failed"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace netspec
