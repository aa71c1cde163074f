// Segmentation: class maps i32 [N, H, W] against per-pixel logits [C, H, W]. Scored per pixel
// (seg_metrics.h): mIoU (what best is chosen by), Dice, pixel accuracy and per-class IoU
// under the class names, in the epoch line, metrics.csv (val_miou, val_dice, val_iou_<k>) and
// best.json.
#include <cmath>

#include "core/error.h"
#include "tasks/task.h"

namespace netspec::tasks {
namespace {

class Segmentation final : public Task {
 public:
  using Task::Task;
  TaskKind kind() const override { return TaskKind::segmentation; }

  void check(const data::Dataset& train_src) const override {
    const Shape& out = env_.table.output;
    const Shape& y = train_src.y.shape();
    if (y.size() != 3)
      fail("train",
           "lossKind {} (segmentation) needs per-pixel labels i32 [N, H, W] (got {} from dataset "
           "{}): use a segmentation dataset (pets, brats, voc masks) or lossKind classCE",
           enum_name(env_.c.lossKind), train_src.y.type_str(), enum_name(env_.c.dataset));
    if (out.size() != 3 || out[1] != y[1] || out[2] != y[2])
      fail("train",
           "lossKind {} (segmentation) needs per-pixel logits [C, {}, {}] (got the net's output "
           "{})",
           enum_name(env_.c.lossKind), y[1], y[2], shape_str(out));
    // Views are cropped and flipped: their per-pixel logits would need each draw undone.
    if (env_.c.useTTA)
      fail("train",
           "useTTA averages the class logits of augmented views of an image; per-pixel logits of "
           "cropped and flipped views do not line up (set useTTA off for segmentation)");
  }

  int64_t classes() const { return env_.table.output.at(0); }

  // "class 3" past the dataset's names.
  std::string class_name(int64_t k) const {
    const auto& n = env_.data.class_names;
    return k < static_cast<int64_t>(n.size()) ? n[size_t(k)] : fmt::format("class {}", k);
  }

  void breakdown_columns(const train::EpochMetrics& m, report::Row& r) const override {
    auto opt = [](double v, bool on) { return on ? std::optional<double>(v) : std::nullopt; };
    const bool e = m.evaluated;
    r.emplace_back("val_miou", opt(m.val.miou, e));
    r.emplace_back("val_dice", opt(m.val.dice, e));
    for (int64_t k = 0; k < classes(); ++k) {
      const double v = e ? m.val.iou.at(size_t(k)) : 0;
      r.emplace_back(fmt::format("val_iou_{}", k), opt(v, e && !std::isnan(v)));
    }
  }

  // The train step counts pixels: its running accuracy is the pixel accuracy.
  std::string running_text(double loss, int64_t correct, int64_t counted) const override {
    const std::string acc = Task::running_text(loss, correct, counted);
    return acc.empty() ? acc : "pixel " + acc;
  }

  std::string eval_text(const train::EpochMetrics& m) const override {
    std::string s = fmt::format("  val loss {:.4f}  mIoU {:.4f}  dice {:.4f}  pixel acc {:.2f}%",
                                m.val.loss, m.val.miou, m.val.dice, 100 * m.val.top1);
    return s + " " + iou_list(m) + fmt::format("  ({} pixels)", m.val.count);
  }

  // " IoU pet 0.912, background 0.801, border 0.500"
  std::string iou_list(const train::EpochMetrics& m) const {
    std::string s = " IoU";
    for (size_t k = 0; k < m.val.iou.size(); ++k)
      s += fmt::format("{} {} {:.3f}", k ? "," : "", class_name(int64_t(k)), m.val.iou[k]);
    return s;
  }

  // Pixels are what is counted; each class's IoU is named.
  std::string final_text(const train::EpochMetrics& m, const std::string& split) const override {
    std::string s = fmt::format("{} mIoU {:.4f}, dice {:.4f}, pixel accuracy {:.2f}% on {} pixels",
                                split, m.val.miou, m.val.dice, 100 * m.val.top1, m.val.count);
    return s + ";" + iou_list(m).substr(1);
  }

  void best_fields(const train::EpochMetrics& m, nlohmann::ordered_json& b) const override {
    Task::best_fields(m, b);
    b["val_miou"] = m.val.miou;
  }
};

}  // namespace

std::unique_ptr<Task> make_segmentation_task(const TaskEnv& e) {
  return std::make_unique<Segmentation>(e);
}

}  // namespace netspec::tasks
