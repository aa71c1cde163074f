// NeRF (lossKind nerfRenderMse on the radianceField dataset): a sample is a camera ray with its
// pixel's colour. Each training batch of R rays becomes R·S point rows (render.h: one jittered
// offset per ray from (seed, step, micro-batch)), the net returns raw (rgb, σ) per point and the
// train step volume-renders them into colours for the MSE. Validation renders every held-out
// ray at the interval midpoints through the eval module and the host renderer: val loss is the
// colour MSE, val_psnr = -10·log10(MSE) (best by PSNR), and RUN/render.png shows the first
// held-out view rendered beside its truth.
#include <filesystem>
#include <numeric>
#include <random>

#include "core/error.h"
#include "core/hash.h"
#include "data/image_write.h"
#include "data/radiance_field.h"
#include "tasks/nerf/render.h"
#include "tasks/task.h"
#include "train/averaging.h"

namespace netspec::tasks {
namespace {

class Nerf final : public Task {
 public:
  explicit Nerf(const TaskEnv& e) : Task(e), rs_(RaySampling::from(e.c)) {}
  TaskKind kind() const override { return TaskKind::nerf; }

  void check(const data::Dataset& train_src) const override {
    if (!env_.data.views)
      fail("train",
           "lossKind nerfRenderMse renders camera rays: set dataset radiance-field (got {})",
           enum_name(env_.c.dataset));
    const Shape ray{6}, raw{4};
    if (env_.table.input != ray || env_.table.output != raw)
      fail("train",
           "lossKind nerfRenderMse needs a net from a point row (xyz, direction) [6] to raw "
           "(rgb, sigma) [4], as positionalEncoding(inDim 6) + nerfMLP (got {} -> {})",
           shape_str(env_.table.input), shape_str(env_.table.output));
    if (train_src.x.dtype() != DType::kF32 || train_src.y.shape() != Shape{train_src.size(), 3})
      fail("train", "radiance-field samples must be f32 rays [N, 6] with colours [N, 3] (got {})",
           train_src.x.type_str());
    if (env_.c.gradAccumSteps > 1)
      fail("train", "the nerf task takes one batch per update: set gradAccumSteps to 1 (got {})",
           env_.c.gradAccumSteps);
    if (train_src.size() < env_.c.batchSize)
      fail("train", "radiance-field has {} training rays, fewer than batchSize {}",
           train_src.size(), env_.c.batchSize);
  }

  void save_run_files(const std::string& dir) const override { run_dir_ = dir; }

  std::string start_line() override {
    const data::RayViews& v = *env_.data.views;
    return fmt::format(
        "nerf: {}, {} training / {} held-out views of {}x{}; {} rays per batch x {} samples "
        "over [{}, {}]",
        v.source, v.train_views, v.test_views, v.width, v.height, env_.c.batchSize, rs_.samples,
        rs_.near, rs_.far);
  }

  // Each epoch trains a fresh permutation of the rays cut to whole batches (the train step has
  // one ray count; the few left over are drawn in other epochs).
  bool redraws_epochs() const override { return true; }
  data::Dataset epoch_data(int epoch, const data::Dataset& base) const override {
    std::vector<int64_t> rows(static_cast<size_t>(base.size()));
    std::iota(rows.begin(), rows.end(), int64_t{0});
    std::mt19937_64 g(splitmix64(uint64_t(env_.c.seed) ^ splitmix64(uint64_t(epoch) + 1)));
    std::shuffle(rows.begin(), rows.end(), g);
    rows.resize(size_t(base.size() / env_.c.batchSize * env_.c.batchSize));
    return data::take_rows(base, rows);
  }
  bool loader_augments() const override { return false; }

  // Rays [R, 6] -> points [R·S, 6]; offsets u uniform in [0, 1) from (seed, step, micro, ray).
  void micro_batch(int64_t step, int64_t micro, Tensor& x, Tensor& /*y*/) const override {
    const uint64_t key = splitmix64(splitmix64(uint64_t(env_.c.seed) ^ uint64_t(step)) ^
                                    (uint64_t(micro) + 0x9e37));
    x = ray_batch_points(x, rs_, [key](int64_t i) {
      return double(splitmix64(key ^ splitmix64(uint64_t(i))) >> 11) * 0x1.0p-53;
    });
  }

  void configure_averages(train::Averages& a) const override {
    a.set_evaluate("psnr", [this](const train::TrainState& st) {
      return psnr(render_split(st, nullptr).first / double(3 * env_.data.test.size()));
    });
  }

  void evaluate(const train::TrainState& s, const std::function<bool()>& /*stop*/,
                train::EpochMetrics& m) const override {
    Tensor pred;
    const auto [sum, rays] = render_split(s, &pred);
    m.val.regression = true;  // best by -MSE, i.e. by PSNR
    m.val.count = rays;
    m.val.loss = rays ? sum / double(3 * rays) : 0;
    const data::RayViews& v = *env_.data.views;
    if (!run_dir_.empty() && env_.split.ranks() == 1 && v.test_views > 0)
      data::write_png_rgb((std::filesystem::path(run_dir_) / "render.png").string(),
                          side_by_side(pred, env_.data.test.y, 0, v.height, v.width));
  }

  void metric_columns(const train::EpochMetrics& m, report::Row& r) const override {
    r.emplace_back("val_psnr",
                   m.evaluated ? std::optional<double>(psnr(m.val.loss)) : std::nullopt);
  }
  std::string eval_text(const train::EpochMetrics& m) const override {
    return fmt::format("  val loss {:.5f}  PSNR {:.2f} dB", m.val.loss, psnr(m.val.loss));
  }
  std::string final_text(const train::EpochMetrics& m, const std::string& split) const override {
    return fmt::format("{} PSNR {:.2f} dB (colour MSE {:.5f}) over {} rays of {} views", split,
                       psnr(m.val.loss), m.val.loss, m.val.count, env_.data.views->test_views);
  }
  void best_fields(const train::EpochMetrics& m, nlohmann::ordered_json& b) const override {
    b["val_loss"] = m.val.loss;
    b["val_psnr"] = psnr(m.val.loss);
    b["val_count"] = m.val.count;
    b["val_score"] = m.val.score();
  }
  bool has_top1() const override { return false; }
  std::string rate_text(double samples_per_s) const override {
    return fmt::format("{:.0f} rays/s", samples_per_s);
  }

 private:
  // Σ squared colour error over the held-out rays and their count; the rays are cut into chunks
  // of one eval batch, chunk b scored by rank b mod ranks and the sums folded in chunk order.
  // pred (one process only): every ray's rendered colour.
  std::pair<double, int64_t> render_split(const train::TrainState& s, Tensor* pred) const {
    const data::Dataset& test = env_.data.test;
    const int64_t n = test.size(), chunk = std::max<int64_t>(1, evaluator().batch() / rs_.samples);
    const int64_t chunks = (n + chunk - 1) / chunk;
    std::vector<double> sums(static_cast<size_t>(chunks), 0.0);
    std::vector<int64_t> count = {0};
    if (pred) *pred = Tensor(DType::kF32, {n, 3});
    for (int64_t b = 0; b < chunks; ++b) {
      if (!env_.split.mine(b)) continue;
      std::vector<int64_t> rows(static_cast<size_t>(std::min(chunk, n - b * chunk)));
      std::iota(rows.begin(), rows.end(), b * chunk);
      const data::Dataset part = data::take_rows(test, rows);
      const Tensor c = render_rays(evaluator(), s.params, s.running, part.x, rs_);
      sums[size_t(b)] = squared_error(c, part.y);
      count[0] += part.size();
      if (pred) std::copy_n(c.data<float>(), c.numel(), pred->data<float>() + b * chunk * 3);
    }
    env_.split.sum(sums, count, "eval");
    double sum = 0;
    for (double v : sums) sum += v;
    return {sum, count[0]};
  }

  RaySampling rs_;
  mutable std::string run_dir_;  // set when the run dir is opened (save_run_files)
};

}  // namespace

std::unique_ptr<Task> make_nerf_task(const TaskEnv& e) { return std::make_unique<Nerf>(e); }

}  // namespace netspec::tasks
