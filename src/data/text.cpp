// Character-level text corpus (see text.h).
#include "data/text.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.h"
#include "core/file_check.h"
#include "core/json_strict.h"

namespace netspec::data {

std::u32string decode_utf8(std::string_view s, const std::string& where) {
  std::u32string out;
  out.reserve(s.size());
  const auto* u = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const uint8_t b = u[i];
    int len;
    char32_t cp;
    if (b < 0x80) {
      out.push_back(b);
      ++i;
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2;
      cp = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3;
      cp = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4;
      cp = b & 0x07;
    } else {
      fail("text", "{}: invalid UTF-8 at byte {} (lead byte 0x{:02x})", where, i, b);
    }
    if (i + len > n)
      fail("text", "{}: invalid UTF-8 at byte {} (sequence of {} bytes cut by the end)", where, i,
           len);
    for (int k = 1; k < len; ++k) {
      if ((u[i + k] & 0xC0) != 0x80)
        fail("text", "{}: invalid UTF-8 at byte {} (expected a continuation byte, got 0x{:02x})",
             where, i + k, u[i + k]);
      cp = (cp << 6) | (u[i + k] & 0x3F);
    }
    static constexpr char32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len])
      fail("text", "{}: invalid UTF-8 at byte {} (overlong encoding of U+{:04X})", where, i,
           static_cast<uint32_t>(cp));
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
      fail("text", "{}: invalid UTF-8 at byte {} (U+{:04X} is not a scalar value)", where, i,
           static_cast<uint32_t>(cp));
    out.push_back(cp);
    i += static_cast<size_t>(len);
  }
  return out;
}

std::string encode_utf8(std::u32string_view s) {
  std::string o;
  for (char32_t c : s) {
    if (c < 0x80) {
      o.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      o.push_back(static_cast<char>(0xC0 | (c >> 6)));
      o.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      o.push_back(static_cast<char>(0xE0 | (c >> 12)));
      o.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      o.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      o.push_back(static_cast<char>(0xF0 | (c >> 18)));
      o.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      o.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      o.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return o;
}

int32_t Vocab::id(char32_t c) const {
  auto it = std::lower_bound(chars.begin(), chars.end(), c);
  return it != chars.end() && *it == c ? static_cast<int32_t>(it - chars.begin()) : -1;
}

std::vector<int32_t> Vocab::encode(std::string_view utf8) const {
  std::u32string cps = decode_utf8(utf8, "encode");
  std::vector<int32_t> ids;
  ids.reserve(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    int32_t k = id(cps[i]);
    if (k < 0)
      fail("vocab", "character U+{:04X} ('{}') at position {} is not in the vocabulary",
           static_cast<uint32_t>(cps[i]), encode_utf8(std::u32string(1, cps[i])), i);
    ids.push_back(k);
  }
  return ids;
}

std::string Vocab::decode(std::span<const int32_t> ids) const {
  std::u32string s;
  for (int32_t k : ids) {
    if (k < 0 || k >= size())
      fail("vocab", "token id out of range (got {}, expected < {})", k, size());
    s.push_back(chars[static_cast<size_t>(k)]);
  }
  return encode_utf8(s);
}

void save_vocab(const Vocab& v, const std::string& path) {
  nlohmann::json j;
  j["kind"] = "char";
  j["size"] = v.size();
  std::vector<uint32_t> cps(v.chars.begin(), v.chars.end());
  j["code_points"] = cps;
  std::vector<std::string> cs;
  for (char32_t c : v.chars) cs.push_back(encode_utf8(std::u32string(1, c)));
  j["chars"] = cs;
  // Written to a temp file and renamed, so a reader never sees half a vocabulary.
  write_file_atomic(path, j.dump(1) + "\n", "vocab");
}

Vocab load_vocab(const std::string& path) {
  auto j = parse_json_strict<nlohmann::json>(read_regular_file("vocab", path), path);
  if (!j.is_object() || j.value("kind", "") != "char" || !j.contains("code_points") ||
      !j["code_points"].is_array())
    fail("vocab", "{}: expected {{\"kind\": \"char\", \"code_points\": [...]}}", path);
  Vocab v;
  for (const auto& e : j["code_points"]) {
    if (!e.is_number_unsigned() || e.get<uint64_t>() > 0x10FFFF ||
        (e.get<uint64_t>() >= 0xD800 && e.get<uint64_t>() <= 0xDFFF))
      fail("vocab", "{}: code point {} is not a Unicode scalar value", path, e.dump());
    auto c = static_cast<char32_t>(e.get<uint64_t>());
    if (!v.chars.empty() && c <= v.chars.back())
      fail("vocab", "{}: code points not sorted and unique at index {}", path, v.chars.size());
    v.chars.push_back(c);
  }
  if (j.contains("size") && j["size"] != v.size())
    fail("vocab", "{}: size differs from the code point count (got {}, expected {})", path,
         j["size"].dump(), v.size());
  return v;
}

TextCorpus make_corpus(std::string_view utf8, const std::string& where) {
  std::u32string cps = decode_utf8(utf8, where);
  TextCorpus c;
  c.vocab.chars = cps;
  std::sort(c.vocab.chars.begin(), c.vocab.chars.end());
  c.vocab.chars.erase(std::unique(c.vocab.chars.begin(), c.vocab.chars.end()), c.vocab.chars.end());
  const auto n = static_cast<int64_t>(cps.size());
  const int64_t split = n - n / 10;  // the last 10 % (rounded down) is validation
  if (n / 10 < 2)
    fail("text", "{}: too short to split (got {} characters, expected >= 20)", where, n);
  c.train.reserve(static_cast<size_t>(split));
  c.val.reserve(static_cast<size_t>(n - split));
  for (int64_t i = 0; i < n; ++i)
    (i < split ? c.train : c.val).push_back(c.vocab.id(cps[static_cast<size_t>(i)]));
  return c;
}

TextCorpus load_text(const std::string& path) {
  if (path.empty())
    fail("text", "no text file: pass --data FILE (any UTF-8 text; the last 10 % validates)");
  return make_corpus(read_regular_file("text", path), path);
}

Dataset text_windows(const TextCorpus& c, bool train, int seq_len, uint64_t seed, int64_t epoch) {
  const std::vector<int32_t>& ids = train ? c.train : c.val;
  const auto len = static_cast<int64_t>(ids.size());
  const int64_t t = seq_len;
  if (t < 1) fail("text", "seqLen must be >= 1 (got {})", seq_len);
  if (len < t + 1)
    fail("text", "{} split too short for one window (got {} tokens, expected >= seqLen + 1 = {})",
         train ? "training" : "validation", len, t + 1);
  const int64_t n = (len - 1) / t;
  std::vector<int64_t> starts(static_cast<size_t>(n));
  if (train) {
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(epoch) + 0x51ED));
    const auto range = static_cast<uint64_t>(len - t);  // starts 0 .. len - t - 1
    for (auto& s : starts) s = static_cast<int64_t>(rng() % range);
  } else {
    for (int64_t i = 0; i < n; ++i) starts[static_cast<size_t>(i)] = i * t;
  }
  Dataset ds{Tensor(DType::kI32, {n, t}), Tensor(DType::kI32, {n, t}), {}, {}, {}};
  for (int64_t i = 0; i < n; ++i) {
    const int32_t* src = ids.data() + starts[static_cast<size_t>(i)];
    std::memcpy(ds.x.data<int32_t>() + i * t, src, static_cast<size_t>(t) * 4);
    std::memcpy(ds.y.data<int32_t>() + i * t, src + 1, static_cast<size_t>(t) * 4);
  }
  return ds;
}

double unigram_bits_per_char(const TextCorpus& c) {
  const int64_t v = c.vocab.size();
  std::vector<double> count(static_cast<size_t>(v), 0.0);
  for (int32_t k : c.train) count[static_cast<size_t>(k)] += 1;
  const double denom = static_cast<double>(c.train.size()) + static_cast<double>(v);
  double bits = 0;
  for (int32_t k : c.val) bits -= std::log2((count[static_cast<size_t>(k)] + 1.0) / denom);
  return c.val.empty() ? 0.0 : bits / static_cast<double>(c.val.size());
}

}  // namespace netspec::data
