#include "data/loader.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "core/error.h"

namespace netspec::data {

Loader::Loader(const Dataset& ds, int64_t batch, bool train, uint64_t seed)
    : ds_(ds), batch_(batch), train_(train), seed_(seed) {
  if (batch < 1) fail("loader", "batch must be >= 1 (got {})", batch);
  if (ds.y.numel() != ds.size())
    fail("loader", "label count differs from sample count (got {}, expected {})", ds.y.numel(),
         ds.size());
  if (train && ds.size() < batch)
    fail("loader", "training set smaller than one batch (got {} samples, batch {})", ds.size(),
         batch);
  order_.resize(static_cast<size_t>(ds.size()));
  std::iota(order_.begin(), order_.end(), 0);
}

void Loader::start_epoch(int64_t epoch) {
  std::iota(order_.begin(), order_.end(), 0);
  if (!train_) return;
  // Fisher-Yates with our own draw (std::shuffle's algorithm is implementation-defined).
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1);
  for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng() % i]);
}

int64_t Loader::num_batches() const {
  return train_ ? ds_.size() / batch_ : (ds_.size() + batch_ - 1) / batch_;
}

int64_t Loader::batch(int64_t i, Tensor& x, Tensor& y) const {
  if (i < 0 || i >= num_batches())
    fail("loader", "batch index out of range (got {}, expected < {})", i, num_batches());
  Shape xs = ds_.x.shape();
  xs[0] = batch_;
  x = Tensor(ds_.x.dtype(), xs);
  y = Tensor(DType::kI32, {batch_});
  const size_t row = ds_.x.nbytes() / static_cast<size_t>(ds_.size());
  int64_t n = std::min(batch_, ds_.size() - i * batch_);
  auto* xd = static_cast<uint8_t*>(x.raw());
  const auto* xs_ = static_cast<const uint8_t*>(ds_.x.raw());
  for (int64_t k = 0; k < n; ++k) {
    int64_t s = order_[static_cast<size_t>(i * batch_ + k)];
    std::memcpy(xd + k * row, xs_ + s * row, row);
    y.data<int32_t>()[k] = ds_.y.data<int32_t>()[s];
  }
  return n;
}

}  // namespace netspec::data
