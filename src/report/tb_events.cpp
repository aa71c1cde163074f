// TensorBoard event files (see tb_events.h).
#include "report/tb_events.h"

#include <unistd.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/file_check.h"

namespace netspec::report {
namespace {

namespace fs = std::filesystem;

// Byte-at-a-time table of the reflected Castagnoli polynomial.
constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kCrcTable = make_crc_table();

// Protobuf wire format: a key is (field << 3) | wire type; 0 varint, 1 fixed64, 2 bytes,
// 5 fixed32; integers little-endian.
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void put_key(std::string& out, int field, int wire) {
  put_varint(out, static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire));
}
template <typename T>
void put_fixed(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // x86/ARM Linux: already little-endian
  out.append(b, sizeof(T));
}
void put_bytes(std::string& out, int field, std::string_view bytes) {
  put_key(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}

// Event{wall_time, step, <field>: body}.
std::string event(double wall_time, int64_t step, int field, std::string_view body) {
  std::string e;
  put_key(e, 1, 1);
  put_fixed(e, wall_time);
  if (step != 0) {
    put_key(e, 2, 0);
    put_varint(e, static_cast<uint64_t>(step));
  }
  put_bytes(e, field, body);
  return e;
}

uint64_t get_varint(std::string_view b, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0; at < b.size() && shift < 64; shift += 7) {
    const auto c = static_cast<uint8_t>(b[at++]);
    v |= static_cast<uint64_t>(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
  return v;
}

template <typename T>
T get_fixed(std::string_view b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The host name as one path component ([A-Za-z0-9.-], others '_').
std::string host_component() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0 || !h[0]) return "localhost";
  std::string s = h;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return s;
}

constexpr std::string_view kPrefix = "events.out.tfevents.";

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  uint32_t c = 0xFFFFFFFFu;
  for (char ch : bytes) c = kCrcTable[(c ^ static_cast<uint8_t>(ch)) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t c = crc32c(bytes);
  return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

std::string tf_record(std::string_view payload) {
  std::string r, len;
  put_fixed(len, static_cast<uint64_t>(payload.size()));
  r += len;
  put_fixed(r, masked_crc32c(len));
  r += payload;
  put_fixed(r, masked_crc32c(payload));
  return r;
}

std::string event_file_version(double wall_time) { return event(wall_time, 0, 3, "brain.Event:2"); }

std::string event_scalars(double wall_time, int64_t step, const Scalars& values) {
  std::string summary;
  for (const auto& [tag, v] : values) {
    std::string value;
    put_bytes(value, 1, tag);
    put_key(value, 2, 5);
    put_fixed(value, static_cast<float>(v));  // simple_value is a float
    put_bytes(summary, 1, value);
  }
  return event(wall_time, step, 5, summary);
}

std::string event_text(double wall_time, int64_t step, const std::string& tag,
                       const std::string& text) {
  std::string plugin, metadata, tensor, value, summary;
  put_bytes(plugin, 1, "text");  // PluginData.plugin_name; content (TextPluginData) empty
  put_bytes(metadata, 1, plugin);
  put_key(tensor, 1, 0);  // TensorProto.dtype = DT_STRING (7)
  put_varint(tensor, 7);
  put_bytes(tensor, 2, "");    // tensor_shape: a scalar (no dims)
  put_bytes(tensor, 8, text);  // string_val
  put_bytes(value, 1, tag);
  put_bytes(value, 9, metadata);
  put_bytes(value, 8, tensor);
  put_bytes(summary, 1, value);
  return event(wall_time, step, 5, summary);
}

std::string event_hparams(double wall_time, int64_t step, const HParams& hparams) {
  std::string start;
  for (const auto& [name, v] : hparams) {
    std::string value, entry;
    if (const double* d = std::get_if<double>(&v)) {
      put_key(value, 2, 1);
      put_fixed(value, *d);
    } else if (const std::string* s = std::get_if<std::string>(&v)) {
      put_bytes(value, 3, *s);
    } else {
      put_key(value, 4, 0);
      put_varint(value, std::get<bool>(v) ? 1 : 0);
    }
    put_bytes(entry, 1, name);  // map entry: key 1, value 2
    put_bytes(entry, 2, value);
    put_bytes(start, 1, entry);
  }
  put_key(start, 5, 1);
  put_fixed(start, wall_time);
  std::string plugin_data, plugin, metadata, val, summary;
  put_bytes(plugin_data, 3, start);
  put_bytes(plugin, 1, "hparams");
  put_bytes(plugin, 2, plugin_data);
  put_bytes(metadata, 1, plugin);
  put_bytes(val, 1, "_hparams_/session_start_info");
  put_bytes(val, 9, metadata);
  put_bytes(summary, 1, val);
  return event(wall_time, step, 5, summary);
}

std::vector<std::string> read_tf_records(std::string_view b, bool* bad) {
  std::vector<std::string> out;
  if (bad) *bad = false;
  size_t at = 0;
  while (at < b.size()) {
    if (b.size() - at < 12) break;  // torn header
    const auto n = get_fixed<uint64_t>(b, at);
    if (get_fixed<uint32_t>(b, at + 8) != masked_crc32c(b.substr(at, 8))) {
      if (bad) *bad = true;
      break;
    }
    if (n > b.size() - at - 12 || b.size() - at - 12 - n < 4) break;  // torn payload
    const std::string_view payload = b.substr(at + 12, n);
    if (get_fixed<uint32_t>(b, at + 12 + n) != masked_crc32c(payload)) {
      // A bad CRC on the last record may be a torn write; anywhere else the file is not ours.
      if (bad && at + 16 + n < b.size()) *bad = true;
      break;
    }
    out.emplace_back(payload);
    at += 16 + n;
  }
  return out;
}

int64_t event_step(std::string_view e) {
  size_t at = 0;
  while (at < e.size()) {
    const uint64_t key = get_varint(e, at);
    const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
    if (wire == 0) {
      const uint64_t v = get_varint(e, at);
      if (field == 2) return static_cast<int64_t>(v);
    } else if (wire == 1) {
      at += 8;
    } else if (wire == 5) {
      at += 4;
    } else if (wire == 2) {
      at += get_varint(e, at);
    } else {
      break;  // groups are not used by Event
    }
  }
  return 0;
}

bool is_event_file_name(std::string_view name) { return name.starts_with(kPrefix); }

EventWriter::EventWriter(const std::string& dir) {
  const auto secs = static_cast<int64_t>(now_seconds());
  std::string newest;  // the name that sorts last among the dir's event files
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (std::string f = e.path().filename().string(); is_event_file_name(f) && f > newest)
      newest = f;
  const std::string stem = fmt::format("{}{:010}.{}.", kPrefix, secs, host_component());
  for (int n = 1;; ++n) {
    const std::string name = fmt::format("{}{:03}", stem, n);
    if (name > newest && !fs::exists(fs::symlink_status(fs::path(dir) / name, ec))) {
      path_ = (fs::path(dir) / name).string();
      break;
    }
    if (n > 999) fail("tensorboard", "{}: no free event file name after {}", dir, newest);
  }
  append_file(path_, tf_record(event_file_version(now_seconds())), "tensorboard");
}

EventWriter::~EventWriter() {
  try {
    flush();
  } catch (...) {  // a destructor must not throw; the records are lost, the run is not
  }
}

void EventWriter::scalars(int64_t step, const Scalars& values) {
  if (!values.empty()) pending_ += tf_record(event_scalars(now_seconds(), step, values));
}

void EventWriter::text(int64_t step, const std::string& tag, const std::string& text) {
  pending_ += tf_record(event_text(now_seconds(), step, tag, text));
}

void EventWriter::hparams(int64_t step, const HParams& hparams) {
  if (!hparams.empty()) pending_ += tf_record(event_hparams(now_seconds(), step, hparams));
}

void EventWriter::flush() {
  if (pending_.empty()) return;
  const std::string bytes = std::move(pending_);
  pending_.clear();
  append_file(path_, bytes, "tensorboard");
}

void truncate_event_files(const std::string& dir, int64_t keep_through) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_event_file_name(e.path().filename().string()) && e.is_regular_file(ec) &&
        !e.is_symlink(ec))
      files.push_back(e.path());
  for (const fs::path& p : files) {
    const std::string bytes = read_regular_file("tensorboard", p.string());
    bool bad = false;
    const std::vector<std::string> records = read_tf_records(bytes, &bad);
    if (bad) continue;  // not a file this writer made: left alone
    std::string kept;
    for (const std::string& r : records)
      if (event_step(r) <= keep_through) kept += tf_record(r);
    if (kept.size() != bytes.size()) write_file_atomic(p.string(), kept, "tensorboard");
  }
}

}  // namespace netspec::report
