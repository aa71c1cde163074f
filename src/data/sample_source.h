// Streamed image splits (data bigger than memory). A Dataset whose `source` is set keeps only its
// labels y in memory; x is a shape-only ui8 [N, C, H, W] tensor (no storage) and each sample's
// pixels come from source->read(i), decoded when the Loader assembles the batch that holds it, on
// the Loader's own decode threads. A sample reads exactly the bytes the in-RAM reader would have
// stored for it (decode + resize + centre crop), so batches, augmentation draws and training
// results are the same on either path and for any thread count.
//
// The choice: an image split is streamed when its decoded size (N·C·H·W bytes, train and test
// together) is over the memory budget, --data-memory MB, by default a quarter of MemTotal in
// /proc/meminfo (the rest is the model, the optimizer, the executor's arenas and the OS's page
// cache). The reader says which path it took and why in Splits::pipeline.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "data/region.h"

namespace netspec::data {

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  virtual int64_t size() const = 0;
  // Sample i as ui8 [C, H, W] (the dataset's x row) into dst; an unreadable sample fails
  // naming its file. Called from several threads at once.
  virtual void read(int64_t i, uint8_t* dst) const = 0;
  // Where the samples come from, for messages ("312 files under DIR/train").
  virtual std::string describe() const = 0;
  // The part of sample i's whole image that `choose` asks for (region.h), DCT-scaled when
  // dct_scale allows it: what a random-resized crop reads. Sources that keep only the centre
  // crop refuse, naming themselves.
  virtual void read_region(int64_t i, const RegionChooser& choose, bool dct_scale,
                           Region& out) const;
};

// A split read from a list of image files, each decoded, resized to cover H x W and
// centre-cropped (resize_center_crop, crop_ratio as the in-RAM reader), then averaged to gray
// for channels == 1 (the in-RAM reader's to_gray). Only the window the resize reads is decoded
// (view.h's cover view), at full resolution unless dct_scale (then within the resize tolerance).
// read_region serves the whole image (random-resized crops).
std::shared_ptr<const SampleSource> file_list_source(
    std::vector<std::pair<std::string, int32_t>> files, int64_t channels, int64_t height,
    int64_t width, double crop_ratio, bool dct_scale = false);
// Whole images decoded once and kept in RAM (ui8 [3, h, w] each, their own sizes): the in-RAM
// form of a split that random-resized crops read; read() gives the centre crop as above.
std::shared_ptr<const SampleSource> decoded_source(const SampleSource& files, int64_t count,
                                                   int64_t channels, int64_t height,
                                                   int64_t width, double crop_ratio);
// The samples of `src` (ui8 [C, H, W]) resized to [C, rh, rw] by resize_images (PIL's
// antialiased bilinear): a streamed training split at trainRes gets exactly the bytes the in-RAM
// path's resize of its stored split gives. read_region passes through (whole images, for
// random-resized crops, which the Loader renders at the split's H x W).
std::shared_ptr<const SampleSource> resized_source(std::shared_ptr<const SampleSource> src,
                                                   int64_t channels, int64_t height, int64_t width,
                                                   int64_t rh, int64_t rw);
// Decoded bytes of the whole images of `src` (3·h·w each), estimated from the headers of at most
// `probe` evenly strided samples.
int64_t estimate_whole_bytes(const SampleSource& src, int64_t probe = 64);

// Refuses a streamed split (exit 2) for a use that reads its samples whole rather than through
// the Loader or source->read: `[where] <what> reads the whole split, which is streamed ...:
// raise --data-memory MB`. Does nothing for an in-RAM split.
void require_in_ram(const Dataset& ds, std::string_view where, std::string_view what);

// RGB ui8 [3, hw] -> gray [hw], the rounded channel mean (a 1-channel net's images).
void rgb_to_gray(const uint8_t* chw, int64_t hw, uint8_t* out);

// The streamed Dataset over `src`: labels y i32 [N], x shape-only ui8 [N, C, H, W], norm attached.
Dataset streamed_dataset(std::shared_ptr<const SampleSource> src, std::vector<int32_t> labels,
                         int64_t channels, int64_t height, int64_t width, const Normalization& norm);
// The whole of `src` decoded into an in-RAM Dataset (x ui8 [N, C, H, W]), in parallel.
Dataset in_ram_dataset(const SampleSource& src, std::vector<int32_t> labels, int64_t channels,
                       int64_t height, int64_t width, const Normalization& norm);
// Samples `rows` of a streamed source, in that order (take_rows on a streamed Dataset).
std::shared_ptr<const SampleSource> subset_source(std::shared_ptr<const SampleSource> src,
                                                  std::vector<int64_t> rows);

// How the data pipeline is set up for a process (train's --data-memory and --data-threads).
struct PipelineOptions {
  // Budget for in-RAM splits in MiB; 0 streams every image folder; < 0: default_data_memory_mb().
  int64_t memory_mb = -1;
  int threads = 0;        // decode threads per streamed loader; 0: default_decode_threads()
  // Streamed JPEGs may decode at 1/2, 1/4, 1/8 scale where the view keeps its resolution
  // (--no-dct-scale: never; streamed batches then equal the in-RAM ones bit for bit).
  bool dct_scale = true;
  // Only commands whose every use of the splits goes through the Loader (train) stream; for the
  // others every split is in RAM whatever its size.
  bool stream_allowed = false;
  // --skip-bad-images: a training sample that cannot be read is replaced (Loader::set_skip_bad).
  bool skip_bad = false;
  // Set by commands that score the test split only (eval, report, cam): image folders and packs
  // list their training split (labels and class names) but never decode it; the choice above
  // still counts it, so such a command takes the path `train` took under the same budget.
  bool train_unread = false;
};
PipelineOptions& pipeline_options();
// A quarter of MemTotal (/proc/meminfo), 1024 MiB when it cannot be read.
int64_t default_data_memory_mb();
// The cores the step leaves: hardware threads - 1 (one drives the step and the prefetcher), >= 1.
int default_decode_threads();
int decode_threads();  // pipeline_options().threads, or the default

// Whether splits of `bytes` decoded bytes stream under the current budget, and the line that
// says so ("data: streaming 1.2 GiB of decoded images (budget 512 MiB, --data-memory)").
struct PipelineChoice {
  bool stream = false;
  std::string line;
};
PipelineChoice choose_pipeline(int64_t bytes, int64_t samples);

}  // namespace netspec::data
