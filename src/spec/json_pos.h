// Internal: a light scan of JSON text that records the line:column of every value and object
// key, keyed by JSON pointer ("/layers/3", "/layers/3/ic"; a key's entry points at the key).
// nlohmann reports positions only for syntax errors; semantic errors look positions up here.
#pragma once
#include <map>
#include <string>
#include <string_view>

#include "core/error.h"

namespace netspec {

class JsonPositions {
 public:
  explicit JsonPositions(std::string_view text);
  // Position of `pointer`, else of its nearest recorded ancestor, else 1:1.
  Location at(const std::string& pointer) const;
  // Line and column of a byte offset.
  Location of_offset(size_t offset) const;

 private:
  std::string_view text_;
  std::map<std::string, Location> pos_;
};

}  // namespace netspec
