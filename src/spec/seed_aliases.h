// The seed's TrainConfig field names and units, read into netspec's (the one alias table; the
// CLI's --set shorthands such as lr are separate, in src/cli). A spec file written for the seed
// loads: each seed field is rewritten into the netspec field(s) it means, with one line saying
// so ("seed field useAdam=true read as optimizer=adam"), and a seed field with no equivalent is
// refused by name. docs/spec-format.md ("Seed field names") lists every alias and conversion.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace netspec {

// A seed field that cannot be read: `key` is the train object's key to point the error at.
struct SeedFieldError : std::runtime_error {
  SeedFieldError(std::string key_, const std::string& message)
      : std::runtime_error(message), key(std::move(key_)) {}
  std::string key;
};

// The net's input size, for the seed's anchors (relative to the image); 0 when unknown (a
// --config file holds no net), where relative anchors are refused.
struct SeedImageSize {
  int64_t height = 0, width = 0;
};

// Rewrites train object `t` in place: seed names -> netspec names, seed units -> netspec's.
// Returns one line per converted field (empty for a netspec-only object). Throws
// SeedFieldError for a seed field without an equivalent, of the wrong type, or clashing with
// the netspec field it maps to.
std::vector<std::string> convert_seed_fields(nlohmann::json& t, SeedImageSize image);

// The seed-only field names (those netspec does not spell the same way).
const std::vector<std::string>& seed_only_field_names();

}  // namespace netspec
