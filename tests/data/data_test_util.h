// Helpers shared by the data tests: a fresh temp directory and the message of a thrown Error.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"

namespace netspec::test {

inline std::string tmpdir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("netspec_data_" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

// A file of the oracle venv's timm package (BUILD_DIR/venv or any build dir's venv under the
// source tree), e.g. "data/mixup.py"; "" if none has it.
inline std::string timm_file(const std::string& rel) {
  namespace fs = std::filesystem;
  std::vector<fs::path> venvs = {fs::path(NETSPEC_BINARY_DIR) / "venv"};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(NETSPEC_SOURCE_DIR) / "build", ec))
    venvs.push_back(e.path() / "venv");
  for (const auto& v : venvs)
    for (const auto& l : fs::directory_iterator(v / "lib", ec))
      if (fs::exists(l.path() / "site-packages/timm" / rel, ec))
        return (l.path() / "site-packages/timm" / rel).string();
  return "";
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace netspec::test
