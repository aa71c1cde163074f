// Classification: one class index per sample (i32 [N]), logits [C]; cross-entropy, top-1 and
// top-5 (Task's defaults), best by top-1. The weight averages and TTA score top-1.
#include "core/error.h"
#include "tasks/task.h"

namespace netspec::tasks {
namespace {

class Classification final : public Task {
 public:
  using Task::Task;
  TaskKind kind() const override { return TaskKind::classification; }

  void check(const data::Dataset& train_src) const override {
    const Shape& y = train_src.y.shape();
    if (y.size() == 3)
      fail("train",
           "dataset {} has per-pixel labels ({}); lossKind {} (classification) needs one class "
           "index per sample: use a per-pixel loss (lossKind perPixelCE) with a net whose "
           "output is per pixel, or a classification dataset",
           enum_name(env_.c.dataset), train_src.y.type_str(), enum_name(env_.c.lossKind));
    if (env_.table.output.size() != 1)
      fail("train",
           "lossKind {} (classification) needs logits [C] per sample (got the net's output {}): "
           "a per-pixel output wants lossKind perPixelCE, an output shaped like the input "
           "lossKind floatTargetMse",
           enum_name(env_.c.lossKind), shape_str(env_.table.output));
  }
};

}  // namespace

std::unique_ptr<Task> make_classification_task(const TaskEnv& e) {
  return std::make_unique<Classification>(e);
}

}  // namespace netspec::tasks
