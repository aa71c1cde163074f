// Task selection, the fields each task owns, and the defaults the classifier-like tasks share
// (see task.h).
#include "tasks/task.h"

#include <fmt/format.h>

#include <array>
#include <type_traits>

#include "core/error.h"
#include "data/dataset_registry.h"
#include "losses/loss.h"
#include "train/trainer.h"

namespace netspec::tasks {

std::string_view task_name(TaskKind k) {
  static constexpr std::array kNames = {
#define NS_TASK_NAME_(n) std::string_view(#n),
      NETSPEC_TASKS(NS_TASK_NAME_)
#undef NS_TASK_NAME_
  };
  return kNames.at(static_cast<size_t>(k));
}

namespace {
bool token_data(const TrainConfig& c) {  // the dataset's samples are token windows (text)
  const data::DatasetDescriptor* d = data::find_dataset_descriptor(c.dataset);
  return d && d->token_windows;
}
}  // namespace

TaskKind task_kind(const NetSpec& /*net*/, const TrainConfig& c) {
  if (c.ddpm) return TaskKind::diffusion;
  if (!losses::is_lowered(c.lossKind))
    return token_data(c) ? TaskKind::text : TaskKind::classification;
  switch (losses::loss_traits(c.lossKind).target) {
    case losses::TargetKind::detectorRows:
      return TaskKind::detection;
    case losses::TargetKind::tokenIds:
      return TaskKind::text;
    case losses::TargetKind::perPixelClass:
      return TaskKind::segmentation;
    case losses::TargetKind::rayColors:
      return TaskKind::nerf;
    case losses::TargetKind::backboneFrames:
      return TaskKind::fold;
    case losses::TargetKind::likeOutput:
      if (!losses::loss_traits(c.lossKind).soft) return TaskKind::regression;
      break;
    case losses::TargetKind::classIndex:
      break;
  }
  return token_data(c) ? TaskKind::text : TaskKind::classification;
}

const std::vector<TaskFields>& task_owned_fields() {
  static const std::vector<TaskFields> kOwned = {
      {TaskKind::detection,
       {"detPriorPi", "useDiouBox", "anchors", "fpnScales", "fpnAffineScale", "fpnAffineTranslate",
        "fpnAffineProb", "fpnAffineWhThrPx", "fpnAffineAreaThr", "yoloClsWeights",
        "yoloClsFocalGamma", "yoloObjFocalGamma"}},
      {TaskKind::diffusion, {"ddpmSteps", "betaStart", "betaEnd", "betaSchedule"}},
      {TaskKind::nerf, {"nerfSamples", "nerfNear", "nerfFar", "nerfBackground"}},
  };
  return kOwned;
}

namespace {

// Names of the fields of c that differ from their defaults, in declaration order.
std::vector<std::string> fields_set(const TrainConfig& c) {
  const TrainConfig d;
  std::vector<const void*> defaults;
  d.visit([&](const char*, const auto& v, const char*) { defaults.push_back(&v); });
  std::vector<std::string> out;
  size_t i = 0;
  c.visit([&](const char* name, const auto& v, const char*) {
    using T = std::decay_t<decltype(v)>;
    if (!(v == *static_cast<const T*>(defaults[i++]))) out.emplace_back(name);
  });
  return out;
}

}  // namespace

void refuse_foreign_fields(TaskKind kind, const TrainConfig& c) {
  const std::vector<std::string> set = fields_set(c);
  for (const TaskFields& owned : task_owned_fields()) {
    if (owned.task == kind) continue;
    for (const std::string& f : owned.fields)
      if (std::find(set.begin(), set.end(), f) != set.end())
        fail("train",
             "{} is read by the {} task only; this run is {} (lossKind {}{}): remove the field", f,
             task_name(owned.task), task_name(kind), enum_name(c.lossKind), c.ddpm ? ", ddpm" : "");
  }
}

std::unique_ptr<Task> make_task(TaskKind k, const TaskEnv& e) {
  refuse_foreign_fields(k, e.c);
  // Data whose kind decides the task (boxes, a corpus) must meet its task.
  if (e.data.det && k != TaskKind::detection)
    fail("train",
         "dataset {} holds boxes (detection) but lossKind {} makes this run {}: set lossKind "
         "yoloAnchor, yolov1Masked or detrSet with a detector head",
         enum_name(e.c.dataset), enum_name(e.c.lossKind), task_name(k));
  if (e.data.views && k != TaskKind::nerf)
    fail("train",
         "dataset radiance-field holds camera rays with colours (nerf) but lossKind {} makes this "
         "run {}: set lossKind nerfRenderMse with a positionalEncoding + nerfMLP net",
         enum_name(e.c.lossKind), task_name(k));
  if (e.data.text && k != TaskKind::text)
    fail("train", "dataset text is a corpus for token models but lossKind {} makes this run {}",
         enum_name(e.c.lossKind), task_name(k));
  switch (k) {
#define NS_TASK_CASE_(n) \
  case TaskKind::n:      \
    return make_##n##_task(e);
    NETSPEC_TASKS(NS_TASK_CASE_)
#undef NS_TASK_CASE_
  }
  fail("train", "unknown task {}", static_cast<int>(k));
}

void Task::evaluate(const train::TrainState& s, const std::function<bool()>& stop,
                    train::EpochMetrics& m) const {
  m.val =
      evaluator().run(s.params, s.running, env_.data.test, stop, env_.split.group, env_.split.rank);
}

std::string Task::running_text(double, int64_t correct, int64_t counted) const {
  if (correct < 0 || counted <= 0) return "";
  return fmt::format("acc {:.2f}%",
                     100.0 * static_cast<double>(correct) / static_cast<double>(counted));
}

std::string Task::eval_text(const train::EpochMetrics& m) const {
  std::string s = fmt::format("  val loss {:.4f}  top-1 {:.2f}%", m.val.loss, 100 * m.val.top1);
  if (m.val.has_top5) s += fmt::format("  top-5 {:.2f}%", 100 * m.val.top5);
  return s;
}

std::string Task::rate_text(double samples_per_s) const {
  return fmt::format("{:.0f} samples/s", samples_per_s);
}

std::string Task::final_text(const train::EpochMetrics& m, const std::string& split) const {
  std::string s = fmt::format("{} accuracy {:.2f}%", split, 100 * m.val.top1);
  if (m.val.has_top5) s += fmt::format(" (top-5 {:.2f}%)", 100 * m.val.top5);
  return s + fmt::format(" on {} samples", m.val.count);
}

void Task::best_fields(const train::EpochMetrics& m, nlohmann::ordered_json& b) const {
  b["val_loss"] = m.val.loss;
  b["val_top1"] = m.val.top1;
  if (m.val.has_top5) b["val_top5"] = m.val.top5;
  b["val_count"] = m.val.count;
  b["val_score"] = m.val.score();  // what "best" compares (resume reads it)
}

}  // namespace netspec::tasks
