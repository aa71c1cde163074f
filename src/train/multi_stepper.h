// Several updates per backend call, for engines whose calls are expensive (IREE's tools: each
// call a process that loads the .vmfb and reads its inputs from files). The K-step module
// (emit/multi_step.h) runs n <= K full-batch fused train steps in one call: the parameters and
// optimizer state go in and come back once per call, the batches, dropout / drop-path keep
// masks (draw_keep_mask of each step: the bits the one-step path draws), learning rates and
// step counters go in stacked [K, ...]. Each step's loss and BN batch statistics come back so the
// host applies the running-stat EMA step by step as the one-step path does. The state stays in
// TrainState (host tensors), so checkpoints, evaluation and resume read it unchanged.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "emit/manifest.h"
#include "exec/backend.h"
#include "spec/layer.h"
#include "spec/param_table.h"
#include "spec/train_config.h"
#include "train/checkpoint.h"

namespace netspec::train {

class MultiStepper {
 public:
  // Emits the train step at `batch` and its K-step wrapper, and loads the wrapper on `be` (one
  // compile per run; the iree backend keeps the .vmfb in its compile cache between runs).
  MultiStepper(const NetSpec& net, const ParamTable& t, const TrainConfig& c, exec::Backend& be,
               int64_t batch, int k);
  ~MultiStepper();
  int k() const { return k_; }
  // The one-step train_step's manifest (the state layout; the tail module is checked against it).
  const emit::Manifest& step_manifest() const { return step_manifest_; }

  struct Result {
    std::vector<double> losses;                 // one per update
    std::vector<std::vector<Tensor>> bn_stats;  // per update: its bn_batch_stat outputs in order
    std::vector<int64_t>
        correct;  // per update: its running-accuracy count (empty: the loss has none)
  };
  // Updates j = 0..n-1 (n = xs.size() <= k()) on full batches xs[j], ys[j] with lrs[j] and
  // 1-based step first_step + j; replaces s.params and s.opt with the state after update n-1.
  Result run(TrainState& s, const std::vector<Tensor>& xs, const std::vector<Tensor>& ys,
             const std::vector<double>& lrs, int64_t first_step);

 private:
  emit::Manifest step_manifest_, manifest_;
  std::unique_ptr<exec::Executable> exe_;
  int k_;
  uint64_t seed_;
};

}  // namespace netspec::train
