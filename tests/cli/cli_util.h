// Shared helpers for the CLI tests: run the built `netspec` binary through /bin/sh and capture
// its exit status and output, and make a per-process temporary directory.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace netspec::cli_test {

struct Result {
  int status;
  std::string out;  // stdout + stderr
};

// Runs `ENV netspec ARGS` (ENV: shell assignments such as "PATH=", may be empty).
inline Result run_netspec(const std::string& env, const std::string& args) {
  std::string cmd = env + " " + std::string(NETSPEC_BINARY_DIR) + "/netspec " + args + " 2>&1";
  Result r{0, ""};
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline Result sh(const std::string& args) { return run_netspec("", args); }

// A fresh, empty directory under the system temp dir, unique per test process.
inline std::filesystem::path temp_dir(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  fs::path d = fs::temp_directory_path() / (prefix + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace netspec::cli_test
