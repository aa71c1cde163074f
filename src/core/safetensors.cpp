#include "core/safetensors.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"

namespace netspec {
namespace {

struct Code {
  DType dt;
  const char* name;
};
constexpr Code kCodes[] = {{DType::kF32, "F32"}, {DType::kF64, "F64"}, {DType::kI32, "I32"},
                           {DType::kI64, "I64"}, {DType::kI8, "I8"},   {DType::kI16, "I16"},
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
    h[n] = {{"dtype", code_of(t.dtype())}, {"shape", t.shape()},
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

SafeTensors decode_safetensors(const std::string& b, const std::string& name) {
  if (b.size() < 8) fail("safetensors", "{}: too short (got {} bytes)", name, b.size());
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
  if (len > b.size() - 8)
    fail("safetensors", "{}: header length past the end (got {}, file has {})", name, len,
         b.size() - 8);
  nlohmann::ordered_json h;
  try {
    h = nlohmann::ordered_json::parse(b.substr(8, len));
  } catch (const std::exception& e) {
    fail("safetensors", "{}: bad header JSON ({})", name, e.what());
  }
  SafeTensors st;
  const size_t base = 8 + len, data = b.size() - base;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__") {
      for (auto m = it->begin(); m != it->end(); ++m) st.metadata[m.key()] = m->get<std::string>();
      continue;
    }
    const auto& e = *it;
    std::string code = e.at("dtype").get<std::string>();
    const Code* c = nullptr;
    for (const Code& k : kCodes)
      if (code == k.name) c = &k;
    if (!c) fail("safetensors", "{}: tensor '{}' has unsupported dtype {}", name, it.key(), code);
    Tensor t(c->dt, e.at("shape").get<Shape>());
    auto offs = e.at("data_offsets").get<std::vector<uint64_t>>();
    if (offs.size() != 2 || offs[1] < offs[0] || offs[1] > data || offs[1] - offs[0] != t.nbytes())
      fail("safetensors", "{}: tensor '{}' has bad data_offsets (expected {} bytes within {})",
           name, it.key(), t.nbytes(), data);
    std::memcpy(t.raw(), b.data() + base + offs[0], t.nbytes());
    st.tensors.emplace_back(it.key(), std::move(t));
  }
  return st;
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) fail("write", "{}: cannot open for writing", tmp);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.flush();
    if (!f) fail("write", "{}: write failed", tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail("write", "{}: rename from {} failed ({})", path, tmp, ec.message());
}

void write_safetensors(const std::string& path, const SafeTensors& st) {
  write_file_atomic(path, encode_safetensors(st));
}

SafeTensors read_safetensors(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("safetensors", "{}: cannot open", path);
  std::stringstream ss;
  ss << f.rdbuf();
  return decode_safetensors(ss.str(), path);
}

}  // namespace netspec
