// Position scanner for spec files (see json_pos.h). It assumes syntactically valid JSON (the
// nlohmann parse runs first) and only tracks strings, containers and their paths.
#include "spec/json_pos.h"

#include <vector>

namespace netspec {

JsonPositions::JsonPositions(std::string_view text) : text_(text) {
  struct Frame {
    std::string path;
    bool object;
    int index;            // next array element index
    std::string key;      // last key (objects)
    bool expect_key;
  };
  std::vector<Frame> stack;
  int line = 1, col = 1;
  // Path of the value starting now.
  auto value_path = [&]() -> std::string {
    if (stack.empty()) return "";
    Frame& f = stack.back();
    return f.path + "/" + (f.object ? f.key : std::to_string(f.index));
  };
  auto record_value = [&](const std::string& p) {
    pos_.emplace(p, Location{line, col});
    if (!stack.empty() && !stack.back().object) stack.back().index++;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    Location here{line, col};
    if (ch == '\n') {
      ++line;
      col = 1;
      continue;
    }
    if (ch == '"') {
      size_t j = i + 1;
      std::string s;
      while (j < text.size() && text[j] != '"') {
        if (text[j] == '\\' && j + 1 < text.size()) {
          s += text[j + 1];
          j += 2;
        } else {
          s += text[j++];
        }
      }
      bool is_key = !stack.empty() && stack.back().object && stack.back().expect_key;
      if (is_key) {
        stack.back().key = s;
        stack.back().expect_key = false;
        pos_.emplace(stack.back().path + "/" + s, here);
      } else {
        record_value(value_path());
      }
      col += static_cast<int>(j - i);
      i = j;
      ++col;
      continue;
    }
    if (ch == '{' || ch == '[') {
      std::string p = value_path();
      record_value(p);
      stack.push_back({p, ch == '{', 0, "", ch == '{'});
    } else if (ch == '}' || ch == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (ch == ',') {
      if (!stack.empty() && stack.back().object) stack.back().expect_key = true;
    } else if (ch == '-' || (ch >= '0' && ch <= '9') || ch == 't' || ch == 'f' || ch == 'n') {
      // Scalar: record once at its first character, skip the rest of the token.
      std::string p = value_path();
      if (!stack.empty() && stack.back().object) {
        pos_.emplace(p + "#value", here);
      } else {
        record_value(p);
      }
      while (i + 1 < text.size() && text[i + 1] != ',' && text[i + 1] != '}' &&
             text[i + 1] != ']' && text[i + 1] != '\n' && text[i + 1] != ' ') {
        ++i;
        ++col;
      }
    }
    ++col;
  }
}

Location JsonPositions::at(const std::string& pointer) const {
  std::string p = pointer;
  while (true) {
    auto it = pos_.find(p);
    if (it != pos_.end()) return it->second;
    size_t slash = p.rfind('/');
    if (slash == std::string::npos || p.empty()) return {1, 1};
    p = p.substr(0, slash);
  }
}

Location JsonPositions::of_offset(size_t offset) const {
  Location loc{1, 1};
  for (size_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++loc.line;
      loc.col = 1;
    } else {
      ++loc.col;
    }
  }
  return loc;
}

}  // namespace netspec
