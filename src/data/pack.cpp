// Packed image sets: writer, index reader and the streamed source (see pack.h).
#include "data/pack.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/file_check.h"
#include "core/thread_pool.h"
#include "data/image.h"
#include "data/image_write.h"
#include "data/own_data.h"
#include "data/sample_source.h"
#include "data/view.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'N', 'S', 'P', 'A', 'C', 'K', '0', '1'};
constexpr size_t kRecordBytes = 36;

uint32_t fnv1a32(const void* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 16777619u;
  return h;
}
uint64_t fnv1a64(const void* p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 1099511628211ull;
  return h;
}

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_string(std::string& out, const std::string& s) {
  put<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out += s;
}

// Bounds-checked little-endian reads over the index bytes; a short read names the field.
struct Cursor {
  const std::string& b;
  const std::string& where;
  size_t at = 0;
  template <typename T>
  T get(const char* field) {
    if (b.size() - at < sizeof(T))
      fail("pack", "{}: truncated at byte {} (reading {})", where, at, field);
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string get_string(const char* field) {
    const auto n = get<uint32_t>(field);
    if (b.size() - at < n)
      fail("pack", "{}: truncated at byte {} ({} of {} bytes)", where, at, field, n);
    std::string s = b.substr(at, n);
    at += n;
    return s;
  }
};

// The payload of one image: decoded, shrunk so its longer side is <= max_side, then JPEG or raw.
std::string encode_payload(const std::string& path, const PackOptions& o, uint32_t& h,
                           uint32_t& w) {
  Tensor img = decode_image(path);
  int64_t ih = img.shape()[1], iw = img.shape()[2];
  const int64_t longer = std::max(ih, iw);
  if (o.max_side > 0 && longer > o.max_side) {
    const auto scale = [&](int64_t v) {
      return std::max<int64_t>(1, (v * o.max_side + longer / 2) / longer);
    };
    ih = scale(ih), iw = scale(iw);
    img = resize_images(img.reshaped({1, 3, img.shape()[1], img.shape()[2]}), ih, iw)
              .reshaped({3, ih, iw});
  }
  h = static_cast<uint32_t>(ih);
  w = static_cast<uint32_t>(iw);
  if (o.raw) return std::string(static_cast<const char*>(img.raw()), img.nbytes());
  return encode_jpeg(img, o.quality);
}

class PackWriter {
 public:
  PackWriter(const PackOptions& o) : o_(o) {}
  void add(const std::string& payload, PackRecord r) {
    const auto limit = static_cast<uint64_t>(o_.shard_mb) * 1024 * 1024;
    if (!out_.is_open() || (size_ > 0 && size_ + payload.size() > limit)) next_shard();
    r.shard = static_cast<uint32_t>(names_.size() - 1);
    r.offset = size_;
    r.size = static_cast<uint32_t>(payload.size());
    r.hash = fnv1a32(payload.data(), payload.size());
    out_.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    if (!out_) fail("pack", "{}: write failed", (fs::path(o_.out) / names_.back()).string());
    size_ += payload.size();
    records_.push_back(r);
  }
  // Closes the last shard and writes the index (to a temporary name, then renamed).
  uint64_t finish(const std::vector<std::string>& classes) {
    close_shard();
    std::string b(kMagic, sizeof kMagic);
    put<uint32_t>(b, o_.raw ? 1 : 0);
    put<uint32_t>(b, static_cast<uint32_t>(std::max(o_.max_side, 0)));
    put<uint32_t>(b, o_.raw ? 0 : static_cast<uint32_t>(o_.quality));
    put<uint32_t>(b, static_cast<uint32_t>(names_.size()));
    put<uint32_t>(b, static_cast<uint32_t>(classes.size()));
    put<uint64_t>(b, records_.size());
    for (const auto& c : classes) put_string(b, c);
    for (size_t i = 0; i < names_.size(); ++i) {
      put_string(b, names_[i]);
      put<uint64_t>(b, sizes_[i]);
    }
    for (const PackRecord& r : records_) {
      put<uint8_t>(b, r.split);
      b.append(3, '\0');
      put<uint32_t>(b, r.shard);
      put<uint64_t>(b, r.offset);
      put<uint32_t>(b, r.size);
      put<int32_t>(b, r.label);
      put<uint32_t>(b, r.h);
      put<uint32_t>(b, r.w);
      put<uint32_t>(b, r.hash);
    }
    put<uint64_t>(b, fnv1a64(b.data(), b.size()));
    const fs::path index = fs::path(o_.out) / kPackIndexName;
    const fs::path tmp = index.string() + ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary);
      f.write(b.data(), static_cast<std::streamsize>(b.size()));
      if (!f) fail("pack", "{}: write failed", tmp.string());
    }
    fs::rename(tmp, index);
    uint64_t total = b.size();
    for (uint64_t s : sizes_) total += s;
    return total;
  }
  size_t shards() const { return names_.size(); }
  size_t records() const { return records_.size(); }

 private:
  void close_shard() {
    if (!out_.is_open()) return;
    out_.close();
    if (!out_) fail("pack", "{}: write failed", (fs::path(o_.out) / names_.back()).string());
    sizes_.push_back(size_);
  }
  void next_shard() {
    close_shard();
    names_.push_back(fmt::format("shard-{:05}.bin", names_.size()));
    out_.open(fs::path(o_.out) / names_.back(), std::ios::binary | std::ios::trunc);
    if (!out_) fail("pack", "{}: cannot write", (fs::path(o_.out) / names_.back()).string());
    size_ = 0;
  }

  const PackOptions& o_;
  std::ofstream out_;
  uint64_t size_ = 0;
  std::vector<std::string> names_;
  std::vector<uint64_t> sizes_;
  std::vector<PackRecord> records_;
};

// Streams samples from the shards with pread; each payload's hash is checked before decoding.
class PackedSource final : public SampleSource {
 public:
  PackedSource(const std::string& dir, std::shared_ptr<const PackIndex> index,
               std::vector<size_t> records, int64_t channels, int64_t height, int64_t width,
               double crop_ratio, bool dct_scale)
      : dir_(dir),
        index_(std::move(index)),
        records_(std::move(records)),
        c_(channels),
        h_(height),
        w_(width),
        ratio_(crop_ratio),
        dct_(dct_scale) {
    for (const std::string& name : index_->shard_names) {
      const std::string p = (fs::path(dir_) / name).string();
      const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) fail("pack", "{}: cannot open ({})", p, std::strerror(errno));
      fds_.push_back(fd);
    }
  }
  ~PackedSource() override {
    for (int fd : fds_) ::close(fd);
  }
  PackedSource(const PackedSource&) = delete;
  PackedSource& operator=(const PackedSource&) = delete;

  int64_t size() const override { return static_cast<int64_t>(records_.size()); }
  void read(int64_t i, uint8_t* dst) const override {
    thread_local Region r;  // its decode buffer is reused
    r.keep = Tensor();
    read_region(i, cover_chooser(h_, w_, ratio_), dct_, r);
    Taps ty, tx;
    cover_taps(r, h_, w_, ratio_, ty, tx);
    render_view(r, ty, tx, c_, false, nullptr, nullptr, dst);
  }
  void read_region(int64_t i, const RegionChooser& choose, bool dct_scale,
                   Region& out) const override {
    const PackRecord& r = index_->records[records_.at(static_cast<size_t>(i))];
    const std::string shard = (fs::path(dir_) / index_->shard_names[r.shard]).string();
    const std::string where = fmt::format("{} (record {} at offset {})", shard,
                                          records_[static_cast<size_t>(i)], r.offset);
    std::string payload(r.size, '\0');
    size_t got = 0;
    while (got < payload.size()) {
      const ssize_t n = ::pread(fds_[r.shard], payload.data() + got, payload.size() - got,
                                static_cast<off_t>(r.offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("pack", "{}: short read ({} of {} bytes)", where, got, payload.size());
      got += static_cast<size_t>(n);
    }
    if (fnv1a32(payload.data(), payload.size()) != r.hash)
      fail("pack", "{}: corrupt payload (its hash differs from the index's)", where);
    if (index_->encoding == 1) {  // raw planar RGB: the payload is the image
      uint8_t* px = out.scratch(payload.size());
      std::memcpy(px, payload.data(), payload.size());
      stored_region(px, 3, r.h, r.w, choose, out);
    } else {
      decode_region(payload, where, choose, dct_scale, out);
    }
  }
  std::string describe() const override {
    return fmt::format("{} records of {}", records_.size(), dir_);
  }
  const std::vector<size_t>& records() const { return records_; }

 private:
  std::string dir_;
  std::shared_ptr<const PackIndex> index_;
  std::vector<size_t> records_;
  int64_t c_, h_, w_;
  double ratio_;
  bool dct_;
  std::vector<int> fds_;
};

}  // namespace

std::string write_pack(const PackOptions& o) {
  if (o.quality < 1 || o.quality > 100)
    fail("pack", "--quality must be in 1..100 (got {})", o.quality);
  if (o.max_side < 0) fail("pack", "--max-side must be >= 0 (got {})", o.max_side);
  if (o.shard_mb < 1) fail("pack", "--shard-mb must be >= 1 (got {})", o.shard_mb);
  if (o.out.empty()) fail("pack", "an output directory is needed (-o OUT)");
  FolderSplitFiles files = list_folder_splits(o.data, 0);
  if (is_packed_dir(o.out))
    fail("pack", "{}: already holds a pack ({}); choose another -o", o.out, kPackIndexName);
  ensure_writable_dir("pack", o.out, "output directory");
  std::vector<std::pair<const std::pair<std::string, int32_t>*, uint8_t>> all;
  for (const auto& f : files.train) all.emplace_back(&f, 0);
  for (const auto& f : files.test) all.emplace_back(&f, 1);
  PackWriter writer(o);
  ThreadPool pool(o.threads > 0 ? o.threads : decode_threads());
  // Chunks are encoded in parallel and written in order: the pack does not depend on threads.
  constexpr size_t kChunk = 256;
  for (size_t c0 = 0; c0 < all.size(); c0 += kChunk) {
    const size_t n = std::min(kChunk, all.size() - c0);
    std::vector<std::string> payloads(n);
    std::vector<PackRecord> recs(n);
    pool.parallel_for(static_cast<int64_t>(n), 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const auto& [file, split] = all[c0 + static_cast<size_t>(k)];
        PackRecord& r = recs[static_cast<size_t>(k)];
        payloads[static_cast<size_t>(k)] = encode_payload(file->first, o, r.h, r.w);
        r.split = split;
        r.label = file->second;
      }
    });
    for (size_t k = 0; k < n; ++k) writer.add(payloads[k], recs[k]);
  }
  const uint64_t bytes = writer.finish(files.classes);
  return fmt::format("packed {} images ({} train, {} test, {} classes) into {} shard{} in {}: "
                     "{:.1f} MiB, {}",
                     writer.records(), files.train.size(), files.test.size(),
                     files.classes.size(), writer.shards(), writer.shards() == 1 ? "" : "s",
                     o.out, static_cast<double>(bytes) / (1024.0 * 1024.0),
                     o.raw ? "raw pixels" : fmt::format("JPEG q{}", o.quality));
}

uint64_t pack_index_checksum(const std::string& body) {
  return fnv1a64(body.data(), body.size());
}

PackIndex parse_pack_index(const std::string& b, const std::string& where) {
  if (b.size() < sizeof kMagic + 8 || std::memcmp(b.data(), kMagic, sizeof kMagic) != 0)
    fail("pack", "{}: not a netspec pack index (expected magic NSPACK01)", where);
  uint64_t stored;
  std::memcpy(&stored, b.data() + b.size() - 8, 8);
  if (fnv1a64(b.data(), b.size() - 8) != stored)
    fail("pack", "{}: corrupt or truncated (checksum differs)", where);
  const std::string body = b.substr(0, b.size() - 8);
  Cursor in{body, where, sizeof kMagic};
  PackIndex ix;
  ix.encoding = in.get<uint32_t>("encoding");
  ix.max_side = in.get<uint32_t>("max_side");
  ix.quality = in.get<uint32_t>("quality");
  const auto shards = in.get<uint32_t>("shard count");
  const auto classes = in.get<uint32_t>("class count");
  const auto records = in.get<uint64_t>("record count");
  if (ix.encoding > 1) fail("pack", "{}: encoding {} unknown (0 JPEG, 1 raw)", where, ix.encoding);
  // Every entry takes at least 4 bytes: counts beyond the file are refused before allocating.
  if (shards > body.size() / 12 || classes > body.size() / 4 ||
      records > body.size() / kRecordBytes)
    fail("pack", "{}: counts ({} shards, {} classes, {} records) exceed the file's {} bytes",
         where, shards, classes, records, b.size());
  for (uint32_t i = 0; i < classes; ++i) ix.classes.push_back(in.get_string("class name"));
  for (uint32_t i = 0; i < shards; ++i) {
    std::string name = in.get_string("shard name");
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      fail("pack", "{}: shard {} has a bad file name '{}'", where, i, name);
    ix.shard_names.push_back(std::move(name));
    ix.shard_sizes.push_back(in.get<uint64_t>("shard size"));
  }
  ix.records.resize(static_cast<size_t>(records));
  for (uint64_t i = 0; i < records; ++i) {
    PackRecord& r = ix.records[static_cast<size_t>(i)];
    r.split = in.get<uint8_t>("record split");
    in.get<uint8_t>("pad"), in.get<uint16_t>("pad");
    r.shard = in.get<uint32_t>("record shard");
    r.offset = in.get<uint64_t>("record offset");
    r.size = in.get<uint32_t>("record size");
    r.label = in.get<int32_t>("record label");
    r.h = in.get<uint32_t>("record height");
    r.w = in.get<uint32_t>("record width");
    r.hash = in.get<uint32_t>("record hash");
    if (r.split > 1 || r.shard >= shards || r.label < 0 ||
        static_cast<uint32_t>(r.label) >= classes || r.size == 0 ||
        r.offset > ix.shard_sizes[r.shard] || r.size > ix.shard_sizes[r.shard] - r.offset ||
        r.h == 0 || r.w == 0 ||
        static_cast<uint64_t>(r.h) * r.w > static_cast<uint64_t>(max_image_pixels()) ||
        (ix.encoding == 1 && r.size != 3ull * r.h * r.w))
      fail("pack",
           "{}: record {} is inconsistent (split {}, shard {} of {}, offset {}, size {}, label "
           "{} of {} classes, {}x{})",
           where, i, r.split, r.shard, shards, r.offset, r.size, r.label, classes, r.w, r.h);
  }
  if (in.at != body.size())
    fail("pack", "{}: {} bytes after the last record", where, body.size() - in.at);
  return ix;
}

bool is_packed_dir(const std::string& dir) {
  return !dir.empty() && fs::exists(fs::path(dir) / kPackIndexName);
}

PackIndex open_pack_index(const std::string& dir) {
  const std::string where = (fs::path(dir) / kPackIndexName).string();
  PackIndex ix = parse_pack_index(read_regular_file("pack", where), where);
  for (size_t i = 0; i < ix.shard_names.size(); ++i) {
    const fs::path p = fs::path(dir) / ix.shard_names[i];
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    if (ec) fail("pack", "{}: missing or unreadable shard ({})", p.string(), ec.message());
    if (size != ix.shard_sizes[i])
      fail("pack", "{}: {} bytes, the index says {} (truncated or replaced shard)", p.string(),
           size, ix.shard_sizes[i]);
  }
  return ix;
}

Splits load_packed_dataset(const std::string& dir, int64_t channels, int64_t height,
                           int64_t width, int64_t limit, double crop_ratio, bool whole_train) {
  auto ix = std::make_shared<const PackIndex>(open_pack_index(dir));
  std::vector<size_t> split[2];
  for (size_t i = 0; i < ix->records.size(); ++i) split[ix->records[i].split].push_back(i);
  if (split[0].empty()) fail("pack", "{}: the pack has no training images", dir);
  if (limit > 0 && limit < static_cast<int64_t>(split[0].size())) {
    std::vector<size_t> kept;  // evenly strided as the folder reader's limit
    const auto n = static_cast<int64_t>(split[0].size());
    for (int64_t i = 0; i < limit; ++i)
      kept.push_back(split[0][static_cast<size_t>((2 * i + 1) * n / (2 * limit))]);
    split[0] = std::move(kept);
  }
  const int64_t samples = static_cast<int64_t>(split[0].size() + split[1].size());
  const PipelineChoice how = choose_pipeline(samples * channels * height * width, samples);
  const Normalization& norm = channels == 1 ? kGrayImageNetNorm : kImageNetNorm;
  std::string s_line;
  auto read = [&](std::vector<size_t> recs, double ratio, bool whole) {
    std::vector<int32_t> labels;
    for (size_t r : recs) labels.push_back(ix->records[r].label);
    // Streamed packs may DCT-scale; an in-RAM load decodes at full resolution.
    auto src = std::make_shared<PackedSource>(dir, ix, std::move(recs), channels, height, width,
                                              ratio, how.stream && pipeline_options().dct_scale);
    if (whole) {
      auto whole_src = std::make_shared<PackedSource>(dir, ix, src->records(), channels, height,
                                                      width, 1.0, pipeline_options().dct_scale);
      return whole_image_split(whole_src, std::move(labels), channels, height, width, s_line);
    }
    return how.stream ? streamed_dataset(src, std::move(labels), channels, height, width, norm)
                      : in_ram_dataset(*src, std::move(labels), channels, height, width, norm);
  };
  Splits s;
  s.pipeline = how.line + fmt::format(" (packed, {} shards)", ix->shard_names.size());
  if (pipeline_options().train_unread) {  // listed only: full-resolution reads if ever read
    std::vector<int32_t> labels;
    for (size_t r : split[0]) labels.push_back(ix->records[r].label);
    s.train = streamed_dataset(
        std::make_shared<PackedSource>(dir, ix, split[0], channels, height, width, 1.0, false),
        std::move(labels), channels, height, width, norm);
    if (!s.pipeline.empty()) s.pipeline += " (training split listed, not decoded)";
  } else {
    s.train = read(split[0], 1.0, whole_train && pipeline_options().stream_allowed);
  }
  if (!s_line.empty()) s.pipeline = s_line + fmt::format(" (packed, {} shards)", ix->shard_names.size());
  if (!split[1].empty()) s.test = read(split[1], crop_ratio, false);
  s.class_names = ix->classes;
  return s;
}

}  // namespace netspec::data
