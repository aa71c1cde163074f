// The checkpoint policy of a run, as Keras/Lightning ModelCheckpoint + EarlyStopping +
// ReduceLROnPlateau and timm's checkpoint saver define them, on one monitored metric (a column of
// metrics.csv, or the task's score val_score that `best` follows by default):
// - best.safetensors follows the monitor when `monitor` is set (strict improvement);
// - saveTopK K keeps the K best epochs as RUN/checkpoints/epoch=007-val_loss=0.4321.safetensors,
//   the worst deleted (ties keep the earlier epoch); keepSnapshots keeps every
//   checkpointEveryNEpochs save of `last` as RUN/checkpoints/epoch=007.safetensors;
// - earlyStopPatience P (Keras EarlyStopping): an evaluation improves when it beats the best by
//   more than earlyStopMinDelta; after P evaluations in a row that do not, the run ends;
// - schedule plateau (PyTorch ReduceLROnPlateau, mode abs): better = beats the best by more
//   than plateauThreshold; after more than plateauPatience bad evaluations the lr becomes
//   max(lr·plateauFactor, plateauMinLr) (only if lower) and plateauCooldown evaluations follow in
//   which bad ones are not counted. The lr caps the schedule's (warmup still ramps up to it).
// An "evaluation" is an epoch whose row has the monitored value (every epoch for train_loss).
// The state rides in `last`'s metadata (TrainState::policy), so a resume continues it exactly.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/train_config.h"
#include "train/hooks.h"

namespace netspec::train {

// The monitored metric: its column and whether lower is better.
struct Monitor {
  std::string name;  // "val_score" when c.monitor is empty
  bool minimize = false;
};
Monitor resolve_monitor(const TrainConfig& c);
// The names a monitor may take for this task: train_loss, val_score and its val_* columns.
std::vector<std::string> monitor_choices(const tasks::Task& task);
// Fails (exit 2) naming the field when c.monitor is not one of monitor_choices(task).
void check_monitor(const TrainConfig& c, const tasks::Task& task);

// The policy's state after an epoch; JSON in the checkpoint (doubles round-trip exactly).
struct PolicyState {
  struct Kept {
    int epoch = 0;
    double value = 0;
    bool operator==(const Kept&) const = default;
  };
  std::vector<Kept> top_k;          // best first
  std::optional<double> best;       // best.safetensors' value (monitor set)
  std::optional<double> stop_best;  // early stop's reference
  int stop_best_epoch = 0, stop_wait = 0, stopped_epoch = 0;
  std::optional<double> plateau_best;
  int plateau_bad = 0, plateau_cooldown = 0, reductions = 0;
  double plateau_lr = 0;  // the lr cap (set from learningRate at the start)
  bool operator==(const PolicyState&) const = default;

  std::string to_json() const;
  // `where` names the checkpoint in errors.
  static PolicyState from_json(const std::string& text, const std::string& where);
};

// What one epoch's value changes.
struct PolicyStep {
  bool best = false;                      // a new best.safetensors (monitor set)
  std::optional<PolicyState::Kept> keep;  // saved among the top K
  std::vector<PolicyState::Kept> drop;    // pushed out of the top K
  bool lr_reduced = false;
  std::string stop;  // why the run ends ("" to go on)
};

class CheckpointPolicy {
 public:
  explicit CheckpointPolicy(const TrainConfig& c);
  // Restores the state saved in `last` ("" for a new run).
  void restore(const std::string& saved, const std::string& where);
  // Epoch `epoch` ended with `value` of the monitor (nullopt: not evaluated): updates the state.
  PolicyStep update(int epoch, std::optional<double> value);
  // Whether the state is worth saving (any policy field moved off its default).
  bool active() const { return active_; }
  const Monitor& monitor() const { return mon_; }
  const PolicyState& state() const { return st_; }
  // The lr of the next update given the schedule's.
  double cap_lr(double lr) const;
  // RUN/checkpoints file names.
  std::string top_k_file(const PolicyState::Kept& k) const;
  static std::string snapshot_file(int epoch);

 private:
  bool better(double a, double b, double margin) const;
  const TrainConfig& c_;
  Monitor mon_;
  bool active_ = false;
  PolicyState st_;
};

// The hook (after evaluation, before the averages and the run dir): `best` by the monitor, top-k
// and snapshot files, the plateau lr, the early stop (ctx.stop_reason), the state into ctx.s.
std::unique_ptr<Hook> make_checkpoint_policy_hook(CheckpointPolicy& policy);

}  // namespace netspec::train
