// Batching over an in-memory Dataset. Training: a seeded shuffle per epoch (the same index
// permutes images and labels, so labels always move with their images) and ceil(size / batch)
// batches, the last one holding the size % batch leftover samples as a SMALLER tensor (PyTorch's
// DataLoader with drop_last=False; the trainer runs it on a train step emitted at that batch).
// Evaluation: in order, the tail batch zero-padded to the full batch and its valid count
// returned. Either way every sample is used exactly once per epoch. Training batches of images [N,
// C, H, W] can be augmented (random crop from a zero-padded image, horizontal flip), drawn from
// (seed, epoch, sample index) only, so a run repeats bit for bit whatever thread assembles the
// batch; label maps [N, H, W] of the same size follow the same crop and flip (segmentation).
// ui8 images are normalised here. Prefetcher assembles batch i+1 on a background thread
// while the caller uses batch i.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "data/rand_augment.h"
#include "data/view.h"

namespace netspec {
class ThreadPool;
}

namespace netspec::data {

// Training-time augmentation, torchvision order: RandomCrop(size, padding=pad) then
// RandomHorizontalFlip(0.5); both act on the raw image (padding is a black pixel).
struct Augment {
  bool crop = false;
  // Crop padding in pixels; < 0 picks round(min(H, W) / 8): 4 for 32x32 (CIFAR's standard) and
  // 28x28, 8 for 64x64, 28 for 224x224.
  int pad = -1;
  bool flip = false;
  // RandAugment / AutoAugment's ImageNet policy after crop/flip, on ui8 images (rand_augment.h).
  bool rand_augment = false, auto_augment = false;
  RandAugmentConfig ra{};
  // RandomResizedCrop(H x W, rrc_params) of the whole image instead of the padded crop
  // (view.h), then the flip; streamed and folder splits serve whole images for it.
  bool rrc = false;
  RrcParams rrc_params{};
  // What TrainConfig::augment turns on.
  static Augment standard() { return {true, -1, true}; }
  bool any() const { return crop || flip || rand_augment || auto_augment || rrc; }
  // The padding actually used for an H x W image.
  int pad_for(int64_t h, int64_t w) const;
};

// One sample's draw: the crop window starts at (dy, dx) in the padded image (0..2·pad), then the
// crop is mirrored left-right when flip. Output pixel (y, x) reads source pixel
// (y + dy - pad, (flip ? W-1-x : x) + dx - pad), black outside the image.
struct AugmentDraw {
  int64_t dy = 0, dx = 0;
  bool flip = false;
};
AugmentDraw augment_draw(const Augment& a, uint64_t seed, int64_t epoch, int64_t index, int64_t h,
                         int64_t w);
// The 64-bit key every draw of a sample derives from: splitmix64 of seed, epoch, index.
uint64_t sample_key(uint64_t seed, int64_t epoch, int64_t index);

class Loader {
 public:
  Loader(const Dataset& ds, int64_t batch, bool train, uint64_t seed, Augment aug = {});
  // Reorders for `epoch` (train: permutation from seed and epoch; eval: identity) and sets the
  // epoch the augmentation draws from.
  void start_epoch(int64_t epoch);
  // ceil(size / batch), train and eval alike (the last batch may be partial).
  int64_t num_batches() const;
  // Samples in batch i: batch, or size % batch for the last one when that is not 0.
  int64_t batch_rows(int64_t i) const;
  // Copies batch i into x and y (allocated here) and returns its sample count n = batch_rows(i).
  // Train: x [n, ...], y [n, ...]. Eval: x [B, ...], y [B, ...] with rows n.. zero-filled
  // (the eval module has a fixed batch). x is f32 for image data
  // (ui8 storage normalised here), else the stored dtype. Safe to call from another thread as
  // long as start_epoch is not running. samples (optional): the dataset index of each row.
  // Eval with skip_bad: the unreadable samples are left out, the rows after them move up, and
  // the count returned is that of the samples read (< batch_rows(i) then).
  int64_t batch(int64_t i, Tensor& x, Tensor& y, std::vector<int64_t>* samples = nullptr) const;
  const std::vector<int64_t>& order() const { return order_; }
  // A streamed split (Dataset::source) is decoded on this many threads of the Loader's own pool
  // (default: data::decode_threads()); batches are the same for any count.
  void set_decode_threads(int threads);
  int64_t batch_size() const { return batch_; }
  // Data parallel across processes (training, streamed splits): this process feeds replicas
  // [first, first + count) of R, so only their rows of each batch are decoded. Of a batch of n
  // samples the stepper keeps n' = n - n % R and gives replica r rows [r·n'/R, (r+1)·n'/R); the
  // other rows stay zero (every row's label is filled). The global batch, position for position,
  // is the one a single process assembles, for any process count.
  void set_shard(int first, int count, int replicas);
  // Rows [lo, hi) of batch i that this process decodes (every row without a shard).
  std::pair<int64_t, int64_t> own_rows(int64_t i) const;
  // --skip-bad-images (streamed splits). Training: a sample whose read fails is replaced by the
  // next sample of the epoch's order that reads (positions p+1, p+2, ... wrapping), with that
  // sample's label and augmentation draw; the batch keeps its size. Evaluation: it is left out
  // (never replaced: no sample may be scored twice); batch() returns the samples read. Off: the
  // read's error.
  void set_skip_bad(bool on) { set_skip_bad(on, !train_); }
  // leave_out: evaluation's rule (left out, never replaced) also for a training-mode loader whose
  // augmented, shuffled batches are scored (test-time augmentation's views).
  void set_skip_bad(bool on, bool leave_out) {
    skip_bad_ = on;
    leave_out_ = leave_out;
  }
  // Samples replaced or left out since start_epoch (by this process) and the first one's error
  // (evaluation: the first by position when batches are assembled in order).
  struct Skipped {
    int64_t count = 0;
    std::string first;
  };
  Skipped skipped() const;

 private:
  void write_image(int64_t s, const uint8_t* px, float* dst) const;
  // Train with rrc: sample s's random-resized crop, flipped, normalised into dst (f32 [C, H, W]).
  void write_rrc(int64_t s, float* dst) const;
  // Streamed: write(s) for the sample at position pos of the order; with skip_bad_, on a read
  // error: training, the next positions' samples in turn (counted in skipped_); evaluation, -1
  // with the error in `error`. Returns the sample written.
  template <class Write>
  int64_t read_sample(int64_t pos, const Write& write, std::string& error) const;
  // Evaluation with skip_bad_: drops the rows of batch rows [0, n) whose `error` is set (moving
  // the later rows, labels and samples up, zeroing the freed rows), counts them; the rows kept.
  int64_t drop_unread(int64_t n, const std::vector<std::string>& error, Tensor& x, Tensor& y,
                      std::vector<int64_t>& samples) const;
  // Segmentation: labels i32 [N, H, W] matching the images' H, W follow their augmentation.
  bool mask_labels() const;
  void write_mask(int64_t s, int32_t* dst) const;

  const Dataset& ds_;
  int64_t batch_;
  bool train_;
  uint64_t seed_;
  Augment aug_;
  int64_t epoch_ = 0;
  std::vector<int64_t> order_;
  std::vector<float> lut_;  // ui8 storage: normalised value of byte v in channel c at c·256 + v
  std::shared_ptr<ThreadPool> decode_pool_;  // streamed splits only
  bool dct_scale_ = true;                     // pipeline_options().dct_scale at construction
  int shard_first_ = 0, shard_count_ = 1, shard_replicas_ = 1;
  bool skip_bad_ = false, leave_out_ = false;
  mutable std::mutex skipped_mu_;
  mutable Skipped skipped_;
};

struct Batch {
  Tensor x, y;
  int64_t valid = 0;  // samples that count (eval tail < batch)
  int64_t index = 0;  // batch number within the epoch
};

// Overlapped loading: a worker thread runs loader.batch(0..n-1) for one epoch, at most `depth`
// batches ahead; next() hands them out in order, identical to calling loader.batch(i) in turn.
// The destructor (or the next start_epoch) stops the worker mid-epoch and joins it. An error in
// the worker is rethrown by next().
class Prefetcher {
 public:
  explicit Prefetcher(Loader& loader, int depth = 2);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // Stops any running epoch, calls loader.start_epoch(epoch) and starts assembling batch
  // first_batch (a mid-epoch resume: the batches before it are never read or decoded).
  void start_epoch(int64_t epoch, int64_t first_batch = 0);
  // The next batch of the epoch; false after the last one.
  bool next(Batch& out);
  // Batches assembled and waiting (<= depth): how far the worker is ahead of the caller.
  int64_t ready();

 private:
  void stop();
  void work(int64_t first, int64_t n);

  Loader& loader_;
  int depth_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  bool stop_ = false, done_ = true;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace netspec::data
