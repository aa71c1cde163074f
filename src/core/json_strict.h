// Strict JSON for every file netspec reads (spec files, safetensors headers, config.json). A
// linear scan first refuses nesting deeper than kMaxJsonDepth and duplicate object keys (nlohmann
// keeps the last one silently) with line:col, and records the position of every value and key,
// keyed by JSON pointer ("/layers/3", "/layers/3/ic"; a key's entry points at the key), so
// semantic errors found later can name a line too.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace netspec {

// Deeper than this is refused before parsing (nothing netspec reads nests past ~6 levels).
inline constexpr int kMaxJsonDepth = 64;

class JsonPositions {
 public:
  // Throws ParseError(file, ...) for nesting past kMaxJsonDepth or a duplicate key. Text that
  // is not valid JSON scans without crashing; the nlohmann parse reports its syntax error.
  JsonPositions(std::string_view text, const std::string& file);
  // Position of `pointer`, else of its nearest recorded ancestor, else 1:1.
  Location at(const std::string& pointer) const;
  // Line and column of a byte offset.
  Location of_offset(size_t offset) const;

 private:
  // One node per container and per array element or object member: members hold their key
  // and the key's position, so memory is linear in the text (no per-level path strings).
  struct Node {
    Location loc;
    bool object = false;
    std::vector<std::pair<std::string, int>> kids;  // key ("" in arrays) -> node index
  };
  std::string_view text_;
  std::vector<Node> nodes_;  // nodes_[0] is the root value
};

// Parses `text` as J (nlohmann::json or ordered_json) after the strict scan `pos` made of the
// same text; syntax errors become ParseError(file, line:col, ...).
template <class J>
J parse_json_checked(std::string_view text, const std::string& file, const JsonPositions& pos) {
  try {
    return J::parse(text.begin(), text.end());
  } catch (const typename J::parse_error& e) {
    std::string msg = e.what();
    if (auto p = msg.find("syntax error"); p != std::string::npos) msg = msg.substr(p);
    throw ParseError(file, pos.of_offset(e.byte > 0 ? e.byte - 1 : 0), msg);
  } catch (const typename J::exception& e) {  // e.g. a number beyond double's range
    throw Error(fmt::format("[json] {}: {}", file, e.what()));
  }
}

template <class J>
J parse_json_strict(std::string_view text, const std::string& file) {
  return parse_json_checked<J>(text, file, JsonPositions(text, file));
}

}  // namespace netspec
