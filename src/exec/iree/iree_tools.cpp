#include "exec/iree/iree_tools.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

extern char** environ;

namespace netspec::exec::iree {
namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : dflt;
}

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string w; ss >> w;) out.push_back(w);
  return out;
}

std::string not_installed(const std::string& name) {
  return fmt::format(
      "{} is not installed (pip install {}, or scripts/install-engines.sh, or "
      "scripts/install-oracles.sh)",
      name, name == "iree-compile" ? "iree-base-compiler" : "iree-base-runtime");
}

// A venv's runtime tool (bin/iree-run-module) is a Python entry point that starts the wheel's
// binary, VENV/lib/pythonX.Y/site-packages/iree/_runtime_libs/NAME, in a subprocess: run that
// binary directly (one process per call, no Python start-up). "" when there is none.
std::string wheel_binary(const fs::path& script, const std::string& name) {
  std::error_code ec;
  const fs::path lib = script.parent_path().parent_path() / "lib";
  if (name == "iree-compile" || !fs::is_directory(lib, ec)) return "";
  for (const auto& e : fs::directory_iterator(lib, ec)) {
    const fs::path p = e.path() / "site-packages" / "iree" / "_runtime_libs" / name;
    if (e.path().filename().string().rfind("python", 0) == 0 && is_executable(p)) return p.string();
  }
  return "";
}

}  // namespace

std::string find_tool(const std::string& name, const std::string& override_env) {
  if (!override_env.empty())
    if (const char* v = std::getenv(override_env.c_str()); v && *v) {
      if (is_executable(v)) return v;
      fail("iree", "{}: {}={} is not an executable file", not_installed(name), override_env, v);
    }
  std::vector<fs::path> dirs;
  std::stringstream ss(env_or("PATH", ""));
  for (std::string dir; std::getline(ss, dir, ':');)
    if (!dir.empty()) dirs.emplace_back(dir);
  dirs.push_back(fs::path(NETSPEC_ENGINES_DIR) / "venv" / "bin");
  dirs.push_back(fs::path(NETSPEC_BUILD_DIR) / "venv" / "bin");
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back(self.parent_path() / "engines" / "venv" / "bin");
    dirs.push_back(self.parent_path() / "venv" / "bin");
  }
  for (const fs::path& d : dirs)
    if (is_executable(d / name)) {
      const std::string bin = wheel_binary(d / name, name);
      return bin.empty() ? (d / name).string() : bin;
    }
  fail("iree", "{}; searched {}$PATH, {}/venv/bin, {}/venv/bin and beside netspec",
       not_installed(name), override_env.empty() ? "" : "$" + override_env + ", ",
       NETSPEC_ENGINES_DIR, NETSPEC_BUILD_DIR);
}

std::vector<std::string> compile_flags(const std::string& in, const std::string& out) {
  std::string backend = env_or("IREE_BACKEND", "llvm-cpu");
  std::string chip = env_or("IREE_CHIP", "");
  std::vector<std::string> f{"--iree-hal-target-backends=" + backend};
  if (backend == "llvm-cpu") {
    f.push_back("--iree-llvmcpu-target-cpu=" + (chip.empty() ? std::string("host") : chip));
  } else if (backend == "cuda") {
    if (!chip.empty()) f.push_back("--iree-cuda-target=" + chip);
  } else if (backend == "rocm") {
    if (chip.empty()) fail("iree", "IREE_BACKEND=rocm needs IREE_CHIP (e.g. gfx942, gfx90a)");
    f.push_back("--iree-rocm-target=" + chip);
  } else {
    fail("iree", "IREE_BACKEND={}: unknown (expected one of llvm-cpu, cuda, rocm)", backend);
  }
  // Keep f64 / i64 modules as written (IREE would otherwise narrow them silently).
  f.push_back("--iree-input-demote-f64-to-f32=false");
  f.push_back("--iree-input-demote-i64-to-i32=false");
  for (std::string& x : split_ws(env_or("IREE_EXTRA_FLAGS", ""))) f.push_back(std::move(x));
  f.push_back("-o");
  f.push_back(out);
  f.push_back("--");  // the input last, after `--`: a path starting with '-' is not a flag
  f.push_back(in);
  return f;
}

std::string runtime_device() {
  if (const char* v = std::getenv("IREE_DEVICE"); v && *v) return v;
  const std::string backend = env_or("IREE_BACKEND", "llvm-cpu");
  if (backend == "cuda") return "cuda";
  if (backend == "rocm") return "hip";
  return "local-task";
}

int run_tool(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> av;
  std::vector<std::string> copy = argv;
  for (auto& x : copy) av.push_back(x.data());
  av.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!log.empty()) {
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, av[0], &fa, nullptr, av.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) fail("iree", "cannot start {} ({})", argv[0], std::strerror(rc));
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

std::string file_tail(const std::string& path, size_t max) {
  std::ifstream f(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.size() > max ? "..." + s.substr(s.size() - max) : s;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\n'\"\\$`*?;&|<>()[]{}!#~") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace netspec::exec::iree
