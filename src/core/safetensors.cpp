#include "core/safetensors.h"

#include <fmt/ranges.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_strict.h"

namespace netspec {
namespace {

struct Code {
  DType dt;
  const char* name;
};
constexpr Code kCodes[] = {{DType::kF32, "F32"}, {DType::kF64, "F64"},   {DType::kI32, "I32"},
                           {DType::kI64, "I64"}, {DType::kI8, "I8"},     {DType::kI16, "I16"},
                           {DType::kF16, "F16"}, {DType::kBF16, "BF16"}, {DType::kI1, "BOOL"}};

const char* code_of(DType d) {
  for (const Code& c : kCodes)
    if (c.dt == d) return c.name;
  fail("safetensors", "unsupported dtype {}", dtype_name(d));
}

}  // namespace

const Tensor& SafeTensors::at(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  std::string have;
  for (const auto& [n, t] : tensors) have += (have.empty() ? "" : ", ") + n;
  fail("safetensors", "no tensor '{}' (have: {})", name, have);
}

std::string encode_safetensors(const SafeTensors& st) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!st.metadata.empty()) h["__metadata__"] = st.metadata;
  size_t off = 0;
  for (const auto& [n, t] : st.tensors) {
    h[n] = {{"dtype", code_of(t.dtype())},
            {"shape", t.shape()},
            {"data_offsets", {off, off + t.nbytes()}}};
    off += t.nbytes();
  }
  std::string js = h.dump();
  js.append((8 - js.size() % 8) % 8, ' ');  // pad so the data starts 8-byte aligned
  std::string out(8, '\0');
  uint64_t len = js.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((len >> (8 * i)) & 0xff);
  out += js;
  for (const auto& [n, t] : st.tensors) out.append(static_cast<const char*>(t.raw()), t.nbytes());
  return out;
}

namespace {

// Header checks: every field is validated against the file size before anything is allocated.
class HeaderReader {
 public:
  HeaderReader(const std::string& file, size_t data_bytes) : file_(file), data_(data_bytes) {}

  [[noreturn]] void bad(const std::string& field, const std::string& what) const {
    fail("safetensors", "{}: {}: {}", file_, field, what);
  }

  Shape shape(const nlohmann::ordered_json& j, const std::string& field) const {
    if (!j.is_array())
      bad(field, fmt::format("expected an array of sizes (got {})", j.type_name()));
    Shape s;
    for (const auto& d : j) {
      if (!d.is_number_integer())
        bad(field, fmt::format("expected non-negative integer sizes (got {})", d.dump()));
      if (d.is_number_unsigned() ? d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                                 : d.get<int64_t>() < 0)
        bad(field, fmt::format("expected non-negative integer sizes (got {})", d.dump()));
      s.push_back(d.get<int64_t>());
    }
    return s;
  }

  // Byte size of dtype `code` x shape, refusing overflow and anything larger than the data.
  uint64_t nbytes(DType dt, const Shape& s, const std::string& field) const {
    uint64_t n = dtype_size(dt);
    for (int64_t d : s)
      if (d == 0) return 0;
    for (int64_t d : s)
      if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n) || n > data_)
        bad(field, fmt::format("shape [{}] needs more bytes than the file's {} data bytes",
                               fmt::join(s, ", "), data_));
    return n;
  }

  std::pair<uint64_t, uint64_t> offsets(const nlohmann::ordered_json& j, uint64_t want,
                                        const std::string& field) const {
    if (!j.is_array() || j.size() != 2 || !j[0].is_number_unsigned() || !j[1].is_number_unsigned())
      bad(field, fmt::format("expected [begin, end] byte offsets (got {})", j.dump()));
    uint64_t b = j[0].get<uint64_t>(), e = j[1].get<uint64_t>();
    if (e < b || e > data_ || e - b != want)
      bad(field, fmt::format("[{}, {}] does not hold {} bytes within the {} data bytes", b, e, want,
                             data_));
    return {b, e};
  }

 private:
  const std::string& file_;
  size_t data_;
};

}  // namespace

SafeTensors decode_safetensors(std::string_view b, const std::string& name) {
  if (b.size() < 8)
    fail("safetensors", "{}: too short (got {} bytes, expected at least 8)", name, b.size());
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
  if (len > b.size() - 8)
    fail("safetensors", "{}: header length past the end (got {}, file has {})", name, len,
         b.size() - 8);
  auto h = parse_json_strict<nlohmann::ordered_json>(b.substr(8, len), name);
  const size_t base = 8 + len, data = b.size() - base;
  HeaderReader r(name, data);
  if (!h.is_object()) r.bad("header", fmt::format("expected an object (got {})", h.type_name()));
  SafeTensors st;
  // Validate everything first, then allocate: a lying header costs no memory.
  struct Entry {
    std::string name;
    DType dt;
    Shape shape;
    uint64_t begin;
  };
  std::vector<Entry> entries;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object())
        r.bad("__metadata__",
              fmt::format("expected an object of strings (got {})", it->type_name()));
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string())
          r.bad("__metadata__." + m.key(), fmt::format("expected a string (got {})", m->dump()));
        st.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    const std::string f = "tensor '" + it.key() + "'";
    const auto& e = *it;
    if (!e.is_object()) r.bad(f, fmt::format("expected an object (got {})", e.type_name()));
    for (const char* k : {"dtype", "shape", "data_offsets"})
      if (!e.contains(k)) r.bad(f, fmt::format("missing field '{}'", k));
    if (!e["dtype"].is_string())
      r.bad(f + " dtype", fmt::format("expected a dtype name (got {})", e["dtype"].dump()));
    std::string code = e["dtype"].get<std::string>();
    const Code* c = nullptr;
    for (const Code& k : kCodes)
      if (code == k.name) c = &k;
    if (!c) r.bad(f + " dtype", fmt::format("unsupported dtype '{}'", code));
    Shape s = r.shape(e["shape"], f + " shape");
    uint64_t n = r.nbytes(c->dt, s, f + " shape");
    auto [begin, end] = r.offsets(e["data_offsets"], n, f + " data_offsets");
    entries.push_back({it.key(), c->dt, std::move(s), begin});
  }
  for (auto& e : entries) {
    Tensor t(e.dt, std::move(e.shape));
    if (t.nbytes()) std::memcpy(t.raw(), b.data() + base + e.begin, t.nbytes());
    st.tensors.emplace_back(std::move(e.name), std::move(t));
  }
  return st;
}

void write_safetensors(const std::string& path, const SafeTensors& st) {
  write_file_atomic(path, encode_safetensors(st));
}

SafeTensors read_safetensors(const std::string& path) {
  MappedFile f("safetensors", path);  // mapped, not copied: only validated tensors are allocated
  return decode_safetensors(f.bytes(), path);
}

}  // namespace netspec
