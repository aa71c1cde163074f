// On-disk compile cache (see compile_cache.h).
#include "exec/compile_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/hash.h"

namespace netspec::exec {
namespace {

namespace fs = std::filesystem;
constexpr char kMagic[8] = {'N', 'S', 'C', 'C', '0', '0', '0', '1'};
constexpr size_t kHeader = 8 + 5 * 8;  // magic, key hash (2), key size, payload size, checksum

void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t get_u64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(s[at + i])) << (8 * i);
  return v;
}

void warn(const std::string& what) { std::cerr << "[xla] compile cache: " << what << "\n"; }

}  // namespace

uint64_t hash_bytes(std::string_view s, uint64_t seed) {
  uint64_t h = splitmix64(seed ^ splitmix64(s.size()));
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = splitmix64(h ^ w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  return splitmix64(h ^ tail ^ 0xff);
}

std::string default_compile_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (fs::path(x) / "netspec" / "xla").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".cache" / "netspec" / "xla").string();
  return "";
}

std::string DiskCompileCache::path(std::string_view key) const {
  return (fs::path(dir_) /
          fmt::format("{:016x}{:016x}.xlaexe", hash_bytes(key, 1), hash_bytes(key, 2)))
      .string();
}

std::optional<std::string> DiskCompileCache::load(std::string_view key) const {
  const std::string p = path(key);
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string s = ss.str();
  auto bad = [&](const char* why) {
    warn(fmt::format("ignoring {} ({}); recompiling", p, why));
    return std::nullopt;
  };
  if (!f || s.size() < kHeader || std::memcmp(s.data(), kMagic, 8) != 0)
    return bad("not a netspec compile cache entry");
  if (get_u64(s, 8) != hash_bytes(key, 1) || get_u64(s, 16) != hash_bytes(key, 2) ||
      get_u64(s, 24) != key.size())
    return bad("written for another key");
  const uint64_t n = get_u64(s, 32);
  if (n != s.size() - kHeader) return bad("truncated or padded");
  std::string payload = s.substr(kHeader);
  if (get_u64(s, 40) != hash_bytes(payload, 3)) return bad("checksum mismatch");
  return payload;
}

void DiskCompileCache::store(std::string_view key, std::string_view payload) const {
  static std::atomic<uint64_t> counter{0};
  std::string s(kMagic, 8);
  put_u64(s, hash_bytes(key, 1));
  put_u64(s, hash_bytes(key, 2));
  put_u64(s, key.size());
  put_u64(s, payload.size());
  put_u64(s, hash_bytes(payload, 3));
  s.append(payload);
  const std::string p = path(key);
  // Unique per process and call: concurrent writers of one entry never share a temporary file.
  const std::string tmp = fmt::format("{}.{}.{}.tmp", p, ::getpid(), counter++);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  // Exclusive and never through a link planted at the temporary name (as write_file_atomic).
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  size_t done = 0;
  while (fd >= 0 && done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  bool ok = fd >= 0 && done == s.size();
  if (fd >= 0 && ::close(fd) != 0) ok = false;
  if (!ok) {
    if (fd >= 0) ::unlink(tmp.c_str());
    warn(fmt::format("cannot write {} (not cached)", tmp));
    return;
  }
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    warn(fmt::format("cannot rename {} to {} (not cached)", tmp, p));
  }
}

}  // namespace netspec::exec
