// Streamed splits and the in-RAM / streaming choice (see sample_source.h).
#include "data/sample_source.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "core/thread_pool.h"
#include "core/file_check.h"
#include "data/image.h"
#include "data/view.h"

namespace netspec::data {
namespace {

// The centre-crop view of a region into ui8 [c, h, w].
void render_cover(const Region& r, int64_t c, int64_t h, int64_t w, double ratio, uint8_t* dst) {
  Taps ty, tx;
  cover_taps(r, h, w, ratio, ty, tx);
  render_view(r, ty, tx, c, false, nullptr, nullptr, dst);
}

// The paths are kept as one string of their parts after the common directory (a few dozen bytes
// per file rather than a std::string each), so a streamed run's memory barely grows with the
// number of files (docs/data.md, "Memory").
class FileListSource final : public SampleSource {
 public:
  FileListSource(std::vector<std::pair<std::string, int32_t>> files, int64_t channels,
                 int64_t height, int64_t width, double crop_ratio, bool dct_scale)
      : c_(channels), h_(height), w_(width), ratio_(crop_ratio), dct_(dct_scale) {
    if (!files.empty()) {
      root_ = files.front().first.substr(0, files.front().first.rfind('/') + 1);
      for (const auto& [p, label] : files)
        while (p.compare(0, root_.size(), root_) != 0)
          root_.resize(root_.rfind('/', root_.size() - 2) + 1);  // the parent directory
    }
    ends_.reserve(files.size());
    for (const auto& [p, label] : files) {
      blob_.append(p, root_.size());
      ends_.push_back(blob_.size());
    }
    blob_.shrink_to_fit();
  }
  int64_t size() const override { return static_cast<int64_t>(ends_.size()); }
  std::string path(int64_t i) const {
    const auto k = static_cast<size_t>(i);
    const size_t b = k == 0 ? 0 : ends_.at(k - 1);
    return root_ + blob_.substr(b, ends_.at(k) - b);
  }
  void read(int64_t i, uint8_t* dst) const override {
    thread_local Region r;  // its decode buffer is reused
    r.keep = Tensor();
    read_region(i, cover_chooser(h_, w_, ratio_), dct_, r);
    render_cover(r, c_, h_, w_, ratio_, dst);
  }
  void read_region(int64_t i, const RegionChooser& choose, bool dct_scale,
                   Region& out) const override {
    const std::string p = path(i);
    decode_region(read_regular_file("image", p), p, choose, dct_scale, out);
  }
  std::string describe() const override {
    return fmt::format("{} image files{}", size(), ends_.empty() ? "" : " (first " + path(0) + ")");
  }

 private:
  std::string root_, blob_;  // path i = root_ + blob_[ends_[i-1], ends_[i])
  std::vector<size_t> ends_;
  int64_t c_, h_, w_;
  double ratio_;
  bool dct_;
};

class DecodedSource final : public SampleSource {
 public:
  DecodedSource(std::vector<Tensor> images, std::string from, int64_t channels, int64_t height,
                int64_t width, double crop_ratio)
      : images_(std::move(images)),
        from_(std::move(from)),
        c_(channels),
        h_(height),
        w_(width),
        ratio_(crop_ratio) {}
  int64_t size() const override { return static_cast<int64_t>(images_.size()); }
  void read(int64_t i, uint8_t* dst) const override {
    Region r;
    read_region(i, cover_chooser(h_, w_, ratio_), false, r);
    render_cover(r, c_, h_, w_, ratio_, dst);
  }
  void read_region(int64_t i, const RegionChooser& choose, bool, Region& out) const override {
    stored_region(images_.at(static_cast<size_t>(i)), choose, out);
  }
  std::string describe() const override { return "decoded in RAM: " + from_; }

 private:
  std::vector<Tensor> images_;
  std::string from_;
  int64_t c_, h_, w_;
  double ratio_;
};

class SubsetSource final : public SampleSource {
 public:
  SubsetSource(std::shared_ptr<const SampleSource> src, std::vector<int64_t> rows)
      : src_(std::move(src)), rows_(std::move(rows)) {}
  int64_t size() const override { return static_cast<int64_t>(rows_.size()); }
  void read(int64_t i, uint8_t* dst) const override {
    src_->read(rows_.at(static_cast<size_t>(i)), dst);
  }
  void read_region(int64_t i, const RegionChooser& choose, bool dct_scale,
                   Region& out) const override {
    src_->read_region(rows_.at(static_cast<size_t>(i)), choose, dct_scale, out);
  }
  std::string describe() const override {
    return fmt::format("{} samples of {}", rows_.size(), src_->describe());
  }

 private:
  std::shared_ptr<const SampleSource> src_;
  std::vector<int64_t> rows_;
};

class ResizedSource final : public SampleSource {
 public:
  ResizedSource(std::shared_ptr<const SampleSource> src, int64_t c, int64_t h, int64_t w,
                int64_t rh, int64_t rw)
      : src_(std::move(src)), c_(c), h_(h), w_(w), rh_(rh), rw_(rw) {}
  int64_t size() const override { return src_->size(); }
  void read(int64_t i, uint8_t* dst) const override {
    Tensor x(DType::kUI8, {1, c_, h_, w_});
    src_->read(i, x.data<uint8_t>());
    const Tensor r = resize_images(x, rh_, rw_);  // C planes: one chunk, on this thread
    std::memcpy(dst, r.raw(), r.nbytes());
  }
  void read_region(int64_t i, const RegionChooser& choose, bool dct_scale,
                   Region& out) const override {
    src_->read_region(i, choose, dct_scale, out);
  }
  std::string describe() const override {
    return fmt::format("{} (resized to {}x{})", src_->describe(), rh_, rw_);
  }

 private:
  std::shared_ptr<const SampleSource> src_;
  int64_t c_, h_, w_, rh_, rw_;
};

std::string mib_text(int64_t bytes) {
  const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
  return mib >= 1024 ? fmt::format("{:.1f} GiB", mib / 1024) : fmt::format("{:.1f} MiB", mib);
}

}  // namespace

void SampleSource::read_region(int64_t, const RegionChooser&, bool, Region&) const {
  fail("stream", "{}: keeps only centre crops, not whole images (a random-resized crop needs "
       "them)", describe());
}

std::shared_ptr<const SampleSource> decoded_source(const SampleSource& files, int64_t count,
                                                   int64_t channels, int64_t height,
                                                   int64_t width, double crop_ratio) {
  std::vector<Tensor> images(static_cast<size_t>(count));
  const RegionChooser whole = [](int64_t ih, int64_t iw) { return RegionRequest{0, 0, ih, iw}; };
  parallel_for(count, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      Region r;
      files.read_region(i, whole, false, r);
      Tensor t(DType::kUI8, {r.channels, r.h, r.w});
      uint8_t* o = t.data<uint8_t>();
      for (int64_t y = 0; y < r.h; ++y)
        for (int64_t x = 0; x < r.w; ++x)
          for (int64_t c = 0; c < r.channels; ++c)
            o[(c * r.h + y) * r.w + x] = r.at(r.oy + y, r.ox + x)[c * r.cs];
      images[static_cast<size_t>(i)] = std::move(t);
    }
  });
  return std::make_shared<DecodedSource>(std::move(images), files.describe(), channels, height,
                                         width, crop_ratio);
}

int64_t estimate_whole_bytes(const SampleSource& src, int64_t probe) {
  const int64_t n = src.size();
  if (n == 0) return 0;
  const int64_t k = std::min(n, std::max<int64_t>(probe, 1));
  int64_t sum = 0;
  for (int64_t i = 0; i < k; ++i) {
    int64_t pixels = 0;
    Region r;  // the header gives the size; one row of one iMCU is decoded
    src.read_region((2 * i + 1) * n / (2 * k), [&](int64_t ih, int64_t iw) {
      pixels = ih * iw;
      return RegionRequest{0, 0, 1, 1};
    }, false, r);
    sum += 3 * pixels;
  }
  return static_cast<int64_t>(static_cast<double>(sum) / static_cast<double>(k) *
                              static_cast<double>(n));
}

void require_in_ram(const Dataset& ds, std::string_view where, std::string_view what) {
  if (!ds.streamed()) return;
  fail(where,
       "{} reads the whole split, which is streamed ({}; its decoded images are over the data "
       "memory budget): raise --data-memory MB to hold it in RAM",
       what, ds.source->describe());
}

void rgb_to_gray(const uint8_t* chw, int64_t hw, uint8_t* out) {
  for (int64_t k = 0; k < hw; ++k)
    out[k] = static_cast<uint8_t>((chw[k] + chw[hw + k] + chw[2 * hw + k] + 1) / 3);
}

std::shared_ptr<const SampleSource> file_list_source(
    std::vector<std::pair<std::string, int32_t>> files, int64_t channels, int64_t height,
    int64_t width, double crop_ratio, bool dct_scale) {
  if (channels != 1 && channels != 3)
    fail("stream", "images need 1 or 3 channels (got {})", channels);
  return std::make_shared<FileListSource>(std::move(files), channels, height, width, crop_ratio,
                                          dct_scale);
}

Dataset streamed_dataset(std::shared_ptr<const SampleSource> src, std::vector<int32_t> labels,
                         int64_t channels, int64_t height, int64_t width,
                         const Normalization& norm) {
  const int64_t n = src->size();
  if (static_cast<int64_t>(labels.size()) != n)
    fail("stream", "{}: {} labels for {} samples", src->describe(), labels.size(), n);
  // The listing's freed strings (one per file) back to the OS: the run's steady memory then does
  // not depend on how many files were listed.
  malloc_trim(0);
  Dataset ds;
  ds.x = Tensor::wrap(DType::kUI8, {n, channels, height, width}, nullptr);  // shape only
  ds.y = Tensor::from<int32_t>(DType::kI32, {n}, labels);
  ds.mean = norm.mean;
  ds.std = norm.std;
  ds.source = std::move(src);
  return ds;
}

Dataset in_ram_dataset(const SampleSource& src, std::vector<int32_t> labels, int64_t channels,
                       int64_t height, int64_t width, const Normalization& norm) {
  const int64_t n = src.size();
  if (static_cast<int64_t>(labels.size()) != n)
    fail("stream", "{}: {} labels for {} samples", src.describe(), labels.size(), n);
  Dataset ds{Tensor(DType::kUI8, {n, channels, height, width}),
             Tensor::from<int32_t>(DType::kI32, {n}, labels), norm.mean, norm.std};
  const int64_t row = channels * height * width;
  parallel_for(n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) src.read(i, ds.x.data<uint8_t>() + i * row);
  });
  return ds;
}

std::shared_ptr<const SampleSource> resized_source(std::shared_ptr<const SampleSource> src,
                                                   int64_t channels, int64_t height, int64_t width,
                                                   int64_t rh, int64_t rw) {
  if (rh < 1 || rw < 1) fail("stream", "resize to {}x{}: must be positive", rh, rw);
  return std::make_shared<ResizedSource>(std::move(src), channels, height, width, rh, rw);
}

std::shared_ptr<const SampleSource> subset_source(std::shared_ptr<const SampleSource> src,
                                                  std::vector<int64_t> rows) {
  for (int64_t r : rows)
    if (r < 0 || r >= src->size())
      fail("data", "row out of range (got {}, expected < {})", r, src->size());
  return std::make_shared<SubsetSource>(std::move(src), std::move(rows));
}

PipelineOptions& pipeline_options() {
  static PipelineOptions o;
  return o;
}

int64_t default_data_memory_mb() {
  std::ifstream f("/proc/meminfo");
  for (std::string line; std::getline(f, line);) {
    std::istringstream is(line);
    std::string key;
    int64_t kib = 0;
    if (is >> key >> kib && key == "MemTotal:" && kib > 0) return kib / 1024 / 4;
  }
  return 1024;
}

int default_decode_threads() {
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, hw - 1);
}

int decode_threads() {
  const int t = pipeline_options().threads;
  return t > 0 ? t : default_decode_threads();
}

PipelineChoice choose_pipeline(int64_t bytes, int64_t samples) {
  const bool given = pipeline_options().memory_mb >= 0;
  const int64_t budget_mb = given ? pipeline_options().memory_mb : default_data_memory_mb();
  const int64_t budget = budget_mb * 1024 * 1024;
  const std::string why = fmt::format("budget {} MiB{}", budget_mb,
                                      given ? ", --data-memory" : ", a quarter of RAM");
  PipelineChoice c;
  if (!pipeline_options().stream_allowed) return c;  // this command holds its data in RAM
  c.stream = bytes > budget;
  const int threads = decode_threads();
  c.line = c.stream ? fmt::format("data: streaming {} images ({} decoded, over the {}), {} "
                                  "decode thread{}",
                                  samples, mib_text(bytes), why, threads, threads == 1 ? "" : "s")
                    : fmt::format("data: in RAM, {} images ({} decoded, within the {})", samples,
                                  mib_text(bytes), why);
  return c;
}

}  // namespace netspec::data
