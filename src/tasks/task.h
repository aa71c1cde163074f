// A task is what a run learns to do — classification, segmentation, detection, diffusion, text,
// regression — and everything the trainer does differently for it: the label layout it checks
// when the data is loaded, the training set of each epoch (box assignment, text windows), the
// batch transforms (DDPM noising, DETR matching, target = input), its evaluation and metrics (the
// metrics.csv columns, the epoch line, best.json) and the TrainConfig fields it reads. The loop
// (train/trainer.cpp) asks the task and never branches on the kind. One folder per task under
// src/tasks/<task>/; adding one is that folder plus its name in NETSPEC_TASKS (docs/design.md).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "data/datasets.h"
#include "report/metrics_log.h"
#include "spec/param_table.h"
#include "spec/train_config.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/trainer.h"

namespace netspec::train {
class Averages;
}

namespace netspec::tasks {

#define NETSPEC_TASKS(X) \
  X(classification) X(segmentation) X(detection) X(diffusion) X(text) X(regression) X(nerf) X(fold)
enum class TaskKind {
#define NS_TASK_ENUM_(n) n,
  NETSPEC_TASKS(NS_TASK_ENUM_)
#undef NS_TASK_ENUM_
};
std::string_view task_name(TaskKind k);

// The task a run of `net` with `c` performs, decided from the spec alone (eval, predict and
// report have no data yet) by the loss's targets (losses::loss_traits): ddpm -> diffusion;
// detector rows (yoloAnchor, yolov1Masked, detrSet) -> detection; token ids (tokenCE) or a
// dataset of token windows (its descriptor's token_windows) -> text; class maps (perPixel*) ->
// segmentation; plain targets like the output (floatTargetMse) -> regression (target = input);
// ray colours (nerfRenderMse) -> nerf; backbone frames (af2Fold) -> fold;
// otherwise classification.
TaskKind task_kind(const NetSpec& net, const TrainConfig& c);

// The TrainConfig fields only some tasks read (the rest are read by every task). A field of this
// list set (different from its default) for a task that does not read it is refused by name.
struct TaskFields {
  TaskKind task;
  std::vector<std::string> fields;
};
const std::vector<TaskFields>& task_owned_fields();
// Fails `[train] <field> is read by the <task> task only; this run is <task> (...)` for the
// first such field set in c.
void refuse_foreign_fields(TaskKind kind, const TrainConfig& c);

// What a task is handed when training starts.
struct TaskEnv {
  const NetSpec& net;
  const ParamTable& table;
  const TrainConfig& c;
  const data::Splits& data;
  train::RankSplit split;
  const train::Evaluator* evaluator = nullptr;  // attached once compiled (Task::attach)
  std::ostream* log = nullptr;
};

class Task {
 public:
  explicit Task(const TaskEnv& e) : env_(e) {}
  virtual ~Task() = default;
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  virtual TaskKind kind() const = 0;
  const TaskEnv& env() const { return env_; }
  // The eval module's runner, compiled after the task's checks passed.
  void attach(const train::Evaluator& ev) { env_.evaluator = &ev; }

  // The per-sample input shape a dataset sample of shape `sample` feeds the net (diffusion adds
  // the t/T channel).
  virtual Shape input_sample(Shape sample) const { return sample; }
  // Checks the data's label layout against the net and the loss, naming the field to change;
  // and the TrainConfig fields this task cannot honour. Called before anything is trained.
  virtual void check(const data::Dataset& train_src) const = 0;
  // The training set prior-bias init reads (detection: the assigned targets of a fixed draw).
  virtual data::Dataset prior_data(const data::Dataset& train_src) const { return train_src; }
  // Files this task keeps in a run dir (vocab.json, classes.json), written at the start.
  virtual void save_run_files(const std::string& /*dir*/) const {}
  // A line printed when training starts ("" for none), and the weight averages' hooks.
  virtual std::string start_line() { return ""; }
  virtual void configure_averages(train::Averages& /*a*/) const {}
  // True when the training set is redrawn every epoch by epoch_data (no repeated augmentation
  // over it); the set of epoch `epoch` (0-based) from the base set.
  virtual bool redraws_epochs() const { return false; }
  virtual data::Dataset epoch_data(int /*epoch*/, const data::Dataset& base) const { return base; }
  // Whether the loader's augment (crop/flip) applies to this task's images.
  virtual bool loader_augments() const { return true; }
  // A loaded micro-batch (`micro`-th of update `step`, 0-based) made into the train step's input
  // and labels (DDPM noising; regression: labels = input).
  virtual void micro_batch(int64_t /*step*/, int64_t /*micro*/, Tensor& /*x*/,
                           Tensor& /*y*/) const {}
  // Labels computed from the current parameters just before an update (DETR matching); `sync`
  // brings s.params up to date first.
  virtual bool labels_need_params() const { return false; }
  virtual void update_labels(const train::TrainState& /*s*/, const std::vector<Tensor>& /*xs*/,
                             std::vector<Tensor>& /*ys*/) const {}

  // Sets what every epoch's metrics carry before any evaluation (detection: empty AP columns).
  virtual void init_metrics(train::EpochMetrics& /*m*/) const {}
  // Evaluates s on the test split into m.val (and m.map for detection); `stop` may end it early.
  virtual void evaluate(const train::TrainState& s, const std::function<bool()>& stop,
                        train::EpochMetrics& m) const;
  // Every row has the same columns (metrics.csv takes its header from the first), empty when
  // not evaluated: the task's scores after the common ones (text: val_bpc), and its breakdowns
  // after the weight averages' columns (detection: mAP and AP per class; segmentation: mIoU,
  // Dice, IoU per class). The order is kept so that a resumed run's rows fit its header.
  virtual void metric_columns(const train::EpochMetrics& /*m*/, report::Row& /*r*/) const {}
  virtual void breakdown_columns(const train::EpochMetrics& /*m*/, report::Row& /*r*/) const {}
  // The progress bar's running metric after the loss: "acc 87.50%" from the train step's counts
  // (correct of counted labels; correct < 0: the loss counts none, ""), segmentation "pixel acc",
  // text "bpc" of the running loss. `loss`: the epoch's running mean train loss.
  virtual std::string running_text(double loss, int64_t correct, int64_t counted) const;
  // The evaluation part of the epoch line, after "train loss X".
  virtual std::string eval_text(const train::EpochMetrics& m) const;
  // Samples per second in the epoch line, or tokens for text ("1234 tokens/s").
  virtual std::string rate_text(double samples_per_s) const;
  // The run's closing line from its last evaluation on `split` ("test", "validation").
  virtual std::string final_text(const train::EpochMetrics& m, const std::string& split) const;
  // best.json's fields beyond epoch and step.
  virtual void best_fields(const train::EpochMetrics& m, nlohmann::ordered_json& b) const;
  // Whether val_loss and val_top1 are meaningful columns (detection: neither; diffusion and
  // regression: no top-1). The columns stay, empty, so every run's header is the same.
  virtual bool has_val_loss() const { return true; }
  virtual bool has_top1() const { return true; }
  // Text: bits per character of a unigram model on the validation split (TrainResult).
  virtual double unigram_bpc() const { return 0; }

 protected:
  const train::Evaluator& evaluator() const { return *env_.evaluator; }
  TaskEnv env_;
};

// The task of kind `k` for a training run (refuses its foreign fields).
std::unique_ptr<Task> make_task(TaskKind k, const TaskEnv& e);

// One factory per task (src/tasks/<task>/<task>_task.cpp).
#define NS_TASK_FACTORY_(n) std::unique_ptr<Task> make_##n##_task(const TaskEnv& e);
NETSPEC_TASKS(NS_TASK_FACTORY_)
#undef NS_TASK_FACTORY_

}  // namespace netspec::tasks
