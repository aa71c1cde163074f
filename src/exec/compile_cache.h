// An on-disk cache of compiled executables (the xla backend's; docs/engines.md). An entry is one
// file named by a 128-bit hash of its key (compiler identity, compile options, module text) and
// holds that hash, the key's length, the payload's length and a checksum of the payload. Writes
// are atomic (a unique temporary file renamed into place), so processes sharing the directory
// never read half an entry; a corrupt or foreign entry is ignored with a warning and replaced.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace netspec::exec {

// The default directory: $XDG_CACHE_HOME/netspec/xla, else $HOME/.cache/netspec/xla; "" when
// neither variable is set.
std::string default_compile_cache_dir();

class DiskCompileCache {
 public:
  explicit DiskCompileCache(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // The file that holds key's entry.
  std::string path(std::string_view key) const;
  // The payload stored under key; nullopt when absent, or when the entry is unreadable, truncated,
  // of another key or fails its checksum (those print "[xla] compile cache: ..." to stderr).
  std::optional<std::string> load(std::string_view key) const;
  // Writes key's entry (creating the directory); a failure prints a warning and is otherwise
  // ignored (the cache is an optimisation).
  void store(std::string_view key, std::string_view payload) const;

 private:
  std::string dir_;
};

// 64-bit hash of s (splitmix64 over 8-byte words), distinct per seed.
uint64_t hash_bytes(std::string_view s, uint64_t seed);

}  // namespace netspec::exec
