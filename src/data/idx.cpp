// IDX reader: big-endian header (0, 0, type 0x08 = ubyte, ndims), dims as big-endian u32, data.
#include "data/idx.h"

#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/file_check.h"

namespace netspec::data {
namespace {

uint32_t be32(const std::string& b, size_t off) {
  auto u = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(b[off + i])); };
  return (u(0) << 24) | (u(1) << 16) | (u(2) << 8) | u(3);
}

// Checks the header (the first 4 + 4 * ndims bytes of `b`) and returns the dims. `most` is the
// number of bytes the file can hold at all: dims past it are refused before their product can
// overflow, and before any data is read or allocated.
std::vector<int64_t> parse_header(const std::string& b, const std::string& path, int want_dims,
                                  uint64_t most, const std::string& most_text) {
  if (b.size() < 4) fail("idx", "{}: too short for an IDX header (got {} bytes)", path, b.size());
  if (b[0] != 0 || b[1] != 0)
    fail("idx", "{}: bad magic (got {:02x}{:02x}, expected 0000)", path, static_cast<uint8_t>(b[0]),
         static_cast<uint8_t>(b[1]));
  if (static_cast<uint8_t>(b[2]) != 0x08)
    fail("idx", "{}: element type is not ubyte (got 0x{:02x}, expected 0x08)", path,
         static_cast<uint8_t>(b[2]));
  int nd = static_cast<uint8_t>(b[3]);
  if (nd != want_dims) fail("idx", "{}: wrong rank (got {}, expected {})", path, nd, want_dims);
  size_t hdr = 4 + 4 * static_cast<size_t>(nd);
  if (b.size() < hdr)
    fail("idx", "{}: truncated header (got {} bytes, expected {})", path, b.size(), hdr);
  std::vector<int64_t> dims;
  int64_t total = 1;
  for (int i = 0; i < nd; ++i) {
    dims.push_back(be32(b, 4 + 4 * i));
    if (__builtin_mul_overflow(total, dims.back(), &total) || static_cast<uint64_t>(total) > most)
      fail("idx", "{}: truncated (got {}, the header's dims [{}] need more)", path, most_text,
           fmt::join(dims, ", "));
  }
  return dims;
}

// The header and data of an IDX file, inflated when it is gzip (zlib reads raw files unchanged).
// The header is read and checked first; then at most the bytes its dims declare (+1 to see
// trailing bytes) are inflated, so a bad or lying header costs no more than its own 16 bytes.
std::string read_idx_file(const std::string& path, int want_dims) {
  // Checked before opening: a FIFO or a device is refused by name, never read (or waited on).
  int fd = open_regular_file("idx", path);
  struct stat st {};
  const uint64_t file_size = ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  gzFile f = gzdopen(fd, "rb");
  if (!f) {
    ::close(fd);
    fail("idx", "{}: cannot open", path);
  }
  struct Closer {
    gzFile f;
    ~Closer() {
      if (f) gzclose(f);
    }
  } closer{f};
  std::string b;
  // Appends up to n bytes, 1 MiB at a time: memory follows the data that really arrives.
  auto append = [&](uint64_t n) {
    for (uint64_t left = n; left > 0;) {
      const size_t step = static_cast<size_t>(std::min<uint64_t>(left, size_t{1} << 20));
      const size_t had = b.size();
      b.resize(had + step);
      const int got = gzread(f, b.data() + had, static_cast<unsigned>(step));
      if (got < 0) {
        int code = 0;
        fail("idx", "{}: corrupt gzip data ({})", path, gzerror(f, &code));
      }
      b.resize(had + static_cast<size_t>(got));
      if (static_cast<size_t>(got) < step) return;
      left -= step;
    }
  };
  append(4);
  if (b.size() == 4) append(4 * static_cast<uint64_t>(static_cast<uint8_t>(b[3])));
  // Deflate expands at most ~1032:1, so a gzip file of n bytes holds less than 1032n + 1 KiB.
  const bool raw = gzdirect(f) == 1;
  const uint64_t most = raw ? file_size : file_size * 1032 + 1024;
  const std::string most_text =
      raw ? fmt::format("{} bytes", file_size)
          : fmt::format("a gzip file of {} bytes, which inflates to at most {}", file_size, most);
  const std::vector<int64_t> dims = parse_header(b, path, want_dims, most, most_text);
  const size_t hdr = b.size();
  uint64_t total = 1;
  for (int64_t d : dims) total *= static_cast<uint64_t>(d);  // <= most: checked above
  append(total + 1);
  // A truncated .gz stream reads as a short file with Z_BUF_ERROR at close.
  closer.f = nullptr;
  if (int rc = gzclose(f); rc != Z_OK && b.size() <= hdr + total)
    fail("idx", "{}: truncated or corrupt gzip stream (zlib code {})", path, rc);
  if (b.size() < hdr + total)
    fail("idx", "{}: truncated (got {} bytes, expected {})", path, b.size(), hdr + total);
  if (b.size() > hdr + total)
    fail("idx", "{}: trailing bytes (more than the {} bytes expected)", path, hdr + total);
  return b;
}

// The dims of a header read_idx_file has checked.
std::vector<int64_t> read_dims(const std::string& b, int nd) {
  std::vector<int64_t> d;
  for (int i = 0; i < nd; ++i) d.push_back(be32(b, 4 + 4 * static_cast<size_t>(i)));
  return d;
}

std::string find_file(const std::string& dir, const std::string& stem) {
  namespace fs = std::filesystem;
  for (const char* ext : {".gz", ""}) {
    fs::path p = fs::path(dir) / (stem + ext);
    std::error_code ec;  // a link loop is named, not thrown as a raw filesystem error
    const bool there = fs::exists(p, ec);
    if (ec) fail("idx", "{}: cannot follow ({})", p.string(), ec.message());
    if (there) return p.string();
  }
  fail("idx", "{}: no {}[.gz] (install dataset-fashion-mnist or pass --data DIR)", dir, stem);
}

}  // namespace

std::vector<float> idx_pixel_values(float mean, float std) {
  const float inv = 1.f / (255.f * std), off = mean / std;
  std::vector<float> lut(256);
  for (int v = 0; v < 256; ++v) lut[static_cast<size_t>(v)] = static_cast<float>(v) * inv - off;
  return lut;
}

Tensor read_idx_bytes(const std::string& path) {
  const std::string b = read_idx_file(path, 3);
  const std::vector<int64_t> d = read_dims(b, 3);
  if (d[1] == 0 || d[2] == 0) fail("idx", "{}: empty image size {}x{}", path, d[1], d[2]);
  Tensor t(DType::kUI8, {d[0], 1, d[1], d[2]});
  std::memcpy(t.raw(), b.data() + 16, static_cast<size_t>(t.numel()));
  return t;
}

Tensor read_idx_images(const std::string& path, float mean, float std) {
  const Tensor bytes = read_idx_bytes(path);
  Tensor t(DType::kF32, bytes.shape());
  const std::vector<float> lut = idx_pixel_values(mean, std);
  const uint8_t* src = bytes.data<uint8_t>();
  float* dst = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = lut[src[i]];
  return t;
}

Tensor read_idx_labels(const std::string& path, int num_classes) {
  const std::string b = read_idx_file(path, 1);
  const std::vector<int64_t> d = read_dims(b, 1);
  Tensor t(DType::kI32, {d[0]});
  const auto* src = reinterpret_cast<const uint8_t*>(b.data()) + 8;
  int32_t* dst = t.data<int32_t>();
  for (int64_t i = 0; i < d[0]; ++i) {
    if (src[i] >= num_classes)
      fail("idx", "{}: label {} out of range at record {} (expected < {})", path, src[i], i,
           num_classes);
    dst[i] = src[i];
  }
  return t;
}

Dataset load_idx_split(const std::string& dir, bool train, float mean, float std) {
  const std::string pre = train ? "train" : "t10k";
  std::string ip = find_file(dir, pre + "-images-idx3-ubyte");
  std::string lp = find_file(dir, pre + "-labels-idx1-ubyte");
  // Bytes, normalised per batch by the Loader (so RandAugment/AutoAugment apply) with the
  // values the former f32 storage held.
  Dataset ds{read_idx_bytes(ip), read_idx_labels(lp), {mean}, {std}, {},
             idx_pixel_values(mean, std)};
  if (ds.x.shape()[0] != ds.y.shape()[0])
    fail("idx", "{}: image and label counts differ (got {} images, {} labels)", dir,
         ds.x.shape()[0], ds.y.shape()[0]);
  return ds;
}

}  // namespace netspec::data
