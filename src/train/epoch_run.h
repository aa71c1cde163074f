// One epoch's updates for the loop (loop.cpp): the loader and its prefetcher, an update's
// micro-batches, the step (one update per call, or K per call on a K-step backend), the epoch's
// running loss and accuracy, the hooks' after_step, and the epoch's training metrics.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "data/loader.h"
#include "train/hooks.h"

namespace netspec::train {

class BatchAugment;

class EpochRun {
 public:
  // Epoch `epoch` (1-based) over train_ds, from ctx.s's position (a mid-epoch resume starts at
  // its data cursor's batch, reading nothing before it). Sets ctx.train_ds / first_update.
  EpochRun(LoopContext& ctx, const std::vector<std::unique_ptr<Hook>>& hooks,
           data::Dataset train_ds, const BatchAugment& batch_aug, int epoch);
  EpochRun(const EpochRun&) = delete;
  EpochRun& operator=(const EpochRun&) = delete;

  bool done() const { return b_ >= ctx_.steps_per_epoch; }
  int64_t position() const { return b_; }  // the next update of the epoch (0-based)
  // Trains the next call's updates (1, or up to K full batches per call); returns how many. An
  // unreadable sample saves `last` at the call's first update (hooks' on_stop), then rethrows.
  int64_t advance();
  // ctx.s at the current position with its data cursor, for a mid-epoch save.
  void hold();
  // The epoch is done: ctx.s at its end, the --skip-bad-images line; the metrics the loop fills
  // (epoch, step, lr, train loss, samples, ms/step, samples/s).
  EpochMetrics finish();

 private:
  int64_t gather(int64_t u, int64_t step);  // update u's micro-batches into xs_, ys_; its samples
  double lr_of(int64_t step) const;
  void finished(int64_t u, double loss, double lr, double dt, int64_t n, int64_t correct,
                int64_t counted);
  void step_k(int64_t calls);  // `calls` updates in one call
  void step_one();

  LoopContext& ctx_;
  const std::vector<std::unique_ptr<Hook>>& hooks_;
  const BatchAugment& batch_aug_;
  const int epoch_, k_;
  const int64_t batch_, b0_;
  data::Dataset ds_;  // ctx.train_ds points here: the loader and prefetcher read it
  data::Loader ld_;
  data::Prefetcher pf_;
  int64_t nb_ = 0, full_end_ = 0;  // batches; batches before the smaller tail batch
  int64_t b_ = 0;                  // the next update
  double loss_sum_ = 0, step_secs_ = 0, lr_ = 0;
  int64_t samples_ = 0, run_samples_ = 0, correct_ = -1, counted_ = 0;
  bool data_failed_ = false;  // the loader's error (an unreadable sample), not the step's
  data::Batch mb_;
  std::vector<Tensor> xs_, ys_;
};

}  // namespace netspec::train
