// One optimizer update of the training loop. gradAccumSteps == 1: the fused train_step module
// (forward, loss, backward, update in one call). gradAccumSteps = k > 1: k micro-steps, each the
// forward module (logits + BN batch stats), the loss gradient w.r.t. the logits from the
// loss-gradient module (emit/loss_grad.h, any loss, dz weighted n_k/N) and the vjp module; the k
// gradients are summed and one optimizer module call applies them, so the update sees the mean
// gradient over k·B samples. BN running stats take every micro-batch, each with the momentum
// compensated to 1-(1-m)^(1/k) (compensateBNMomentum; off: m each, as PyTorch does).
// Accumulation with R replicas: each micro-batch of B rows is cut into R shards run through
// per-shard modules, all gradients summed (across processes by one all_reduce) before the update.
// dropPath / dropout: the train step's "mask" inputs are drawn here per step from (seed, step)
// (draw_keep_mask), so a run is reproducible bit for bit; under accumulation the forward / vjp
// modules take them too (EmitOptions::masked_forward), drawn per micro-batch k from (seed, step,
// k) at the micro-batch's rows and cut into the replicas' shards.
// Tail batch (PyTorch's drop_last=False): a micro-batch of n < batchSize rows runs on modules
// emitted at batch n, compiled on first use and kept; their manifests must equal the full-batch
// ones except for the batch dimension (checked), so params / optimizer state / BN stats carry over.
// State on the backend: the fused full-batch step runs in an exec::Session whose state is the
// parameters and optimizer state (device buffers on xla), so s.params / s.opt go stale after a
// step until sync(s) copies them back (before evaluation and checkpoints). A tail batch syncs,
// runs on the host-fed tail module and sets the session's state again.
// steps_per_call K > 1 (engines with costly calls: IREE's tools): full batches run K updates per
// call through a MultiStepper (multi_stepper.h), the state on the host; a tail batch runs on the
// one-step module at its size. Not with gradAccumSteps > 1 or data parallel (refused by name).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "emit/manifest.h"
#include "exec/backend.h"
#include "spec/layer.h"
#include "spec/param_table.h"
#include "spec/train_config.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"

namespace netspec::train {

class Stepper {
 public:
  // table: build_param_table(net) when the caller has it (nullptr: built here, once).
  // dp.replicas > 1: the fused train step runs data parallel on shards of each batch
  // (data_parallel.h); a batch must then divide by the replicas.
  Stepper(const NetSpec& net, const TrainConfig& c, exec::Backend& backend,
          const ParamTable* table = nullptr, const DataParallel& dp = {}, int steps_per_call = 1);
  ~Stepper();
  int accum() const { return accum_; }
  // Updates one backend call can run (steps()); 1 unless steps_per_call > 1 was asked for.
  int steps_per_call() const;
  int64_t batch() const { return batch_; }
  // The manifest whose optimizer_state inputs define the state layout (for make_state).
  const emit::Manifest& state_manifest() const;
  // One update from 1..accum() micro-batches x_j [n_j, ...], y_j [n_j, ...] with n_j <= batch()
  // (fewer or smaller ones only at the end of an epoch): updates s.params, s.opt and the BN
  // running stats; returns the loss, the mean over all Σ n_j samples (the gradient is the mean
  // over them too). `step` is 1-based.
  double step(TrainState& s, const std::vector<Tensor>& xs, const std::vector<Tensor>& ys,
              double lr, int64_t step);
  // steps_per_call() > 1: n = xs.size() (1..steps_per_call()) updates of one full batch each in
  // one call, update j with xs[j], ys[j], lrs[j] and 1-based step first_step + j; the same
  // updates (and BN running stats, in order) as n step() calls. Returns each update's loss.
  std::vector<double> steps(TrainState& s, const std::vector<Tensor>& xs,
                            const std::vector<Tensor>& ys, const std::vector<double>& lrs,
                            int64_t first_step);
  // Update j's running-accuracy count of the last step() (j = 0) or steps() call
  // (losses::correct_count): Σ [argmax z = y] over its samples (per-pixel losses: pixels) and how
  // many labels it covered; correct < 0 when the loss counts none. Fused: the train step's
  // "correct" output; accumulation: counted on the host from the forward module's logits (before
  // the update, as the fused step does).
  int64_t last_correct(size_t j = 0) const { return j < correct_.size() ? correct_[j] : -1; }
  int64_t last_counted(size_t j = 0) const { return j < counted_.size() ? counted_[j] : 0; }
  // Copies the parameters and optimizer state the session holds into s (a no-op when s is
  // current). Call before reading s.params / s.opt.
  void sync(TrainState& s);
  // Batch sizes that have modules compiled (batch() always; a tail size once it was used).
  std::vector<int64_t> compiled_batches() const;

 private:
  struct Module;
  struct Modules;  // fused train_step, or forward + vjp, at one batch size
  const Modules& modules(int64_t n);

  NetSpec net_;
  ParamTable table_;
  TrainConfig config_;
  exec::Backend& backend_;
  DataParallel dp_;
  int accum_;
  int64_t batch_;
  uint64_t seed_;
  double bn_momentum_;
  std::map<int64_t, std::unique_ptr<Modules>> by_batch_;
  std::unique_ptr<Module> optimizer_;
  std::unique_ptr<class MultiStepper> multi_;  // steps_per_call > 1
  // The full-batch fused step's session: feedback_[k] is state k, taken from s.params (kind 'p')
  // or s.opt ('o') at index state_src_[k].second. stale_: s lags the session.
  std::unique_ptr<exec::Session> session_;
  std::vector<exec::Feedback> feedback_;
  std::vector<std::pair<char, size_t>> state_src_;
  const TrainState* bound_ = nullptr;
  bool stale_ = false;
  std::vector<int64_t> correct_, counted_;  // per update of the last call (last_correct)
  void bind(TrainState& s, const Module& fm);
  // running = (1-m)·running + m·batch (m: bnMomentum, or its per-micro-batch compensation).
  void update_running(TrainState& s, size_t& bi, const emit::TensorInfo& ti, const Tensor& batch,
                      double m);
  double accumulate(TrainState& s, const std::vector<Tensor>& xs, const std::vector<Tensor>& ys,
                    const Tensor& lr_t, const Tensor& step_t, int64_t step);
};

// Checks that `tail` (a module emitted at batch n) has the layout of `full` (the same module at
// batch B): the same inputs and outputs in order with equal name, role, dtype and mask rate, and
// equal shapes except dim 0 of the batch-carrying ones (input, label, mask, output, cotangent,
// d.x), which must be B and n. Throws naming the first difference.
void check_tail_manifest(const emit::Manifest& full, const emit::Manifest& tail, int64_t b,
                         int64_t n);

// The keep mask for train-step input `ti` (role "mask", drop rate ti.rate = p), the `index`-th
// mask input of update `step`: each element is Bernoulli(1 - p) / (1 - p), i.e. 0 or 1/(1-p),
// from a counter-based hash of (seed, step, index, element): deterministic, order-free.
// micro > 0: micro-batch `micro` of an accumulated update (mixed into the hash; micro 0 draws
// the fused step's masks).
Tensor draw_keep_mask(const emit::TensorInfo& ti, uint64_t seed, int64_t step, size_t index,
                      int64_t micro = 0);

// Host classCE of logits [B, C] against labels [B] with label smoothing eps: returns the mean
// loss and writes dz = (softmax(z) - q) · scale into `grad` (shaped like logits).
// Σ [argmax over dim 1 of logits = label] (first of equal maxima) for logits [B, C, ...] and
// labels i32 [B, ...] (the logits without dim 1).
int64_t count_correct(const Tensor& logits, const Tensor& labels);

double class_ce_and_grad(const Tensor& logits, const Tensor& labels, double eps, double scale,
                         Tensor& grad);

}  // namespace netspec::train
