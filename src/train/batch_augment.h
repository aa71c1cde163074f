// The trainer's batch-level augmentation and label feed (data/mix.h): random erasing per sample,
// then mixup / cutmix per batch, and for the soft-target losses (softLabelCE, bce) the class
// labels turned into [B, N] targets (one-hot with labelSmoothing when a batch is not mixed), so
// those losses train on any classification dataset. Draws from (seed, epoch, batch / sample).
#pragma once
#include <cstdint>

#include "data/loader.h"
#include "data/mix.h"
#include "spec/param_table.h"
#include "spec/train_config.h"

namespace netspec::train {

class BatchAugment {
 public:
  // Refuses mixup / cutmix with a loss that takes class indices, and image ops on non-images.
  BatchAugment(const TrainConfig& c, const ParamTable& t, const data::Dataset& train);
  bool active() const { return soft_ || erase_; }
  // Mixup / cutmix / kNN-mixup: each row is mixed with another row of the whole batch.
  bool mixes() const { return mix_.any(); }
  // Batch `index` of `epoch` (0-based) as the loader produced it.
  void apply(int64_t epoch, int64_t index, const data::Loader& ld, data::Batch& mb) const;

 private:
  data::MixConfig mix_;
  bool soft_ = false, erase_ = false;
  double erase_p_ = 0;
  uint64_t seed_ = 0;
};

}  // namespace netspec::train
