// `netspec compile --iree FILE.mlir -o OUT.vmfb`: hands an emitted StableHLO module to IREE's
// iree-compile with flags chosen from the environment: IREE_BACKEND = llvm-cpu | cuda | rocm
// (default llvm-cpu), IREE_CHIP (llvm-cpu: target cpu, default host; cuda: sm_XX; rocm: gfxNNN),
// IREE_EXTRA_FLAGS (whitespace-separated, appended). iree-compile is found in
// $NETSPEC_IREE_COMPILE, else on PATH, else in <dir of netspec>/venv/bin.
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"

extern char** environ;

namespace netspec::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNotInstalled =
    "iree-compile is not installed (pip install iree-base-compiler, or "
    "scripts/install-oracles.sh)";

struct CompileArgs {
  std::string in, out;
  bool iree = false;
};

std::string env_or(const char* name, const std::string& dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : dflt;
}

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// $NETSPEC_IREE_COMPILE is authoritative when set (no fallback: a wrong path is reported).
std::string find_iree_compile() {
  if (const char* v = std::getenv("NETSPEC_IREE_COMPILE"); v && *v) {
    if (is_executable(v)) return v;
    fail("compile", "{}: NETSPEC_IREE_COMPILE={} is not an executable file", kNotInstalled, v);
  }
  std::string path = env_or("PATH", "");
  std::stringstream ss(path);
  for (std::string dir; std::getline(ss, dir, ':');) {
    if (dir.empty()) continue;
    fs::path p = fs::path(dir) / "iree-compile";
    if (is_executable(p)) return p.string();
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path p = self.parent_path() / "venv" / "bin" / "iree-compile";
    if (is_executable(p)) return p.string();
  }
  fail("compile", "{}; searched $NETSPEC_IREE_COMPILE, PATH and {}/venv/bin", kNotInstalled,
       ec ? std::string("<build dir>") : self.parent_path().string());
}

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string w; ss >> w;) out.push_back(w);
  return out;
}

// The iree-compile argument list (without the program) for the environment's target.
std::vector<std::string> iree_flags(const CompileArgs& a) {
  std::string backend = env_or("IREE_BACKEND", "llvm-cpu");
  std::string chip = env_or("IREE_CHIP", "");
  std::vector<std::string> f{"--iree-hal-target-backends=" + backend};
  if (backend == "llvm-cpu") {
    f.push_back("--iree-llvmcpu-target-cpu=" + (chip.empty() ? std::string("host") : chip));
  } else if (backend == "cuda") {
    if (!chip.empty()) f.push_back("--iree-cuda-target=" + chip);
  } else if (backend == "rocm") {
    if (chip.empty())
      fail("compile", "IREE_BACKEND=rocm needs IREE_CHIP (e.g. gfx942, gfx90a)");
    f.push_back("--iree-rocm-target=" + chip);
  } else {
    fail("compile", "IREE_BACKEND={}: unknown (expected one of llvm-cpu, cuda, rocm)", backend);
  }
  // Keep f64 / i64 modules as written (IREE would otherwise narrow them silently).
  f.push_back("--iree-input-demote-f64-to-f32=false");
  f.push_back("--iree-input-demote-i64-to-i32=false");
  for (std::string& x : split_ws(env_or("IREE_EXTRA_FLAGS", ""))) f.push_back(std::move(x));
  f.push_back("-o");
  f.push_back(a.out);
  f.push_back("--");  // the input last, after `--`: a path starting with '-' is not a flag
  f.push_back(a.in);
  return f;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\n'\"\\$`*?;&|<>()[]{}!#~") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void compile_command(const CompileArgs& a) {
  if (!a.iree) fail("compile", "no target given (expected --iree; the only target so far)");
  std::error_code ec;
  if (!fs::is_regular_file(a.in, ec)) fail("compile", "cannot read '{}' (no such file)", a.in);
  std::string exe = find_iree_compile();
  std::vector<std::string> args = iree_flags(a);
  std::string shown = shell_quote(exe);
  for (const auto& x : args) shown += " " + shell_quote(x);
  fmt::print("{}\n", shown);
  std::fflush(stdout);
  std::vector<char*> argv{exe.data()};
  for (auto& x : args) argv.push_back(x.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (int rc = posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), environ); rc != 0)
    fail("compile", "cannot start {} ({})", exe, std::strerror(rc));
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    fail("compile", "iree-compile failed on '{}' (got {} {}, expected exit 0)", a.in,
         WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
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
      "else <dir of netspec>/venv/bin).");
  cmd->add_option("module", args->in, "StableHLO .mlir file")->required();
  cmd->add_flag("--iree", args->iree, "compile with IREE's iree-compile into a .vmfb");
  cmd->add_option("-o,--output", args->out, "output file (.vmfb)")->required();
  cmd->callback([args] { compile_command(*args); });
}

}  // namespace netspec::cli
