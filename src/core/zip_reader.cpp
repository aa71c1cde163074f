// Zip archive reading (see zip_reader.h). Layout (APPNOTE 6.3): local headers + data, the central
// directory, then the end-of-central-directory record (EOCD, maybe preceded by zip64's locator).
#include "core/zip_reader.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

#include "core/error.h"

namespace netspec {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEocdSig = 0x06054b50,
                   kZip64LocatorSig = 0x07064b50, kZip64EocdSig = 0x06064b50;

uint64_t le(const std::string& b, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  return v;
}

// Raw deflate (no zlib header) of `in` into exactly `size` bytes. The output grows with what
// zlib actually produces (1 MiB steps), never to the declared size up front: a corrupt stream
// that claims 4 GB fails after the bytes it really holds, not after zero-filling 4 GB.
std::string inflate_raw(const std::string& in, uint64_t size, const std::string& where) {
  constexpr size_t kStep = size_t{1} << 20;
  std::string out;
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) fail("zip", "{}: inflateInit2 failed", where);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  uint64_t in_left = in.size();
  int rc = Z_OK;
  while (rc == Z_OK) {
    // One byte past `size` is room to see a stream longer than declared (no wrap: checked first).
    if (out.size() > size) break;
    const uint64_t want = std::min<uint64_t>(kStep, size - out.size() + 1);
    if (want == 0) break;  // size = 2^64 - 1: refused below with 0 bytes read
    const size_t had = out.size();
    out.resize(had + want);
    const uInt in_now = static_cast<uInt>(std::min<uint64_t>(in_left, UINT_MAX));
    z.avail_in = in_now;
    z.next_out = reinterpret_cast<Bytef*>(out.data() + had);
    z.avail_out = static_cast<uInt>(want);
    rc = inflate(&z, Z_NO_FLUSH);
    in_left -= in_now - z.avail_in;
    out.resize(had + want - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_out != 0) break;  // input ended before the stream did
    if (rc == Z_BUF_ERROR) rc = Z_OK;                  // only the output step was full
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || out.size() != size)
    fail("zip", "{}: corrupt deflate data (zlib code {}, got {} bytes, expected {})", where, rc,
         out.size(), size);
  return out;
}

}  // namespace

bool ZipReader::is_zip(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char sig[4] = {};
  return f.read(sig, 4) && sig[0] == 'P' && sig[1] == 'K' && sig[2] == 3 && sig[3] == 4;
}

std::string ZipReader::read_at(uint64_t offset, uint64_t n, const char* what) {
  if (offset > file_size_ || n > file_size_ - offset)
    fail("zip", "{}: {} lies past the end of the file (bytes {}..{} of {})", path_, what, offset,
         offset + n, file_size_);
  std::string b(n, '\0');
  f_.seekg(static_cast<std::streamoff>(offset));
  if (!f_.read(b.data(), static_cast<std::streamsize>(n)))
    fail("zip", "{}: cannot read {} ({} bytes at {})", path_, what, n, offset);
  return b;
}

ZipReader::ZipReader(const std::string& path) : path_(path), f_(path, std::ios::binary) {
  if (!f_) fail("zip", "{}: cannot open", path);
  f_.seekg(0, std::ios::end);
  file_size_ = static_cast<uint64_t>(f_.tellg());
  // The EOCD is the last 22 bytes plus a comment of at most 65535 bytes.
  const uint64_t tail_n = std::min<uint64_t>(file_size_, 22 + 65535);
  const std::string tail = read_at(file_size_ - tail_n, tail_n, "the end record");
  size_t eocd = std::string::npos;
  if (tail.size() >= 22)
    for (size_t i = tail.size() - 21; i-- > 0;)
      if (le(tail, i, 4) == kEocdSig) {
        eocd = i;
        break;
      }
  if (eocd == std::string::npos)
    fail("zip", "{}: not a zip archive (no end-of-central-directory record)", path);
  uint64_t count = le(tail, eocd + 10, 2), cd_size = le(tail, eocd + 12, 4),
           cd_offset = le(tail, eocd + 16, 4);
  if (count == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {
    // zip64: the locator (20 bytes) precedes the EOCD and points at the zip64 EOCD record.
    if (eocd < 20 || le(tail, eocd - 20, 4) != kZip64LocatorSig)
      fail("zip", "{}: zip64 sizes without a zip64 locator", path);
    const uint64_t rec_at = le(tail, eocd - 20 + 8, 8);
    const std::string rec = read_at(rec_at, 56, "the zip64 end record");
    if (le(rec, 0, 4) != kZip64EocdSig) fail("zip", "{}: bad zip64 end record signature", path);
    count = le(rec, 32, 8);
    cd_size = le(rec, 40, 8);
    cd_offset = le(rec, 48, 8);
  }
  const std::string cd = read_at(cd_offset, cd_size, "the central directory");
  size_t at = 0;
  for (uint64_t k = 0; k < count; ++k) {
    if (at + 46 > cd.size() || le(cd, at, 4) != kCentralSig)
      fail("zip", "{}: central directory entry {} is corrupt", path, k);
    ZipEntry e;
    e.method = static_cast<uint16_t>(le(cd, at + 10, 2));
    e.crc = static_cast<uint32_t>(le(cd, at + 16, 4));
    e.compressed = le(cd, at + 20, 4);
    e.size = le(cd, at + 24, 4);
    const size_t name_n = le(cd, at + 28, 2), extra_n = le(cd, at + 30, 2),
                 comment_n = le(cd, at + 32, 2);
    e.header_offset = le(cd, at + 42, 4);
    if (at + 46 + name_n + extra_n + comment_n > cd.size())
      fail("zip", "{}: central directory entry {} runs past the directory", path, k);
    e.name = cd.substr(at + 46, name_n);
    // zip64 extended information (id 1): the 0xffffffff fields, in this order. Each field's
    // declared length must stay inside the entry's extra area (else it reads past the directory).
    const size_t extra_end = at + 46 + name_n + extra_n;
    for (size_t x = at + 46 + name_n; x + 4 <= extra_end;) {
      const uint64_t id = le(cd, x, 2), n = le(cd, x + 2, 2);
      if (n > extra_end - (x + 4))
        fail("zip",
             "{}: central directory entry {} has an extra field running past its extra area "
             "(got {} bytes, {} left)",
             path, k, n, extra_end - (x + 4));
      size_t p = x + 4;
      if (id == 1) {
        for (uint64_t* field : {&e.size, &e.compressed, &e.header_offset})
          if (*field == 0xffffffff && p + 8 <= x + 4 + n) {
            *field = le(cd, p, 8);
            p += 8;
          }
      }
      x += 4 + n;
    }
    by_name_.try_emplace(e.name, entries_.size());  // the first of equal names, as a scan would
    entries_.push_back(std::move(e));
    at += 46 + name_n + extra_n + comment_n;
  }
  // Entries may not share bytes: directory records pointing into one deflate stream (or at one
  // header) would let a small file inflate to its stream's size once per record (a zip bomb).
  std::vector<const ZipEntry*> by_offset;
  for (const auto& e : entries_) by_offset.push_back(&e);
  std::stable_sort(by_offset.begin(), by_offset.end(), [](const ZipEntry* a, const ZipEntry* b) {
    return a->header_offset < b->header_offset;
  });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const ZipEntry &a = *by_offset[i - 1], &b = *by_offset[i];
    if (a.header_offset > file_size_ || a.compressed > file_size_) continue;  // read() refuses
    // 30-byte local header + data (its name and extra field only move the data further)
    const uint64_t end = a.header_offset + 30 + a.compressed;
    if (end > b.header_offset)
      fail("zip", "{}: entries '{}' and '{}' overlap (bytes {}..{} and from {})", path, a.name,
           b.name, a.header_offset, end, b.header_offset);
  }
}

const ZipEntry* ZipReader::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

std::string ZipReader::read(const std::string& name) {
  const ZipEntry* e = find(name);
  if (!e) fail("zip", "{}: has no entry '{}'", path_, name);
  return read(*e);
}

std::string ZipReader::read(const ZipEntry& e) {
  const std::string where = fmt::format("{}: entry '{}'", path_, e.name);
  const std::string h = read_at(e.header_offset, 30, "a local header");
  if (le(h, 0, 4) != kLocalSig) fail("zip", "{} has a bad local header signature", where);
  const uint64_t data_at = e.header_offset + 30 + le(h, 26, 2) + le(h, 28, 2);
  std::string raw = read_at(data_at, e.compressed, "entry data");
  std::string out;
  if (e.method == 0) {
    if (e.compressed != e.size)
      fail("zip", "{} is stored with two sizes (got {}, expected {})", where, e.compressed, e.size);
    out = std::move(raw);
  } else if (e.method == 8) {
    if (e.size / 1100 > e.compressed + 1)  // deflate expands at most ~1032:1
      fail("zip", "{} claims {} bytes from {} compressed", where, e.size, e.compressed);
    out = inflate_raw(raw, e.size, where);
  } else {
    fail("zip", "{} uses compression method {} (only stored 0 and deflate 8 are read)", where,
         e.method);
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t p = 0; p < out.size(); p += UINT_MAX / 2)  // crc32 takes uInt lengths
    crc = crc32(crc, reinterpret_cast<const Bytef*>(out.data() + p),
                static_cast<uInt>(std::min<size_t>(UINT_MAX / 2, out.size() - p)));
  if (crc != e.crc)
    fail("zip", "{}: CRC-32 mismatch (got {:08x}, expected {:08x})", where, crc, e.crc);
  return out;
}

}  // namespace netspec
