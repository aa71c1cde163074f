// Strict scan of JSON text (see json_strict.h): one pass, a stack of open containers (at most
// kMaxJsonDepth), a key set per open object, one node per value that a pointer can name.
#include "core/json_strict.h"

#include <charconv>
#include <unordered_map>

namespace netspec {
namespace {

void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xf0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

uint32_t hex4(std::string_view t, size_t i) {
  uint32_t v = 0;
  if (i + 4 > t.size() ||
      std::from_chars(t.data() + i, t.data() + i + 4, v, 16).ptr != t.data() + i + 4)
    return 0xfffd;
  return v;
}

// Decodes the string starting after the quote at `i`; returns the index of the closing quote
// (or text.size()). Escapes are decoded so "a" and "\u0061" are the same key.
size_t read_string(std::string_view t, size_t i, std::string& out) {
  size_t j = i + 1;
  while (j < t.size() && t[j] != '"') {
    if (t[j] != '\\' || j + 1 >= t.size()) {
      out += t[j++];
      continue;
    }
    char e = t[j + 1];
    j += 2;
    switch (e) {
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp = hex4(t, j);
        j += 4;
        if (cp >= 0xd800 && cp < 0xdc00 && j + 1 < t.size() && t[j] == '\\' && t[j + 1] == 'u') {
          uint32_t lo = hex4(t, j + 2);
          if (lo >= 0xdc00 && lo < 0xe000) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            j += 6;
          }
        }
        append_utf8(out, cp);
        break;
      }
      default:
        out += e;
    }
  }
  return std::min(j, t.size());
}

}  // namespace

JsonPositions::JsonPositions(std::string_view text, const std::string& file) : text_(text) {
  struct Frame {
    int node;
    bool expect_key;
    std::unordered_map<std::string, Location> keys;  // objects: first position of each key
  };
  std::vector<Frame> stack;
  int member = -1;  // node of the object member whose value comes next
  int line = 1;
  size_t line_start = 0;
  auto here = [&](size_t i) { return Location{line, static_cast<int>(i - line_start) + 1}; };
  // Node of the value starting at `i` (array elements get a new one; members have theirs).
  auto value_node = [&](size_t i) -> int {
    if (stack.empty()) {
      if (!nodes_.empty()) return 0;
      nodes_.push_back({here(i), false, {}});
      return 0;
    }
    Node& parent = nodes_[stack.back().node];
    if (parent.object) {
      int m = member;
      member = -1;
      return m;  // -1 for a value without a key (invalid JSON): not recorded
    }
    int n = static_cast<int>(nodes_.size());
    parent.kids.emplace_back("", n);
    nodes_.push_back({here(i), false, {}});
    return n;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '\n') {
      ++line;
      line_start = i + 1;
    } else if (ch == '"') {
      std::string s;
      size_t end = read_string(text, i, s);
      if (!stack.empty() && nodes_[stack.back().node].object && stack.back().expect_key) {
        Frame& f = stack.back();
        f.expect_key = false;
        auto [it, fresh] = f.keys.emplace(s, here(i));
        if (!fresh)
          throw ParseError(file, here(i),
                           fmt::format("duplicate key \"{}\" (first at {}:{}; each key may appear "
                                       "once per object)",
                                       s, it->second.line, it->second.col));
        member = static_cast<int>(nodes_.size());
        nodes_[f.node].kids.emplace_back(std::move(s), member);
        nodes_.push_back({here(i), false, {}});
      } else {
        value_node(i);
      }
      i = end;
    } else if (ch == '{' || ch == '[') {
      if (static_cast<int>(stack.size()) >= kMaxJsonDepth)
        throw ParseError(file, here(i),
                         fmt::format("JSON nested deeper than {} levels (expected at most {})",
                                     kMaxJsonDepth, kMaxJsonDepth));
      int n = value_node(i);
      if (n < 0) {  // invalid JSON; keep scanning with a throwaway node
        n = static_cast<int>(nodes_.size());
        nodes_.push_back({here(i), false, {}});
      }
      nodes_[n].object = ch == '{';
      stack.push_back({n, ch == '{', {}});
    } else if (ch == '}' || ch == ']') {
      if (!stack.empty()) stack.pop_back();
      member = -1;
    } else if (ch == ',') {
      if (!stack.empty() && nodes_[stack.back().node].object) stack.back().expect_key = true;
    } else if (ch == '-' || (ch >= '0' && ch <= '9') || ch == 't' || ch == 'f' || ch == 'n') {
      value_node(i);
      while (i + 1 < text.size() && text[i + 1] != ',' && text[i + 1] != '}' &&
             text[i + 1] != ']' && text[i + 1] != '\n' && text[i + 1] != ' ' && text[i + 1] != '"')
        ++i;
    }
  }
}

Location JsonPositions::at(const std::string& pointer) const {
  if (nodes_.empty()) return {1, 1};
  int n = 0;
  size_t p = 0;
  while (p < pointer.size() && pointer[p] == '/') {
    size_t e = pointer.find('/', p + 1);
    if (e == std::string::npos) e = pointer.size();
    std::string_view tok(pointer.data() + p + 1, e - p - 1);
    const Node& node = nodes_[n];
    int next = -1;
    if (node.object) {
      for (const auto& [k, idx] : node.kids)
        if (k == tok) next = idx;
    } else {
      size_t k = 0;
      auto r = std::from_chars(tok.data(), tok.data() + tok.size(), k);
      if (r.ec == std::errc() && r.ptr == tok.data() + tok.size() && k < node.kids.size())
        next = node.kids[k].second;
    }
    if (next < 0) break;
    n = next;
    p = e;
  }
  return nodes_[n].loc;
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
