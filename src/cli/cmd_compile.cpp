// `netspec compile --iree FILE.mlir -o OUT.vmfb`: hands an emitted StableHLO module to IREE's
// iree-compile with flags chosen from the environment: IREE_BACKEND = llvm-cpu | cuda | rocm
// (default llvm-cpu), IREE_CHIP (llvm-cpu: target cpu, default host; cuda: sm_XX; rocm: gfxNNN),
// IREE_EXTRA_FLAGS (whitespace-separated, appended). iree-compile is found in
// $NETSPEC_IREE_COMPILE, else as exec/iree/iree_tools.h finds the tools.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "exec/iree/iree_tools.h"

namespace netspec::cli {
namespace {

namespace fs = std::filesystem;

struct CompileArgs {
  std::string in, out;
  bool iree = false;
};

void compile_command(const CompileArgs& a) {
  if (!a.iree) fail("compile", "no target given (expected --iree; the only target so far)");
  std::error_code ec;
  if (!fs::is_regular_file(a.in, ec)) fail("compile", "cannot read '{}' (no such file)", a.in);
  std::vector<std::string> argv{exec::iree::find_tool("iree-compile", "NETSPEC_IREE_COMPILE")};
  for (std::string& f : exec::iree::compile_flags(a.in, a.out)) argv.push_back(std::move(f));
  std::string shown;
  for (const auto& x : argv) shown += (shown.empty() ? "" : " ") + exec::iree::shell_quote(x);
  fmt::print("{}\n", shown);
  std::fflush(stdout);
  if (int rc = exec::iree::run_tool(argv, ""); rc != 0)
    fail("compile", "iree-compile failed on '{}' (got exit {}, expected exit 0)", a.in, rc);
  fmt::print(stderr, "wrote {} ({} bytes)\n", a.out, fs::file_size(a.out, ec));
}

}  // namespace

void register_compile_command(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compile",
      "Compile a StableHLO module for a real engine. --iree runs iree-compile and writes a "
      ".vmfb.\nEnvironment: IREE_BACKEND = llvm-cpu | cuda | rocm (default llvm-cpu); IREE_CHIP "
      "(llvm-cpu: target cpu, default host; cuda: e.g. sm_80; rocm: e.g. gfx942, required); "
      "IREE_EXTRA_FLAGS (appended); NETSPEC_IREE_COMPILE (the iree-compile binary; else PATH, "
      "else the engines venv, else the oracle venv).");
  cmd->add_option("module", args->in, "StableHLO .mlir file")->required();
  cmd->add_flag("--iree", args->iree, "compile with IREE's iree-compile into a .vmfb");
  cmd->add_option("-o,--output", args->out, "output file (.vmfb)")->required();
  cmd->callback([args] { compile_command(*args); });
}

}  // namespace netspec::cli
