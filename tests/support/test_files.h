// Small file helpers shared by the tests: a fresh scratch directory and a whole-file read.
#pragma once
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace netspec::test_util {

// A fresh, empty directory netspec_<prefix>_<name> under the (per-process scratch) temp dir.
inline std::filesystem::path fresh_dir(const std::string& prefix, const std::string& name) {
  std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("netspec_" + prefix + "_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// The bytes of a file ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

}  // namespace netspec::test_util
