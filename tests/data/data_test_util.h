// Helpers shared by the data tests: a fresh temp directory and the message of a thrown Error.
#pragma once
#include <filesystem>
#include <string>

#include "core/error.h"

namespace netspec::test {

inline std::string tmpdir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("netspec_data_" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
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
