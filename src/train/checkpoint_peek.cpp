// A checkpoint's epochs from its header (see checkpoint_peek.h).
#include "train/checkpoint_peek.h"

#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_check.h"

namespace netspec::train {
namespace {

// Reads exactly n bytes (false on a short file or an error).
bool read_exact(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

std::optional<int> checkpoint_epochs(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  int fd = -1;
  try {
    fd = open_regular_file("train", path);
  } catch (const Error&) {
    return std::nullopt;
  }
  std::string header;
  uint64_t n = 0;
  char len[8];
  bool ok = read_exact(fd, len, 8);
  if (ok) std::memcpy(&n, len, 8);  // little-endian length of the JSON header
  ok = ok && n > 0 && n <= (64u << 20);
  if (ok) {
    header.resize(n);
    ok = read_exact(fd, header.data(), n);
  }
  ::close(fd);
  if (!ok) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(header);
    const std::string e = j.at("__metadata__").at("epoch").get<std::string>();
    int epochs = 0;
    auto [p, err] = std::from_chars(e.data(), e.data() + e.size(), epochs);
    if (err != std::errc() || p != e.data() + e.size() || epochs < 0) return std::nullopt;
    return epochs;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace netspec::train
