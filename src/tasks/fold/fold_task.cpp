// Protein folding (lossKind af2Fold): residue ids i32 [B, L] -> a structureModule with frames
// (and a distogram head) [B, L, 12 + L·K]; labels are the true frames and a residue mask
// [B, L, 13] (data/protein.h). Validation scores every chain with AlphaFold 2's metrics
// (fold_metrics.h): FAPE (Å), lDDT-Cα (0-100, what "best" follows) and the distogram
// cross-entropy, each the mean over chains; val loss is the training loss on the host
// (FAPE with 1e-4 Å² under the root / 10 Å + 0.3 · distogram CE). Per-batch sums are folded
// in batch order, so a split across processes gives one process's bits.
#include "tasks/fold/fold_task.h"

#include "core/error.h"
#include "data/loader.h"
#include "tasks/fold/fold_metrics.h"

namespace netspec::tasks {

train::EvalMetrics fold_evaluate(const train::Evaluator& ev, const std::vector<Tensor>& params,
                                 const std::vector<Tensor>& running, const data::Dataset& test,
                                 const train::RankSplit& split) {
  data::Loader ld(test, ev.batch(), false, 0);
  ld.start_epoch(0);
  const size_t nb = static_cast<size_t>(ld.num_batches());
  // Per batch: Σ loss, Σ FAPE, Σ lDDT, Σ CE over its chains (4 blocks of nb).
  std::vector<double> sums(4 * nb, 0.0);
  std::vector<int64_t> count = {0};
  for (int64_t b = 0; b < ld.num_batches(); ++b) {
    if (!split.mine(b)) continue;
    Tensor x, y;
    const int64_t n = ld.batch(b, x, y);
    const Tensor out = ev.logits(params, running, x);
    for (int64_t i = 0; i < n; ++i) {
      const fold::ChainScores sc = fold::score_chain(out, y, i);
      sums[size_t(b)] += sc.loss;
      sums[nb + size_t(b)] += sc.fape;
      sums[2 * nb + size_t(b)] += sc.lddt;
      sums[3 * nb + size_t(b)] += sc.dist_ce;
    }
    count[0] += n;
  }
  split.sum(sums, count, "eval");
  double tot[4] = {0, 0, 0, 0};
  for (size_t k = 0; k < 4; ++k)
    for (size_t b = 0; b < nb; ++b) tot[k] += sums[k * nb + b];  // batch order
  const double c = count[0] ? double(count[0]) : 1;
  train::EvalMetrics m;
  m.fold = true;
  m.count = count[0];
  m.loss = tot[0] / c;
  m.fape = tot[1] / c;
  m.lddt = tot[2] / c;
  m.dist_ce = tot[3] / c;
  return m;
}

namespace {

class Fold final : public Task {
 public:
  using Task::Task;
  TaskKind kind() const override { return TaskKind::fold; }

  void check(const data::Dataset& train_src) const override {
    const Shape& x = train_src.x.shape();
    const Shape& out = env_.table.output;
    if (train_src.x.dtype() != DType::kI32 || x.size() != 2 || train_src.y.rank() != 3 ||
        train_src.y.shape()[2] != 13)
      fail("train",
           "lossKind af2Fold trains on residue sequences with true frames (dataset protein: ids "
           "i32 [N, L], frames f32 [N, L, 13]; got {} and {})",
           train_src.x.type_str(), train_src.y.type_str());
    const int64_t n = x[1];
    if (out.size() != 2 || out[0] != n || out[1] < 12 || (out[1] - 12) % n != 0 ||
        (out[1] - 12) / n == 1)
      fail("train",
           "lossKind af2Fold needs the net's output [{}, 12 + {}·bins] (a structureModule with "
           "frames: true and distogramBins 0 or >= 2; got {})",
           n, n, shape_str(out));
  }

  bool loader_augments() const override { return false; }

  std::string start_line() override {
    const int64_t n = env_.table.output.at(0), bins = (env_.table.output.at(1) - 12) / n;
    return fmt::format(
        "fold: {} training / {} validation chains of {} residues; FAPE (clamp 10 Å), lDDT-Cα "
        "(15 Å), {}",
        env_.data.train.size(), env_.data.test.size(), n,
        bins > 0 ? fmt::format("distogram of {} bins", bins) : std::string("no distogram head"));
  }

  void evaluate(const train::TrainState& s, const std::function<bool()>& /*stop*/,
                train::EpochMetrics& m) const override {
    m.val = fold_evaluate(evaluator(), s.params, s.running, env_.data.test, env_.split);
  }

  void metric_columns(const train::EpochMetrics& m, report::Row& r) const override {
    auto v = [&](double x) { return m.evaluated ? std::optional<double>(x) : std::nullopt; };
    r.emplace_back("val_fape", v(m.val.fape));
    r.emplace_back("val_lddt_ca", v(m.val.lddt));
    r.emplace_back("val_dist_ce", v(m.val.dist_ce));
  }

  std::string eval_text(const train::EpochMetrics& m) const override {
    return fmt::format("  val loss {:.4f}  FAPE {:.3f} Å  lDDT-Cα {:.2f}  distogram CE {:.4f}",
                       m.val.loss, m.val.fape, m.val.lddt, m.val.dist_ce);
  }

  std::string final_text(const train::EpochMetrics& m, const std::string& split) const override {
    return fmt::format("{} lDDT-Cα {:.2f}, FAPE {:.3f} Å, distogram CE {:.4f} over {} chains",
                       split, m.val.lddt, m.val.fape, m.val.dist_ce, m.val.count);
  }

  void best_fields(const train::EpochMetrics& m, nlohmann::ordered_json& b) const override {
    b["val_loss"] = m.val.loss;
    b["val_fape"] = m.val.fape;
    b["val_lddt_ca"] = m.val.lddt;
    b["val_dist_ce"] = m.val.dist_ce;
    b["val_count"] = m.val.count;
    b["val_score"] = m.val.score();  // lDDT-Cα (resume reads it)
  }

  bool has_top1() const override { return false; }
};

}  // namespace

std::unique_ptr<Task> make_fold_task(const TaskEnv& e) { return std::make_unique<Fold>(e); }

}  // namespace netspec::tasks
