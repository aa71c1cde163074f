// One optimizer update of the training loop. gradAccumSteps == 1: the fused train_step module
// (forward, loss, backward, update in one call). gradAccumSteps = k > 1: k micro-steps, each the
// forward module (logits + BN batch stats), the classCE gradient w.r.t. the logits on the host
// (dz = (softmax(z) - q) / (B·k), q the label-smoothed target) and the vjp module (dP); the k
// gradients are summed and one optimizer module call applies them, so the update sees the mean
// gradient over k·B samples. BN running stats take every micro-batch (as PyTorch does).
// dropPath / dropout: the train step's "mask" inputs are drawn here per step from (seed, step)
// (draw_keep_mask), so a run is reproducible bit for bit; fused train step only.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/tensor.h"
#include "emit/manifest.h"
#include "exec/backend.h"
#include "spec/layer.h"
#include "spec/train_config.h"
#include "train/checkpoint.h"

namespace netspec::train {

class Stepper {
 public:
  Stepper(const NetSpec& net, const TrainConfig& c, exec::Backend& backend);
  ~Stepper();
  int accum() const { return accum_; }
  // The manifest whose optimizer_state inputs define the state layout (for make_state).
  const emit::Manifest& state_manifest() const;
  // One update from accum() micro-batches (x [B, ...], y [B]): updates s.params, s.opt and the
  // BN running stats; returns the loss (mean over the micro-batches). `step` is 1-based.
  double step(TrainState& s, const std::vector<Tensor>& xs, const std::vector<Tensor>& ys,
              double lr, int64_t step);

 private:
  struct Module;
  int accum_;
  uint64_t seed_;
  double bn_momentum_, smoothing_;
  std::unique_ptr<Module> fused_, forward_, vjp_, optimizer_;
  void update_running(TrainState& s, size_t& bi, const emit::TensorInfo& ti, const Tensor& batch);
};

// The keep mask for train-step input `ti` (role "mask", drop rate ti.rate = p), the `index`-th
// mask input of update `step`: each element is Bernoulli(1 - p) / (1 - p), i.e. 0 or 1/(1-p),
// from a counter-based hash of (seed, step, index, element): deterministic, order-free.
Tensor draw_keep_mask(const emit::TensorInfo& ti, uint64_t seed, int64_t step, size_t index);

// Host classCE of logits [B, C] against labels [B] with label smoothing eps: returns the mean
// loss and writes dz = (softmax(z) - q) · scale into `grad` (shaped like logits).
double class_ce_and_grad(const Tensor& logits, const Tensor& labels, double eps, double scale,
                         Tensor& grad);

}  // namespace netspec::train
