// The training loop's hooks (as detectron2's HookBase, Keras and Lightning callbacks): the loop
// (loop.cpp) runs epochs and updates only; everything around them is a hook called in list order
// at fixed points: progress and logging, the divergence guard, the evaluation cadence and the
// best score, the weight averages (EMA / SWA / SWAG), test-time augmentation, and the run dir
// (metrics and steps logs, plots, `best` and `last`). A kill at any point leaves a run dir that
// resumes: per epoch the rows are written, then `best`, then `last`.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "data/loader.h"
#include "tasks/task.h"
#include "train/averaging.h"
#include "train/checkpoint.h"
#include "train/stepper.h"
#include "train/trainer.h"

namespace netspec::train {

// What the loop and its hooks share for one run_training call.
struct LoopContext {
  const TrainConfig& c;
  const NetSpec& net;  // the evaluated net (the train step may run at trainRes)
  const ParamTable& table;
  const TrainOptions& o;
  tasks::Task& task;
  Stepper& stepper;
  const Evaluator& evaluator;
  TrainState& s;
  int64_t steps_per_epoch = 0;              // updates per epoch
  int epoch = 0;                            // the current epoch (1-based)
  int64_t first_update = 0;                 // the epoch's first update (> 0 when resumed mid-epoch)
  const data::Dataset* train_ds = nullptr;  // this epoch's training set
  const data::Augment* aug = nullptr;       // the loader's augmentation
  std::string last;                         // RUN/last.safetensors ("" without a run dir)
  std::string stop_reason;                  // a hook's early stop: the loop saves and ends
  bool stop_requested() const;              // SIGINT/SIGTERM on any rank
};

// One update as the hooks see it.
struct StepEnd {
  int64_t update = 0;  // 0-based index within the epoch
  double loss = 0, lr = 0, seconds = 0;
  int64_t samples = 0;      // in this update
  double epoch_loss = 0;    // the epoch's running mean loss
  int64_t run_samples = 0;  // trained by this call in this epoch
  // Running accuracy (Stepper::last_correct): Σ correct / Σ labels counted over this call's
  // updates of the epoch (a mid-epoch resume counts from the resume point); correct < 0: none.
  int64_t correct = -1, counted = 0;
};

class Hook {
 public:
  virtual ~Hook() = default;
  virtual void before_epoch(LoopContext& /*ctx*/) {}
  // The learning rate of the next update (SWA's constant rate).
  virtual double adjust_lr(const LoopContext& /*ctx*/, double lr) const { return lr; }
  virtual void after_step(LoopContext& /*ctx*/, const StepEnd& /*e*/) {}
  // Epoch end, first pass: fill the epoch's metrics (evaluation, averages, TTA); `suffix` is
  // appended to the epoch line.
  virtual void epoch_metrics(LoopContext& /*ctx*/, EpochMetrics& /*m*/, std::string& /*suffix*/) {}
  // Epoch end, second pass, after the epoch line: check and persist.
  virtual void after_epoch(LoopContext& /*ctx*/, const EpochMetrics& /*m*/) {}
  // A stop request: mid-epoch (s holds the updates done) or after an epoch.
  virtual void on_stop(LoopContext& /*ctx*/) {}
  // checkpointEverySteps: a mid-epoch save of `last` (s holds the updates done); the run goes on.
  virtual void on_checkpoint(LoopContext& /*ctx*/) {}
};

// The hooks of a run, in call order.
std::unique_ptr<Hook> make_progress_hook();
std::unique_ptr<Hook> make_divergence_hook();
// best_score: the score best.json holds (-inf without one); kept current.
std::unique_ptr<Hook> make_evaluation_hook(double best_score);
std::unique_ptr<Hook> make_averages_hook(Averages& averages);
std::unique_ptr<Hook> make_tta_hook();
// Rows past s.epoch / s.step are dropped from the logs when it is made (a resume's rows).
std::unique_ptr<Hook> make_run_dir_hook(const LoopContext& ctx, Averages& averages);
// RUN/events.out.tfevents.* (tensorboard_hook.cpp); nullptr without a run dir. Steps past
// s.step are dropped from the earlier event files when it is made.
std::unique_ptr<Hook> make_tensorboard_hook(const LoopContext& ctx);

// The training set of epoch `epoch` (0-based) from `base`: the task's redraw (detection targets,
// text windows), else repeated augmentation's rows, else base itself.
data::Dataset epoch_set(const LoopContext& ctx, const data::Dataset& base, int epoch);
// The epoch/update loop: trains from ctx.s's position to c.epochs, calling the hooks; fills res
// (epochs, interrupted). first: epoch_set of the first epoch to run (already drawn).
void run_loop(LoopContext& ctx, const std::vector<std::unique_ptr<Hook>>& hooks,
              const data::Dataset& base, data::Dataset first, const class BatchAugment& batch_aug,
              TrainResult& res);

// "epoch 3/10  train loss 0.4321<task's eval text>  (12.3 s, 45.67 ms/step, 1234 samples/s, lr
// 0.001)  best" (no newline).
std::string epoch_line(const EpochMetrics& m, int epochs, const tasks::Task& task);
// steps.csv's row of update `step` (1-based count), at fractional `epoch`.
report::Row step_row(int64_t step, double epoch, const StepEnd& e);
// metrics.csv's row of an epoch.
report::Row metrics_row(const EpochMetrics& m, const tasks::Task& task);
// The score best.json holds in dir (-inf when absent or unreadable).
double read_best_score(const std::string& dir);

}  // namespace netspec::train
