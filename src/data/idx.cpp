// IDX reader: big-endian header (0, 0, type 0x08 = ubyte, ndims), dims as big-endian u32, data.
#include "data/idx.h"

#include <unistd.h>
#include <zlib.h>

#include <fmt/ranges.h>

#include <filesystem>

#include "core/error.h"
#include "core/file_check.h"

namespace netspec::data {
namespace {

uint32_t be32(const std::string& b, size_t off) {
  auto u = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(b[off + i])); };
  return (u(0) << 24) | (u(1) << 16) | (u(2) << 8) | u(3);
}

// Checks the header and returns the dims; data starts at 4 + 4 * ndims.
std::vector<int64_t> parse_header(const std::string& b, const std::string& path, int want_dims) {
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
    // Dims past the file's size are refused before their product can overflow.
    if (__builtin_mul_overflow(total, dims.back(), &total) ||
        total > static_cast<int64_t>(b.size()))
      fail("idx", "{}: truncated (got {} bytes, the header's dims [{}] need more)", path,
           b.size(), fmt::join(dims, ", "));
  }
  if (b.size() != hdr + static_cast<size_t>(total)) {
    if (b.size() < hdr + static_cast<size_t>(total))
      fail("idx", "{}: truncated (got {} bytes, expected {})", path, b.size(), hdr + total);
    fail("idx", "{}: trailing bytes (got {} bytes, expected {})", path, b.size(), hdr + total);
  }
  return dims;
}

std::string find_file(const std::string& dir, const std::string& stem) {
  namespace fs = std::filesystem;
  for (const char* ext : {".gz", ""}) {
    fs::path p = fs::path(dir) / (stem + ext);
    if (fs::exists(p)) return p.string();
  }
  fail("idx", "{}: no {}[.gz] (install dataset-fashion-mnist or pass --data DIR)", dir, stem);
}

}  // namespace

std::string read_maybe_gz(const std::string& path) {
  // Checked before opening: a FIFO or a device is refused by name, never read (or waited on).
  int fd = open_regular_file("idx", path);
  gzFile f = gzdopen(fd, "rb");
  if (!f) {
    ::close(fd);
    fail("idx", "{}: cannot open", path);
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      std::string msg = gzerror(f, &code);
      gzclose(f);
      fail("idx", "{}: corrupt gzip data ({})", path, msg);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  // A truncated .gz stream reads as a short file with Z_BUF_ERROR at close.
  int rc = gzclose(f);
  if (rc != Z_OK) fail("idx", "{}: truncated or corrupt gzip stream (zlib code {})", path, rc);
  return out;
}

Tensor read_idx_images(const std::string& path, float mean, float std) {
  std::string b = read_maybe_gz(path);
  std::vector<int64_t> d = parse_header(b, path, 3);
  if (d[1] == 0 || d[2] == 0) fail("idx", "{}: empty image size {}x{}", path, d[1], d[2]);
  Tensor t(DType::kF32, {d[0], 1, d[1], d[2]});
  const auto* src = reinterpret_cast<const uint8_t*>(b.data()) + 16;
  float* dst = t.data<float>();
  const float inv = 1.f / (255.f * std), off = mean / std;
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = static_cast<float>(src[i]) * inv - off;
  return t;
}

Tensor read_idx_labels(const std::string& path, int num_classes) {
  std::string b = read_maybe_gz(path);
  std::vector<int64_t> d = parse_header(b, path, 1);
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
  Dataset ds{read_idx_images(ip, mean, std), read_idx_labels(lp), {}, {}, {-mean / std}};
  if (ds.x.shape()[0] != ds.y.shape()[0])
    fail("idx", "{}: image and label counts differ (got {} images, {} labels)", dir,
         ds.x.shape()[0], ds.y.shape()[0]);
  return ds;
}

}  // namespace netspec::data
