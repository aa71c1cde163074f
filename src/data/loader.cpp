// Loader and Prefetcher (see loader.h).
#include "data/loader.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "core/error.h"
#include "core/hash.h"
#include "core/thread_pool.h"
#include "data/sample_source.h"

namespace netspec::data {
namespace {

bool is_image(const Dataset& ds) { return ds.x.rank() == 4; }

}  // namespace

int Augment::pad_for(int64_t h, int64_t w) const {
  if (pad >= 0) return pad;
  return static_cast<int>(std::lround(static_cast<double>(std::min(h, w)) / 8.0));
}

uint64_t sample_key(uint64_t seed, int64_t epoch, int64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(epoch)) ^
                    static_cast<uint64_t>(index));
}

AugmentDraw augment_draw(const Augment& a, uint64_t seed, int64_t epoch, int64_t index, int64_t h,
                         int64_t w) {
  AugmentDraw d;
  const uint64_t k = sample_key(seed, epoch, index);
  const int64_t p = a.pad_for(h, w);
  if (a.crop && !a.rrc) {
    d.dy = static_cast<int64_t>(splitmix64(k ^ 1) % static_cast<uint64_t>(2 * p + 1));
    d.dx = static_cast<int64_t>(splitmix64(k ^ 2) % static_cast<uint64_t>(2 * p + 1));
  } else {
    d.dy = d.dx = p;  // the centre window: the image itself
  }
  d.flip = a.flip && (splitmix64(k ^ 3) >> 63) != 0;
  return d;
}

Loader::Loader(const Dataset& ds, int64_t batch, bool train, uint64_t seed, Augment aug)
    : ds_(ds), batch_(batch), train_(train), seed_(seed), aug_(aug) {
  if (batch < 1) fail("loader", "batch must be >= 1 (got {})", batch);
  // A split the data does not have (a flat image folder's test split) is an empty Dataset{}:
  // say so, rather than "label rows differ (got 0, expected 0)".
  if (ds.x.rank() == 0 && ds.y.rank() == 0)
    fail("loader", "the split is empty (got no samples, expected a tensor [N, ...])");
  if (ds.y.rank() < 1 || ds.y.shape()[0] != ds.size())
    fail("loader", "label rows differ from sample count (got {}, expected {})",
         ds.y.rank() < 1 ? 0 : ds.y.shape()[0], ds.size());
  if (train && ds.size() < 1) fail("loader", "training set is empty (got 0 samples)");
  if (ds.x.dtype() == DType::kUI8) {
    if (!is_image(ds))
      fail("loader", "ui8 data must be images [N, C, H, W] (got {})", ds.x.type_str());
    const auto c = static_cast<size_t>(ds.x.shape()[1]);
    if (ds.mean.size() != c || ds.std.size() != c)
      fail("loader", "ui8 images need a mean and std per channel (got {} and {}, expected {})",
           ds.mean.size(), ds.std.size(), c);
    if (!ds.pixel_values.empty()) {
      if (ds.pixel_values.size() != c * 256)
        fail("loader", "pixel_values needs 256 values per channel (got {}, expected {})",
             ds.pixel_values.size(), c * 256);
      lut_ = ds.pixel_values;
    } else {
      lut_.resize(c * 256);
      for (size_t k = 0; k < c; ++k)
        for (int v = 0; v < 256; ++v)
          lut_[k * 256 + v] = (static_cast<float>(v) / 255.f - ds.mean[k]) / ds.std[k];
    }
  }
  if (train && aug_.any()) {
    if (!is_image(ds) || (ds.x.dtype() != DType::kF32 && ds.x.dtype() != DType::kUI8))
      fail("loader", "augmentation needs images [N, C, H, W] (got {})", ds.x.type_str());
    if ((aug_.rand_augment || aug_.auto_augment) && ds.x.dtype() != DType::kUI8)
      fail("loader", "randAugment/autoAugment need ui8 images (got {})", ds.x.type_str());
    if (!ds.black.empty() && ds.black.size() != static_cast<size_t>(ds.x.shape()[1]))
      fail("loader", "black has {} values (expected one per channel: {})", ds.black.size(),
           ds.x.shape()[1]);
  }
  if (train && aug_.rrc) {
    if (ds.x.dtype() != DType::kUI8)
      fail("loader", "randomResizedCrop needs ui8 images [N, C, H, W] (got {})", ds.x.type_str());
    if (mask_labels())
      fail("loader", "randomResizedCrop is for classification images (got label maps {})",
           ds.y.type_str());
  }
  dct_scale_ = pipeline_options().dct_scale;
  if (ds.streamed()) {
    if (ds.x.dtype() != DType::kUI8 || !is_image(ds) || ds.source->size() != ds.size())
      fail("loader", "a streamed split must be ui8 images [N, C, H, W] of its source's {} samples "
           "(got {})", ds.source->size(), ds.x.type_str());
    set_decode_threads(decode_threads());
  }
  order_.resize(static_cast<size_t>(ds.size()));
  std::iota(order_.begin(), order_.end(), 0);
}

void Loader::set_decode_threads(int threads) {
  if (threads < 1) fail("loader", "decode threads must be >= 1 (got {})", threads);
  if (ds_.streamed()) decode_pool_ = std::make_shared<ThreadPool>(threads);
}

void Loader::set_shard(int first, int count, int replicas) {
  if (replicas < 1 || first < 0 || count < 1 || first + count > replicas)
    fail("loader", "shard must be replicas [first, first + count) of R (got {}, {} of {})", first,
         count, replicas);
  shard_first_ = first;
  shard_count_ = count;
  shard_replicas_ = replicas;
}

std::pair<int64_t, int64_t> Loader::own_rows(int64_t i) const {
  const int64_t n = batch_rows(i), r = shard_replicas_;
  if (!train_ || r == 1) return {0, n};
  const int64_t kept = n - n % r;  // the stepper's equal shards
  return {shard_first_ * kept / r, (shard_first_ + shard_count_) * kept / r};
}

Loader::Skipped Loader::skipped() const {
  std::lock_guard<std::mutex> lk(skipped_mu_);
  return skipped_;
}

void Loader::start_epoch(int64_t epoch) {
  {
    std::lock_guard<std::mutex> lk(skipped_mu_);
    skipped_ = {};
  }
  epoch_ = epoch;
  std::iota(order_.begin(), order_.end(), 0);
  if (!train_) return;
  // Fisher-Yates with our own draw (std::shuffle's algorithm is implementation-defined).
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1);
  for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng() % i]);
}

int64_t Loader::num_batches() const { return (ds_.size() + batch_ - 1) / batch_; }

int64_t Loader::batch_rows(int64_t i) const {
  return std::clamp<int64_t>(ds_.size() - i * batch_, 0, batch_);
}

void Loader::write_rrc(int64_t s, float* dst) const {
  const Shape& sh = ds_.x.shape();
  const int64_t C = sh[1], H = sh[2], W = sh[3];
  const RegionChooser choose = rrc_chooser(sample_key(seed_, epoch_, s), aug_.rrc_params, H, W);
  thread_local Region r;  // its decode buffer is reused sample after sample
  r.keep = Tensor();
  if (ds_.streamed())
    ds_.source->read_region(s, choose, dct_scale_, r);
  else  // a stored image is the whole image (fixed-size sets)
    stored_region(ds_.x.data<uint8_t>() + s * C * H * W, C, H, W, choose, r);
  Taps ty, tx;
  rrc_taps(r, H, W, ty, tx);
  const bool flip = augment_draw(aug_, seed_, epoch_, s, H, W).flip;
  if (!aug_.rand_augment && !aug_.auto_augment) {
    render_view(r, ty, tx, C, flip, lut_.data(), dst, nullptr);
    return;
  }
  Image8 im{C, H, W, std::vector<uint8_t>(static_cast<size_t>(C * H * W), 0)};
  render_view(r, ty, tx, C, flip, nullptr, nullptr, im.px.data());
  AugDraws dr = sample_draws(seed_, epoch_, s);
  im = aug_.auto_augment ? auto_augment_imagenet(im, dr) : rand_augment(im, aug_.ra, dr);
  const int64_t hw = H * W;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < hw; ++i) dst[c * hw + i] = lut_[c * 256 + im.px[c * hw + i]];
}

// Sample s as f32 [C, H, W]: augmented (train) and normalised (ui8 storage, its pixels at
// `px`: the stored row, or the streamed sample just decoded).
void Loader::write_image(int64_t s, const uint8_t* px, float* dst) const {
  const Shape& sh = ds_.x.shape();
  const int64_t C = sh[1], H = sh[2], W = sh[3], hw = H * W;
  const bool aug = train_ && aug_.any();
  const AugmentDraw d = aug ? augment_draw(aug_, seed_, epoch_, s, H, W) : AugmentDraw{};
  const int64_t p = aug ? aug_.pad_for(H, W) : 0;
  const bool u8 = ds_.x.dtype() == DType::kUI8;
  if (aug && (aug_.rand_augment || aug_.auto_augment)) {
    // ui8 only (checked in the constructor): crop/flip into bytes, the policy, then normalise.
    Image8 im{C, H, W, std::vector<uint8_t>(static_cast<size_t>(C * hw), 0)};
    const uint8_t* src = px;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) {
          const int64_t sy = y + d.dy - p, sx = (d.flip ? W - 1 - x : x) + d.dx - p;
          if (sy >= 0 && sy < H && sx >= 0 && sx < W) im.at(c, y, x) = src[(c * H + sy) * W + sx];
        }
    AugDraws dr = sample_draws(seed_, epoch_, s);
    im = aug_.auto_augment ? auto_augment_imagenet(im, dr) : rand_augment(im, aug_.ra, dr);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < hw; ++i) dst[c * hw + i] = lut_[c * 256 + im.px[c * hw + i]];
    return;
  }
  for (int64_t c = 0; c < C; ++c) {
    // ui8: torchvision's ToTensor + Normalize, (v / 255 - mean) / std, from a 256-entry table.
    const float* lut = u8 ? &lut_[static_cast<size_t>(c) * 256] : nullptr;
    const float black = u8 ? lut[0] : ds_.black.empty() ? 0.f : ds_.black[c];
    float* out = dst + c * hw;
    const int64_t base = u8 ? c * hw : (s * C + c) * hw;  // ui8: from px, f32: the stored row
    for (int64_t y = 0; y < H; ++y) {
      const int64_t sy = y + d.dy - p;
      if (sy < 0 || sy >= H) {
        std::fill(out + y * W, out + (y + 1) * W, black);
        continue;
      }
      // Output columns [x0, x1) read source column sx = x + shift (or W-1-x + shift flipped);
      // the rest is padding.
      const int64_t shift = d.dx - p;
      const int64_t x0 = std::clamp<int64_t>(d.flip ? shift : -shift, 0, W);
      const int64_t x1 = std::clamp<int64_t>(d.flip ? W + shift : W - shift, x0, W);
      float* o = out + y * W;
      std::fill(o, o + x0, black);
      std::fill(o + x1, o + W, black);
      const int64_t row = base + sy * W;
      const int64_t step = d.flip ? -1 : 1, first = (d.flip ? W - 1 - x0 : x0) + shift;
      if (u8) {
        const uint8_t* src = px + row + first;
        for (int64_t x = x0; x < x1; ++x, src += step) o[x] = lut[*src];
      } else {
        const float* src = ds_.x.data<float>() + row + first;
        for (int64_t x = x0; x < x1; ++x, src += step) o[x] = *src;
      }
    }
  }
}

template <class Write>
int64_t Loader::read_sample(int64_t pos, const Write& write, std::string& error) const {
  const auto size = static_cast<int64_t>(order_.size());
  for (int64_t t = 0; t < size; ++t) {
    const int64_t s = order_[static_cast<size_t>((pos + t) % size)];
    try {
      write(s);
    } catch (const Error& e) {
      if (!skip_bad_) throw;
      if (t == 0) error = e.what();
      if (leave_out_) return -1;  // evaluation: left out, the caller drops the row
      continue;
    }
    if (t > 0) {  // counted once, at the bad sample's own position
      std::lock_guard<std::mutex> lk(skipped_mu_);
      if (skipped_.count++ == 0) skipped_.first = error;
    }
    return s;
  }
  fail("loader", "--skip-bad-images: no sample of the {} could be read (the first: {})",
       ds_.source->describe(), error);
}

int64_t Loader::drop_unread(int64_t n, const std::vector<std::string>& error, Tensor& x, Tensor& y,
                            std::vector<int64_t>& samples) const {
  const size_t xrow = x.nbytes() / static_cast<size_t>(x.shape()[0]);
  const size_t yrow = y.nbytes() / static_cast<size_t>(y.shape()[0]);
  auto* xd = static_cast<uint8_t*>(x.raw());
  auto* yd = static_cast<uint8_t*>(y.raw());
  int64_t kept = 0;
  for (int64_t k = 0; k < n; ++k) {
    const auto ks = static_cast<size_t>(k);
    if (!error[ks].empty()) {
      std::lock_guard<std::mutex> lk(skipped_mu_);
      if (skipped_.count++ == 0) skipped_.first = error[ks];
      continue;
    }
    if (kept != k) {
      std::memcpy(xd + kept * xrow, xd + k * xrow, xrow);
      std::memcpy(yd + kept * yrow, yd + k * yrow, yrow);
      samples[static_cast<size_t>(kept)] = samples[ks];
    }
    ++kept;
  }
  std::memset(xd + kept * xrow, 0, static_cast<size_t>(n - kept) * xrow);  // as the padded tail
  std::memset(yd + kept * yrow, 0, static_cast<size_t>(n - kept) * yrow);
  samples.resize(static_cast<size_t>(kept));
  return kept;
}

bool Loader::mask_labels() const {
  const Shape& xs = ds_.x.shape();
  const Shape& ys = ds_.y.shape();
  return ys.size() == 3 && xs.size() == 4 && ys[1] == xs[2] && ys[2] == xs[3] &&
         ds_.y.dtype() == DType::kI32;
}

// Label map of sample s [H, W] under the same crop / flip draw as its image (nearest: the label
// of the source pixel write_image reads), 0 in the padding.
void Loader::write_mask(int64_t s, int32_t* dst) const {
  const int64_t H = ds_.y.shape()[1], W = ds_.y.shape()[2];
  const bool aug = train_ && aug_.any();
  const AugmentDraw d = aug ? augment_draw(aug_, seed_, epoch_, s, H, W) : AugmentDraw{};
  const int64_t p = aug ? aug_.pad_for(H, W) : 0;
  const int32_t* src = ds_.y.data<int32_t>() + s * H * W;
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x) {
      const int64_t sy = y + d.dy - p, sx = (d.flip ? W - 1 - x : x) + d.dx - p;
      dst[y * W + x] = sy < 0 || sy >= H || sx < 0 || sx >= W ? 0 : src[sy * W + sx];
    }
}

int64_t Loader::batch(int64_t i, Tensor& x, Tensor& y, std::vector<int64_t>* samples) const {
  if (i < 0 || i >= num_batches())
    fail("loader", "batch index out of range (got {}, expected < {})", i, num_batches());
  const bool u8 = ds_.x.dtype() == DType::kUI8;
  const bool image_path = u8 || (train_ && aug_.any());
  const bool rrc = train_ && aug_.rrc;
  const int64_t n = batch_rows(i);
  // Training tail: a smaller batch of n rows; evaluation tail: n rows then zeros up to batch_.
  const int64_t rows = train_ ? n : batch_;
  Shape xs = ds_.x.shape(), ys = ds_.y.shape();
  xs[0] = ys[0] = rows;
  x = Tensor(u8 ? DType::kF32 : ds_.x.dtype(), xs);
  y = Tensor(ds_.y.dtype(), ys);
  const size_t xrow = ds_.x.nbytes() / static_cast<size_t>(ds_.size());
  const size_t yrow = ds_.y.nbytes() / static_cast<size_t>(ds_.size());
  const size_t orow = x.nbytes() / static_cast<size_t>(rows);
  auto* xd = static_cast<uint8_t*>(x.raw());
  auto* yd = static_cast<uint8_t*>(y.raw());
  const auto* xsrc = static_cast<const uint8_t*>(ds_.x.raw());
  const auto* ysrc = static_cast<const uint8_t*>(ds_.y.raw());
  if (ds_.streamed()) {
    // Each decode thread reads whole samples (decode, resize, augment, normalise) into their
    // rows of x: the bytes do not depend on which thread or how many. Rows another process
    // feeds (set_shard) get their label only.
    const auto [lo, hi] = own_rows(i);
    std::vector<int64_t> rows(order_.begin() + i * batch_, order_.begin() + i * batch_ + n);
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(yd + k * yrow, ysrc + rows[static_cast<size_t>(k)] * yrow, yrow);
    std::vector<std::string> error(static_cast<size_t>(n));  // per row: why it was not read
    decode_pool_->parallel_for(hi - lo, 1, [&](int64_t b, int64_t e) {
      std::vector<uint8_t> px(xrow);
      for (int64_t k = lo + b; k < lo + e; ++k) {
        auto* dst = reinterpret_cast<float*>(xd + k * orow);
        const auto ks = static_cast<size_t>(k);
        const int64_t s = read_sample(
            i * batch_ + k,
            [&](int64_t s) {
              if (rrc) {
                write_rrc(s, dst);
              } else {
                ds_.source->read(s, px.data());
                write_image(s, px.data(), dst);
              }
            },
            error[ks]);
        if (s < 0) continue;  // evaluation: left out below
        rows[ks] = s;
        std::memcpy(yd + k * yrow, ysrc + s * yrow, yrow);
      }
    });
    const int64_t kept = !leave_out_ || !skip_bad_ ? n : drop_unread(n, error, x, y, rows);
    if (samples) *samples = std::move(rows);
    return kept;
  }
  if (samples) samples->assign(order_.begin() + i * batch_, order_.begin() + i * batch_ + n);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t s = order_[static_cast<size_t>(i * batch_ + k)];
    if (rrc)
      write_rrc(s, reinterpret_cast<float*>(xd + k * orow));
    else if (image_path)
      write_image(s, u8 ? xsrc + s * xrow : nullptr, reinterpret_cast<float*>(xd + k * orow));
    else
      std::memcpy(xd + k * xrow, xsrc + s * xrow, xrow);
    if (image_path && mask_labels())
      write_mask(s, reinterpret_cast<int32_t*>(yd + k * yrow));
    else
      std::memcpy(yd + k * yrow, ysrc + s * yrow, yrow);
  }
  return n;
}

Prefetcher::Prefetcher(Loader& loader, int depth) : loader_(loader), depth_(depth) {
  if (depth < 1) fail("prefetcher", "depth must be >= 1 (got {})", depth);
}

Prefetcher::~Prefetcher() { stop(); }

void Prefetcher::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  std::lock_guard<std::mutex> lk(mu_);
  queue_.clear();
  error_ = nullptr;
  stop_ = false;
  done_ = true;
}

void Prefetcher::start_epoch(int64_t epoch, int64_t first_batch) {
  stop();
  loader_.start_epoch(epoch);
  const int64_t n = loader_.num_batches();
  if (first_batch < 0 || first_batch > n)
    fail("prefetcher", "first batch out of range (got {}, expected 0..{})", first_batch, n);
  done_ = false;
  worker_ = std::thread([this, first_batch, n] { work(first_batch, n); });
}

void Prefetcher::work(int64_t first, int64_t n) {
  try {
    for (int64_t i = first; i < n; ++i) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || static_cast<int>(queue_.size()) < depth_; });
        if (stop_) return;
      }
      Batch b;
      b.index = i;
      b.valid = loader_.batch(i, b.x, b.y);  // assembled outside the lock
      {
        std::lock_guard<std::mutex> lk(mu_);
        queue_.push_back(std::move(b));
      }
      cv_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lk(mu_);
    error_ = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    done_ = true;
  }
  cv_.notify_all();
}

int64_t Prefetcher::ready() {
  std::lock_guard<std::mutex> lk(mu_);
  return static_cast<int64_t>(queue_.size());
}

bool Prefetcher::next(Batch& out) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return !queue_.empty() || done_; });
  if (!queue_.empty()) {
    out = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();
    cv_.notify_all();
    return true;
  }
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
  return false;
}

}  // namespace netspec::data
