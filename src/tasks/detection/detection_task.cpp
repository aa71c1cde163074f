// Detection (YOLO anchor rows, the YOLOv1 grid, DETR's set loss) on a dataset with boxes
// (petsDet, voc, coco): the loss targets are assigned per epoch after box-aware augmentation
// (flips, fpnAffine*; det_train.h), DETR's targets are matched to the current predictions
// before each update, and evaluation reports VOC mAP@0.5 (what best is chosen by) and COCO
// mAP@[.5:.95], overall and per class; classes.json is kept in the run dir.
#include <filesystem>

#include "core/error.h"
#include "core/file_check.h"
#include "tasks/detection/det_train.h"
#include "tasks/task.h"

namespace netspec::tasks {
namespace {

class Detection final : public Task {
 public:
  explicit Detection(const TaskEnv& e)
      : Task(e), targets_(train::det_targets(e.net, e.table, e.c)) {}
  TaskKind kind() const override { return TaskKind::detection; }

  void check(const data::Dataset& /*train_src*/) const override {
    const TrainConfig& c = env_.c;
    if (!env_.data.det)
      fail("train",
           "lossKind {} (detection) needs a dataset with boxes (petsDet, voc, coco; got {})",
           enum_name(c.lossKind), enum_name(c.dataset));
    if (c.repeatedAug > 1 || c.mixup || c.cutmix || c.knnMixup || c.randomErasing ||
        c.randAugment || c.autoAugment)
      fail("train",
           "detection data supports augment (flips) and fpnAffine* only: repeatedAug, mixup, "
           "cutmix, knnMixup, randomErasing, randAugment and autoAugment would not move the "
           "boxes");
    if (c.useEMA || c.useSWA || c.useSWAG || c.useTTA)
      fail("train",
           "useEMA/useSWA/useSWAG/useTTA evaluate top-1, not detection mAP (set them off)");
  }

  data::Dataset prior_data(const data::Dataset& /*train_src*/) const override {
    return train::det_epoch(env_.data.det->train, targets_, env_.c,
                            static_cast<uint64_t>(env_.c.seed), -1);
  }

  void save_run_files(const std::string& dir) const override {
    write_file_atomic((std::filesystem::path(dir) / "classes.json").string(),
                      nlohmann::json(env_.data.class_names).dump() + "\n");
  }

  // Flips and affine move the boxes too (det_epoch), never the loader's augment.
  bool loader_augments() const override { return false; }
  bool redraws_epochs() const override { return true; }
  data::Dataset epoch_data(int epoch, const data::Dataset& /*base*/) const override {
    return train::det_epoch(env_.data.det->train, targets_, env_.c,
                            static_cast<uint64_t>(env_.c.seed), epoch);
  }

  bool labels_need_params() const override { return targets_.kind == LossKind::detrSet; }
  void update_labels(const train::TrainState& s, const std::vector<Tensor>& xs,
                     std::vector<Tensor>& ys) const override {
    for (size_t j = 0; j < xs.size(); ++j)
      ys[j] = train::detr_match_labels(evaluator(), s.params, s.running, xs[j], ys[j]);
  }

  void init_metrics(train::EpochMetrics& m) const override {
    m.det = true;  // every row has the mAP columns
    m.map.voc_ap50.assign(size_t(targets_.classes), -1);
    m.map.coco_ap.assign(size_t(targets_.classes), -1);
  }

  void evaluate(const train::TrainState& s, const std::function<bool()>& /*stop*/,
                train::EpochMetrics& m) const override {
    m.map = train::evaluate_det(evaluator(), s.params, s.running, env_.data.test,
                                env_.data.det->test, targets_, env_.split);
    m.val.top1 = m.map.voc_map50;  // what best compares
    m.val.count = env_.data.test.size();
  }

  bool has_val_loss() const override { return false; }

  void breakdown_columns(const train::EpochMetrics& m, report::Row& r) const override {
    auto opt = [](double v, bool on) { return on ? std::optional<double>(v) : std::nullopt; };
    const bool e = m.evaluated;
    r.emplace_back("val_map50", opt(m.map.voc_map50, e));
    r.emplace_back("val_map", opt(m.map.coco_map, e));
    for (size_t k = 0; k < m.map.voc_ap50.size(); ++k) {
      r.emplace_back(fmt::format("ap50_c{}", k), opt(m.map.voc_ap50[k], e));
      r.emplace_back(fmt::format("ap_c{}", k), opt(m.map.coco_ap[k], e));
    }
  }

  std::string eval_text(const train::EpochMetrics& m) const override {
    return fmt::format("  mAP@0.5 {:.4f}  mAP@[.5:.95] {:.4f}", m.map.voc_map50, m.map.coco_map);
  }

  std::string final_text(const train::EpochMetrics& m, const std::string& split) const override {
    return fmt::format("{} mAP@0.5 {:.4f}, mAP@[.5:.95] {:.4f} on {} images", split,
                       m.map.voc_map50, m.map.coco_map, m.val.count);
  }

  void best_fields(const train::EpochMetrics& m, nlohmann::ordered_json& b) const override {
    b["val_top1"] = m.val.top1;  // the VOC mAP@0.5 (resume compares val_score)
    b["val_map"] = m.map.coco_map;
    b["val_count"] = m.val.count;
    b["val_score"] = m.val.score();
  }

 private:
  train::DetTargets targets_;
};

}  // namespace

std::unique_ptr<Task> make_detection_task(const TaskEnv& e) {
  return std::make_unique<Detection>(e);
}

}  // namespace netspec::tasks
