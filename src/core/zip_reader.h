// Reading entries of a zip archive (PKZIP: central directory, stored or deflated entries, zip64),
// enough for the archives torch.save writes (stored, 64-byte aligned, zip64 past 4 GiB). Entries
// are read on demand from the open file; each one's CRC-32 is checked. Errors name the archive
// and the entry: `[zip] w.pth: entry 'w/data/3' is truncated (got 10 bytes, expected 64)`.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace netspec {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint32_t crc = 0;
  uint64_t compressed = 0, size = 0;
  uint64_t header_offset = 0;  // of the local file header
};

class ZipReader {
 public:
  // Reads the central directory; fails when `path` is not a zip archive.
  explicit ZipReader(const std::string& path);
  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(const std::string& name) const;  // nullptr when absent
  std::string read(const std::string& name);            // fails naming the entry when absent
  std::string read(const ZipEntry& e);

  // True when the file starts with a zip local-file-header signature ("PK\3\4").
  static bool is_zip(const std::string& path);

 private:
  std::string path_;
  std::ifstream f_;
  uint64_t file_size_ = 0;
  std::vector<ZipEntry> entries_;
  std::unordered_map<std::string, size_t> by_name_;  // index into entries_ (one lookup per storage)
  std::string read_at(uint64_t offset, uint64_t n, const char* what);
};

}  // namespace netspec
