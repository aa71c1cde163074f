// Errors. Every user-facing failure is a netspec::Error whose message reads
// `[where] what is wrong (got X, expected Y)`; the CLI prints it and exits with status 2.
// ParseError carries a source location and prints as `file:line:col: error: message`.
#pragma once
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace netspec {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// Location in a text file (1-based); line 0 means "unknown".
struct Location {
  int line = 0;
  int col = 0;
};

class ParseError : public Error {
 public:
  ParseError(const std::string& file, Location loc, const std::string& msg)
      : Error(fmt::format("{}:{}:{}: error: {}", file, loc.line, loc.col, msg)),
        file_(file), loc_(loc), bare_(msg) {}
  const std::string& file() const { return file_; }
  Location location() const { return loc_; }
  const std::string& bare_message() const { return bare_; }

 private:
  std::string file_;
  Location loc_;
  std::string bare_;
};

// fail("dot_general", "contracting dims differ (got {} vs {})", a, b) throws
// Error("[dot_general] contracting dims differ (got 784 vs 512)").
template <typename... Args>
[[noreturn]] void fail(std::string_view where, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format("[{}] {}", where, fmt::format(f, std::forward<Args>(args)...)));
}

}  // namespace netspec
