// Zip archives built in memory for the reader tests (APPNOTE 6.3: local headers, the central
// directory, the end record; zip64 records when asked), so no archive is committed.
#pragma once
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace netspec::test {

inline std::string le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

struct ZipFile {
  std::string name, data;
  bool deflate = false;
  int64_t claimed_size = -1;  // >= 0: the size the headers state instead of data.size()
};

// A zip archive as APPNOTE describes it; zip64 puts every size and offset in zip64 records.
inline std::string make_zip(const std::vector<ZipFile>& files, bool zip64 = false) {
  std::string out, cd;
  for (const ZipFile& f : files) {
    std::string body = f.data;
    if (f.deflate) {
      uLongf n = compressBound(f.data.size()) + 64;
      body.assign(n, '\0');
      z_stream z{};
      deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(f.data.data()));
      z.avail_in = static_cast<uInt>(f.data.size());
      z.next_out = reinterpret_cast<Bytef*>(body.data());
      z.avail_out = static_cast<uInt>(n);
      deflate(&z, Z_FINISH);
      body.resize(z.total_out);
      deflateEnd(&z);
    }
    const uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(f.data.data()), f.data.size());
    const uint64_t size =
        f.claimed_size >= 0 ? static_cast<uint64_t>(f.claimed_size) : f.data.size();
    const uint64_t offset = out.size();
    const uint16_t method = f.deflate ? 8 : 0;
    const uint32_t small = zip64 ? 0xffffffff : 0;
    out += le(0x04034b50, 4) + le(45, 2) + le(0, 2) + le(method, 2) + le(0, 4) + le(crc, 4) +
           le(small ? small : body.size(), 4) + le(small ? small : size, 4) + le(f.name.size(), 2) +
           le(0, 2) + f.name + body;
    const std::string extra =
        zip64 ? le(1, 2) + le(24, 2) + le(size, 8) + le(body.size(), 8) + le(offset, 8) : "";
    cd += le(0x02014b50, 4) + le(45, 2) + le(45, 2) + le(0, 2) + le(method, 2) + le(0, 4) +
          le(crc, 4) + le(small ? small : body.size(), 4) + le(small ? small : size, 4) +
          le(f.name.size(), 2) + le(extra.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
          le(small ? small : offset, 4) + f.name + extra;
  }
  const uint64_t cd_at = out.size();
  out += cd;
  if (zip64) {
    const uint64_t rec_at = out.size();
    out += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) +
           le(files.size(), 8) + le(files.size(), 8) + le(cd.size(), 8) + le(cd_at, 8);
    out += le(0x07064b50, 4) + le(0, 4) + le(rec_at, 8) + le(1, 4);
    out += le(0x06054b50, 4) + le(0, 4) + le(0xffff, 2) + le(0xffff, 2) + le(0xffffffff, 4) +
           le(0xffffffff, 4) + le(0, 2);
  } else {
    out += le(0x06054b50, 4) + le(0, 4) + le(files.size(), 2) + le(files.size(), 2) +
           le(cd.size(), 4) + le(cd_at, 4) + le(0, 2);
  }
  return out;
}

}  // namespace netspec::test
