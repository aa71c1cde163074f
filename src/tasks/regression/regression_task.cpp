// Regression as an autoencoder (floatTargetMse without ddpm, as the seed describes it): the
// target is the input itself, so the net's output must have the input's shape. Validation is
// the reconstruction MSE over every test sample (lower is better; best by -MSE), summed per
// batch and folded in batch order so a split across processes gives one process's bits.
#include "core/error.h"
#include "data/loader.h"
#include "tasks/task.h"

namespace netspec::tasks {
namespace {

class Regression final : public Task {
 public:
  using Task::Task;
  TaskKind kind() const override { return TaskKind::regression; }

  void check(const data::Dataset& train_src) const override {
    const Shape& x = train_src.x.shape();
    const Shape sample(x.begin() + 1, x.end());
    // ui8 images (MNIST, CIFAR, folders) reach the net as normalised f32 batches.
    const bool f32_batches = train_src.x.dtype() == DType::kF32 ||
                             (train_src.x.dtype() == DType::kUI8 && train_src.x.rank() == 4);
    if (env_.table.output != sample || !f32_batches)
      fail("train",
           "lossKind floatTargetMse (regression) trains the net to reproduce its input (an "
           "autoencoder): the net's output {} must equal the input sample {} of f32 (use "
           "lossKind classCE for class labels, or --set ddpm=true for a diffusion net)",
           shape_str(env_.table.output), train_src.x.type_str());
  }

  void micro_batch(int64_t /*step*/, int64_t /*micro*/, Tensor& x, Tensor& y) const override {
    y = x.clone();
  }

  void evaluate(const train::TrainState& s, const std::function<bool()>& /*stop*/,
                train::EpochMetrics& m) const override {
    const train::Evaluator& ev = evaluator();
    data::Loader ld(env_.data.test, ev.batch(), false, 0);
    ld.start_epoch(0);
    std::vector<double> batch_sum(static_cast<size_t>(ld.num_batches()), 0.0);
    std::vector<int64_t> count = {0};
    for (int64_t b = 0; b < ld.num_batches(); ++b) {
      if (!env_.split.mine(b)) continue;
      Tensor x, y;
      const int64_t n = ld.batch(b, x, y);
      const Tensor out = ev.logits(s.params, s.running, x);
      const int64_t per = out.numel() / out.shape().at(0);
      for (int64_t i = 0; i < n * per; ++i) {
        const double d = double(out.data<float>()[i]) - x.data<float>()[i];
        batch_sum[size_t(b)] += d * d;
      }
      count[0] += n * per;
    }
    env_.split.sum(batch_sum, count, "eval");
    double sum = 0;
    for (double v : batch_sum) sum += v;  // batch order, as a single process
    m.val.regression = true;
    m.val.count = count[0];
    m.val.loss = m.val.count ? sum / double(m.val.count) : 0;
  }

  std::string final_text(const train::EpochMetrics& m, const std::string& split) const override {
    return fmt::format("{} loss {:.4f} (mean squared error) over {} values", split, m.val.loss,
                       m.val.count);
  }

  bool has_top1() const override { return false; }  // an MSE has no accuracy

  std::string eval_text(const train::EpochMetrics& m) const override {
    return fmt::format("  val loss {:.4f}  (reconstruction mse)", m.val.loss);
  }
};

}  // namespace

std::unique_ptr<Task> make_regression_task(const TaskEnv& e) {
  return std::make_unique<Regression>(e);
}

}  // namespace netspec::tasks
