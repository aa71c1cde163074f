// Weight averages of a run (TrainConfig useEMA, useSWA, useSWAG): the math on host tensors and
// the trainer's hook (Averages) that updates them, evaluates each in the epoch line and writes
// RUN_DIR/ema.safetensors, swa.safetensors (SWAG's mean + its diagonal and deviations in
// swag.safetensors).
//   EMA (timm ModelEmaV2 over params and BN running stats, per update, with ModelEmaV3's
//   warmup): avg = d·avg + (1-d)·x, d = min(emaDecay, 1 - (1 + t)^(-2/3)), t = update - 1
//   (d = 0 at the first update: a copy).
//   SWA (torch.optim.swa_utils.AveragedModel, equal weights): once per epoch from swaStartEpoch
//   (0-based), avg += (x - avg)/(n + 1); its BN statistics are then recomputed as update_bn does:
//   running mean / var = the equal-weight average over the training batches (full ones) of each
//   batch's mean / unbiased variance, forward in train mode with the SWA weights.
//   SWAG (Maddox et al. 2019): besides the SWA mean θ̄, the running mean of θ² and the last
//   swagK deviations D = [θ_i - θ̄_i]; a sample is θ̄ + √(diag/2)·z1 + D·z2/√(2(K-1)) with
//   diag = max(mean θ² - θ̄², 0), z ~ N(0, I); evaluation averages the logits of swagSamples
//   samples (each with its BN statistics recomputed).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "core/tensor.h"
#include "data/dataset.h"
#include "exec/backend.h"
#include "spec/param_table.h"
#include "spec/train_config.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"

namespace netspec::train {

double ema_decay(double decay, int64_t update);
// avg = d·avg + (1-d)·x element-wise (f32 tensors, computed in f64).
void ema_update(std::vector<Tensor>& avg, const std::vector<Tensor>& x, double d);
// Equal-weight running mean over n + 1 values: avg += (x - avg)/(n + 1); n = 0 copies x.
void swa_update(std::vector<Tensor>& avg, const std::vector<Tensor>& x, int64_t n);

class Swag {
 public:
  explicit Swag(int k) : k_(k) {}
  // Adds θ (the n-th model): mean, mean of squares and the deviation θ - mean (after the update).
  void collect(const std::vector<Tensor>& params);
  int64_t count() const { return n_; }
  int64_t deviations() const { return static_cast<int64_t>(dev_.size()); }
  const std::vector<Tensor>& mean() const { return mean_; }
  // A sample of N(θ̄, Σ_diag/2 + D·Dᵀ/(2(K-1))), deterministic per seed; K = deviations kept.
  std::vector<Tensor> sample(uint64_t seed) const;
  // Tensors to save: "mean.<p>", "sq_mean.<p>", "dev<j>.<p>".
  std::vector<std::pair<std::string, Tensor>> tensors(const ParamTable& t) const;
  // Restores what tensors() wrote under `prefix` (n models collected, `devs` deviations kept).
  void restore(const SafeTensors& st, const std::string& prefix, const ParamTable& t, int64_t n,
               int64_t devs);

 private:
  int k_;
  int64_t n_ = 0;
  std::vector<Tensor> mean_, sq_;
  std::vector<std::vector<Tensor>> dev_;  // oldest first, at most k_
};

// BN running statistics for `params`, recomputed over `ds` as update_bn does (see above); the
// training loader's full batches in order. Empty when the net has no BN.
class BnRecompute {
 public:
  BnRecompute(const NetSpec& net, const ParamTable& t, int64_t batch, exec::Backend& be);
  std::vector<Tensor> run(const std::vector<Tensor>& params, const std::vector<Tensor>& running,
                          const data::Dataset& ds) const;
  // Turns batch b of the dataset into the net's input as training does (DDPM: noised image + t
  // plane, fixed draws per b); unset, the dataset's x is the input.
  std::function<void(int64_t b, Tensor& x)> prepare;

 private:
  int64_t batch_;
  emit::Manifest manifest_;
  std::unique_ptr<exec::Executable> exe_;
};

// The trainer's hook.
class Averages {
 public:
  Averages(const NetSpec& net, const TrainConfig& c, exec::Backend& be, const ParamTable& t,
           const Evaluator& ev);
  ~Averages();
  bool any() const { return ema_ || swa_; }
  bool per_step() const { return ema_; }
  // Scores each average by f instead of top-1 (DDPM: column "noise_mse", printed "ema noise
  // mse 0.0412", metrics.csv column ema_noise_mse).
  void set_evaluate(std::string column, std::function<double(const TrainState&)> f);
  // The SWA BN recompute's input from batch b of the training set (BnRecompute::prepare).
  void set_bn_input(std::function<void(int64_t b, Tensor& x)> f);
  // Processes of a group: each evaluates its share of the test batches (evaluate.h RankSplit).
  void set_split(const RankSplit& split) { split_ = split; }
  // After update s.step (s current: synced).
  void after_step(const TrainState& s);
  // End of epoch `epoch` (1-based, s synced): SWA/SWAG collect; when `evaluate`, each average is
  // evaluated on `test` and its checkpoint written in run_dir (if not empty). Returns the epoch
  // line's suffix, e.g. "  ema top-1 85.10%  swa top-1 85.32%".
  std::string end_epoch(int epoch, const TrainState& s, const data::Dataset& train,
                        const data::Dataset& test, bool evaluate, const std::string& run_dir,
                        const std::string& net_name);
  // metrics.csv columns, one per average the config enables ("ema_top1", "swa_top1",
  // "swag_top1"; with set_evaluate, "ema_<column>", "swa_<column>"): the score of the last
  // end_epoch, empty when it evaluated none.
  std::vector<std::pair<std::string, std::optional<double>>> top1_columns() const;

  // RUN_DIR/averages.safetensors: the running averages with the step they belong to, written
  // just before `last` (averaging_state.cpp), so that a resumed run continues them.
  void save_state(const std::string& path, const TrainState& s, const std::string& net) const;
  // Restores them when `path` holds step s.step (s: the resumed state); otherwise they restart
  // from s, and the returned line says why (empty when restored).
  std::string load_state(const std::string& path, const TrainState& s);

 private:
  const ParamTable& table_;
  const Evaluator& ev_;
  TrainConfig c_;
  bool ema_, swa_;
  TrainState ema_state_, swa_state_;
  int64_t swa_n_ = 0;
  std::unique_ptr<Swag> swag_;
  std::unique_ptr<BnRecompute> bn_;
  std::function<double(const TrainState&)> evaluate_;
  std::string score_column_;  // set_evaluate's column name
  RankSplit split_;
  std::optional<double> ema_top1_, swa_top1_, swag_top1_;  // scores of the last end_epoch
};

}  // namespace netspec::train
