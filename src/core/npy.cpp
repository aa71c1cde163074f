#include "core/npy.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/file_check.h"

namespace netspec {
namespace {

// numpy descr for each dtype; '|' for single-byte types (byte order irrelevant).
std::string descr_of(DType t) {
  switch (t) {
    case DType::kI1: return "|b1";
    case DType::kI8: return "|i1";
    case DType::kUI8: return "|u1";
    case DType::kI16: return "<i2";
    case DType::kI32: return "<i4";
    case DType::kI64: return "<i8";
    case DType::kUI16: return "<u2";
    case DType::kUI32: return "<u4";
    case DType::kUI64: return "<u8";
    case DType::kF16: return "<f2";
    case DType::kF32: return "<f4";
    case DType::kF64: return "<f8";
    case DType::kBF16: break;
  }
  fail("npy", "element type {} has no .npy encoding", dtype_name(t));
}

DType dtype_of_descr(const std::string& d, const std::string& name) {
  static const std::pair<const char*, DType> kTable[] = {
      {"|b1", DType::kI1},  {"|i1", DType::kI8},  {"|u1", DType::kUI8},  {"<i2", DType::kI16},
      {"<i4", DType::kI32}, {"<i8", DType::kI64}, {"<u2", DType::kUI16}, {"<u4", DType::kUI32},
      {"<u8", DType::kUI64}, {"<f2", DType::kF16}, {"<f4", DType::kF32}, {"<f8", DType::kF64},
      {"=f4", DType::kF32}, {"=f8", DType::kF64}, {"=i4", DType::kI32}, {"=i8", DType::kI64}};
  for (const auto& [s, t] : kTable)
    if (d == s) return t;
  fail("npy", "{}: unsupported dtype '{}' (little-endian bool/int/uint/float only)", name, d);
}

// Extracts the value text after 'key': in a Python dict literal header.
std::string header_field(const std::string& h, const std::string& key, const std::string& name) {
  auto k = h.find("'" + key + "'");
  if (k == std::string::npos) fail("npy", "{}: header lacks '{}'", name, key);
  auto colon = h.find(':', k);
  if (colon == std::string::npos) fail("npy", "{}: malformed header near '{}'", name, key);
  size_t i = colon + 1;
  while (i < h.size() && h[i] == ' ') ++i;
  if (i >= h.size()) fail("npy", "{}: malformed header near '{}'", name, key);
  char open = h[i];
  size_t end;
  if (open == '\'') {
    end = h.find('\'', i + 1);
    if (end == std::string::npos) fail("npy", "{}: unterminated string in header", name);
    return h.substr(i + 1, end - i - 1);
  }
  if (open == '(') {
    end = h.find(')', i);
    if (end == std::string::npos) fail("npy", "{}: unterminated shape in header", name);
    return h.substr(i + 1, end - i - 1);
  }
  end = h.find_first_of(",}", i);
  return h.substr(i, end == std::string::npos ? std::string::npos : end - i);
}

}  // namespace

std::string encode_npy(const Tensor& t) {
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += fmt::format("{}, ", t.shape()[i]);
  if (t.shape().size() > 1) shape.resize(shape.size() - 2);  // (2, 3) ; but (3,) keeps the comma
  else if (t.shape().size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 descr_of(t.dtype()), shape);
  // magic(6) + version(2) + header_len(2) + dict + padding + '\n' is a multiple of 64.
  size_t total = 10 + dict.size() + 1;
  size_t pad = (64 - total % 64) % 64;
  dict.append(pad, ' ');
  dict.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  uint16_t hl = static_cast<uint16_t>(dict.size());
  out.push_back(static_cast<char>(hl & 0xff));
  out.push_back(static_cast<char>(hl >> 8));
  out += dict;
  out.append(static_cast<const char*>(t.raw()), t.nbytes());
  return out;
}

Tensor decode_npy(const std::string& b, const std::string& name) {
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0)
    fail("npy", "{}: not a .npy file (bad magic)", name);
  int major = static_cast<unsigned char>(b[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = static_cast<unsigned char>(b[8]) | (static_cast<size_t>(static_cast<unsigned char>(b[9])) << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) fail("npy", "{}: truncated header", name);
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<unsigned char>(b[8 + i])) << (8 * i);
    hstart = 12;
  } else {
    fail("npy", "{}: unsupported format version {}", name, major);
  }
  if (hstart + hlen > b.size()) fail("npy", "{}: truncated header", name);
  std::string h = b.substr(hstart, hlen);
  DType dt = dtype_of_descr(header_field(h, "descr", name), name);
  std::string fo = header_field(h, "fortran_order", name);
  if (fo.find("True") != std::string::npos)
    fail("npy", "{}: fortran_order arrays are not supported (save with C order)", name);
  Shape shape;
  std::stringstream ss(header_field(h, "shape", name));
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t s = item.find_first_not_of(" ");
    if (s == std::string::npos) continue;
    char* endp = nullptr;
    long long v = std::strtoll(item.c_str() + s, &endp, 10);
    if (endp == item.c_str() + s || v < 0 || v > (1LL << 40))
      fail("npy", "{}: bad shape entry '{}'", name, item);
    shape.push_back(v);
  }
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > (int64_t{1} << 40) / d) fail("npy", "{}: shape too large", name);
    n *= d;
  }
  size_t need = static_cast<size_t>(n) * dtype_size(dt);
  size_t have = b.size() - hstart - hlen;
  if (have != need)
    fail("npy", "{}: data size does not match shape (got {} bytes, expected {})", name, have, need);
  Tensor t(dt, shape);
  if (need) std::memcpy(t.raw(), b.data() + hstart + hlen, need);
  if (dt == DType::kI1)
    for (auto& v : t.span<uint8_t>()) v = v ? 1 : 0;
  return t;
}

void write_npy(const std::string& path, const Tensor& t) {
  std::string bytes = encode_npy(t);
  write_file_atomic(path, bytes, "npy");
}

Tensor read_npy(const std::string& path) {
  return decode_npy(read_regular_file("npy", path), path);
}

}  // namespace netspec
