// Batching over an in-memory Dataset. Training: a seeded shuffle per epoch (the same index
// permutes images and labels, so labels always move with their images) and fixed-size batches;
// the tail (size % batch samples) is DROPPED because the train step module has a fixed batch.
// Evaluation: in order, the tail batch zero-padded and its valid count returned, so every sample
// is counted exactly once.
#pragma once
#include <cstdint>
#include <vector>

#include "data/idx.h"

namespace netspec::data {

class Loader {
 public:
  Loader(const Dataset& ds, int64_t batch, bool train, uint64_t seed);
  // Reorders for `epoch` (train: permutation from seed and epoch; eval: identity).
  void start_epoch(int64_t epoch);
  // Train: size / batch; eval: ceil(size / batch).
  int64_t num_batches() const;
  // Copies batch i into x [B, ...] and y [B] (allocated here); returns the valid sample count
  // (B, or the eval tail's size with the rest zero-filled).
  int64_t batch(int64_t i, Tensor& x, Tensor& y) const;
  const std::vector<int64_t>& order() const { return order_; }

 private:
  const Dataset& ds_;
  int64_t batch_;
  bool train_;
  uint64_t seed_;
  std::vector<int64_t> order_;
};

}  // namespace netspec::data
