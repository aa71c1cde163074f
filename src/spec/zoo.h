// The bundled model zoo: spec files under models/ (NAME.json). resolve_net() accepts a zoo name
// or a path to a .json file. The zoo directory is $NETSPEC_MODELS_DIR if set, else
// <exe dir>/../share/netspec/models (an installed binary, `cmake --install`), else the source
// tree's models/ (compiled in; a binary run from its build dir), else ./models.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "spec/spec_json.h"

namespace netspec {

std::string zoo_dir();
// zoo_dir()'s rule for a given $NETSPEC_MODELS_DIR (null or empty: unset) and executable path.
std::string zoo_dir_for(const char* env, const std::filesystem::path& exe);
// Sorted zoo net names (file stems).
std::vector<std::string> zoo_names();
// A zoo name ("resnet18") or a path ending in .json. Throws Error listing the zoo on a miss.
SpecFile resolve_net(const std::string& name_or_path);

}  // namespace netspec
