// Diffusion (DDPM, ddpm.h): each training batch of images becomes (x_t + a t/T plane, ε)
// pairs drawn from (seed, step, micro-batch); the net learns ε with floatTargetMse; validation is
// the noise-prediction MSE on the first 1024 test images with fixed draws (lower is better, best
// by -MSE), and each weight average is scored by it too.
#include "core/error.h"
#include "tasks/diffusion/ddpm.h"
#include "tasks/task.h"
#include "train/averaging.h"

namespace netspec::tasks {
namespace {

class Diffusion final : public Task {
 public:
  explicit Diffusion(const TaskEnv& e) : Task(e), schedule_(e.c) {}
  TaskKind kind() const override { return TaskKind::diffusion; }

  Shape input_sample(Shape sample) const override {
    if (sample.size() == 3) ++sample[0];  // the t/T input channel
    return sample;
  }

  void check(const data::Dataset& train_src) const override {
    if (train_src.x.rank() != 4)
      fail("train", "ddpm needs image data [N, C, H, W] (got {} from dataset {})",
           train_src.x.type_str(), enum_name(env_.c.dataset));
    if (env_.c.lossKind != LossKind::floatTargetMse)
      fail("train",
           "ddpm trains the net to predict the noise: set lossKind floatTargetMse (got {})",
           enum_name(env_.c.lossKind));
  }

  void configure_averages(train::Averages& a) const override {
    a.set_evaluate("noise_mse", [this](const train::TrainState& st) {
      return noise_mse(st, env_.data.test).loss;
    });
    // SWA's BN statistics are of the DDPM inputs (fixed draws: step b, micro -1).
    a.set_bn_input([this](int64_t b, Tensor& x) {
      Tensor eps;
      train::ddpm_batch(schedule_, env_.c.dataset, uint64_t(env_.c.seed), b, -1, x, eps);
    });
  }

  void micro_batch(int64_t step, int64_t micro, Tensor& x, Tensor& y) const override {
    train::ddpm_batch(schedule_, env_.c.dataset, uint64_t(env_.c.seed), step, micro, x, y);
  }

  void evaluate(const train::TrainState& s, const std::function<bool()>& /*stop*/,
                train::EpochMetrics& m) const override {
    m.val = noise_mse(s, env_.data.test);
  }

  bool has_top1() const override { return false; }  // an MSE has no accuracy

  std::string eval_text(const train::EpochMetrics& m) const override {
    return fmt::format("  val loss {:.4f}  (noise mse)", m.val.loss);
  }

  std::string final_text(const train::EpochMetrics& m, const std::string& split) const override {
    return fmt::format("{} loss {:.4f} (mean squared error) over {} values", split, m.val.loss,
                       m.val.count);
  }

 private:
  train::EvalMetrics noise_mse(const train::TrainState& s, const data::Dataset& test) const {
    return train::ddpm_evaluate(schedule_, env_.c.dataset, evaluator(), s.params, s.running, test,
                                1024, env_.split);
  }
  train::DdpmSchedule schedule_;
};

}  // namespace

std::unique_ptr<Task> make_diffusion_task(const TaskEnv& e) {
  return std::make_unique<Diffusion>(e);
}

}  // namespace netspec::tasks
