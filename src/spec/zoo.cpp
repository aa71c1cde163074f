// Zoo lookup (see zoo.h).
#include "spec/zoo.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "core/nearest_name.h"

#ifndef NETSPEC_MODELS_DIR
#define NETSPEC_MODELS_DIR "models"
#endif
#ifndef NETSPEC_MODELS_REL
#define NETSPEC_MODELS_REL "../share/netspec/models"
#endif

namespace netspec {
namespace fs = std::filesystem;

std::string zoo_dir_for(const char* env, const fs::path& exe) {
  if (env && *env) return env;
  if (!exe.empty()) {
    fs::path installed = exe.parent_path() / NETSPEC_MODELS_REL;
    if (fs::is_directory(installed)) return installed.lexically_normal().string();
  }
  if (fs::is_directory(NETSPEC_MODELS_DIR)) return NETSPEC_MODELS_DIR;
  return "models";
}

std::string zoo_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return zoo_dir_for(std::getenv("NETSPEC_MODELS_DIR"), ec ? fs::path() : exe);
}

std::vector<std::string> zoo_names() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(zoo_dir(), ec))
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

SpecFile resolve_net(const std::string& name) {
  if (name.size() > 5 && name.ends_with(".json")) return load_spec_file(name);
  fs::path p = fs::path(zoo_dir()) / (name + ".json");
  if (fs::exists(p)) return load_spec_file(p.string());
  const std::vector<std::string> names = zoo_names();
  std::string all;
  for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
  fail("net", "unknown net '{}'{} (expected a .json file or one of {})", name,
       did_you_mean(name, names), all.empty() ? "<zoo is empty>" : all);
}

}  // namespace netspec
