// The training loop's hooks (see hooks.h).
#include "train/hooks.h"

#include <filesystem>
#include <limits>
#include <optional>

#include "core/error.h"
#include "core/file_check.h"
#include "report/loss_plot.h"
#include "report/metrics_log.h"
#include "report/progress.h"
#include "train/divergence.h"
#include "train/evaluate.h"
#include "train/signals.h"
#include "train/tta.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;

// The progress bar on a TTY, else a plain line every progress_every_s seconds.
class ProgressHook final : public Hook {
 public:
  void before_epoch(LoopContext& ctx) override {
    const TrainOptions& o = ctx.o;
    if (!o.log || (!o.tty && o.progress_every_s < 0)) return;
    bar_ = std::make_unique<report::Progress>(
        *o.log, o.tty, fmt::format("epoch {}/{}", ctx.epoch, ctx.c.epochs), ctx.steps_per_epoch,
        ctx.c.batchSize * ctx.stepper.accum(), o.progress_every_s, ctx.first_update);
  }
  // The running loss, the task's running metric (accuracy from the train step's counts, bpc)
  // and the lr.
  void after_step(LoopContext& ctx, const StepEnd& e) override {
    if (bar_)
      bar_->update(e.update + 1, e.epoch_loss, e.run_samples, e.lr,
                   ctx.task.running_text(e.epoch_loss, e.correct, e.counted));
  }
  void epoch_metrics(LoopContext&, EpochMetrics&, std::string&) override { finish(); }
  void on_stop(LoopContext&) override { finish(); }

 private:
  void finish() {
    if (bar_) bar_->finish();
    bar_.reset();
  }
  std::unique_ptr<report::Progress> bar_;
};

// A non-finite or exploding step loss, or a non-finite validation loss, stops the run before
// anything of it is saved (divergence.h).
class DivergenceHook final : public Hook {
 public:
  void after_step(LoopContext& ctx, const StepEnd& e) override {
    guard_.check_step(e.loss, ctx.s.step, ctx.epoch, e.update + 1);
  }
  void after_epoch(LoopContext& ctx, const EpochMetrics& m) override {
    if (m.evaluated) guard_.check_eval(m.val.loss, ctx.epoch);
  }

 private:
  DivergenceGuard guard_;
};

// Evaluation every evalEveryNEpochs epochs and after the last (0: after the last only, as the
// seed), by the task; `best` when the
// task's score beats every earlier one (of this run dir, across resumes).
class EvaluationHook final : public Hook {
 public:
  explicit EvaluationHook(double best) : best_(best) {}
  void epoch_metrics(LoopContext& ctx, EpochMetrics& m, std::string&) override {
    ctx.task.init_metrics(m);
    const int every = ctx.c.evalEveryNEpochs;
    if ((every == 0 || ctx.epoch % every != 0) && ctx.epoch != ctx.c.epochs) return;
    ctx.task.evaluate(
        ctx.s, [&ctx] { return ctx.stop_requested(); }, m);
    // Interrupted: the epoch's row has no validation fields (as an epoch not evaluated).
    m.evaluated = !m.val.interrupted;
    m.best = m.evaluated && m.val.count > 0 && m.val.score() > best_;
    if (m.val.interrupted && ctx.o.log)
      *ctx.o.log << fmt::format("interrupted during the evaluation of epoch {}; it is skipped\n",
                                ctx.epoch);
    else if (m.val.skipped > 0 && ctx.o.log)  // --skip-bad-images: left out of the scores
      *ctx.o.log << skipped_eval_line(fmt::format("epoch {} evaluation", ctx.epoch), m.val.skipped,
                                      m.val.skipped_first, m.val.count)
                 << "\n";
  }
  void after_epoch(LoopContext&, const EpochMetrics& m) override {
    if (m.best) best_ = m.val.score();
  }

 private:
  double best_;
};

// EMA per update, SWA / SWAG per epoch (averaging.h), each evaluated beside the weights.
class AveragesHook final : public Hook {
 public:
  explicit AveragesHook(Averages& a) : a_(a) {}
  double adjust_lr(const LoopContext& ctx, double lr) const override {
    const TrainConfig& c = ctx.c;
    return c.swaLr > 0 && a_.any() && ctx.epoch - 1 >= c.swaStartEpoch ? c.swaLr : lr;
  }
  void after_step(LoopContext& ctx, const StepEnd&) override {
    if (!a_.per_step()) return;
    ctx.stepper.sync(ctx.s);
    a_.after_step(ctx.s);
  }
  void epoch_metrics(LoopContext& ctx, EpochMetrics& m, std::string& suffix) override {
    if (a_.any())
      suffix += a_.end_epoch(ctx.epoch, ctx.s, *ctx.train_ds, ctx.task.env().data.test, m.evaluated,
                             ctx.o.run_dir, ctx.net.name);
    m.average_top1 = a_.top1_columns();
  }

 private:
  Averages& a_;
};

// useTTA: ttaSamples augmented views per sample, logits averaged (tta.h).
class TtaHook final : public Hook {
 public:
  void epoch_metrics(LoopContext& ctx, EpochMetrics& m, std::string& suffix) override {
    std::optional<double> top1;
    if (m.evaluated)
      top1 = evaluate_tta(ctx.evaluator, ctx.s.params, ctx.s.running, ctx.task.env().data.test,
                          *ctx.aug, ctx.c.ttaSamples, static_cast<uint64_t>(ctx.c.seed) + 1,
                          ctx.task.env().split)
                 .top1;
    if (top1) suffix += fmt::format("  tta top-1 {:.2f}%", 100 * *top1);
    m.average_top1.emplace_back("tta_top1", top1);
  }
};

}  // namespace

// One steps.csv row. grad-norm is not logged: the fused train step does not return it.
report::Row step_row(int64_t step, double epoch, const StepEnd& e) {
  return {{"step", static_cast<double>(step)},
          {"epoch", epoch},
          {"train_loss", e.loss},
          {"lr", e.lr},
          {"samples", static_cast<double>(e.samples)},
          {"ms", 1e3 * e.seconds},
          {"samples_per_s", e.seconds > 0 ? double(e.samples) / e.seconds : 0.0}};
}

namespace {

// The run dir: steps rows per update (flushed with `last`), per epoch the metrics rows, the
// plots, `best` (+ best.json) when the epoch is best, and `last` every checkpointEveryNEpochs
// epochs and after the final one; on a stop, `last` unless this epoch wrote it.
class RunDirHook final : public Hook {
 public:
  RunDirHook(const LoopContext& ctx, Averages& a)
      : a_(a),
        mlog_(ctx.o.run_dir, ctx.s.epoch),
        slog_(ctx.o.run_dir, ctx.s.step, "steps", "step", report::kPlotRows) {}
  void before_epoch(LoopContext&) override { saved_ = false; }
  void after_step(LoopContext& ctx, const StepEnd& e) override {
    const double at = ctx.epoch - 1 + double(e.update + 1) / double(ctx.steps_per_epoch);
    slog_.append(step_row(ctx.s.step, at, e), false);
  }
  void after_epoch(LoopContext& ctx, const EpochMetrics& m) override {
    mlog_.append(metrics_row(m, ctx.task));
    slog_.flush();
    if (ctx.o.run_dir.empty()) return;
    const fs::path dir = ctx.o.run_dir;
    report::write_loss_plots(ctx.o.run_dir, mlog_.rows(), slog_.rows());
    if (m.best) {
      save_checkpoint((dir / "best.safetensors").string(), ctx.table, ctx.s, ctx.net.name, false);
      nlohmann::ordered_json b;
      b["epoch"] = m.epoch;
      b["step"] = m.step;
      ctx.task.best_fields(m, b);
      write_file_atomic((dir / "best.json").string(), b.dump(2) + "\n");
    }
    if (ctx.epoch % ctx.c.checkpointEveryNEpochs == 0 || ctx.epoch == ctx.c.epochs) save_last(ctx);
  }
  void on_stop(LoopContext& ctx) override {
    slog_.flush();
    // Mid-epoch too: the curves so far (the interrupted epoch's steps included).
    if (!ctx.o.run_dir.empty()) report::write_loss_plots(ctx.o.run_dir, mlog_.rows(), slog_.rows());
    if (!saved_) save_last(ctx);
  }
  void on_checkpoint(LoopContext& ctx) override {
    slog_.flush();  // the rows through this update, before the `last` that covers them
    save_last(ctx);
    saved_ = false;  // later updates of this epoch are not in it
  }

 private:
  // `last`, preceded by the running averages of the same step (a resume continues both).
  void save_last(const LoopContext& ctx) {
    saved_ = true;
    if (ctx.last.empty()) return;
    if (a_.any())
      a_.save_state((fs::path(ctx.o.run_dir) / "averages.safetensors").string(), ctx.s,
                    ctx.net.name);
    save_checkpoint(ctx.last, ctx.table, ctx.s, ctx.net.name);
  }
  Averages& a_;
  report::MetricsLog mlog_, slog_;
  bool saved_ = false;
};

}  // namespace

bool LoopContext::stop_requested() const { return any_rank(train::stop_requested(), o.dp); }

std::unique_ptr<Hook> make_progress_hook() { return std::make_unique<ProgressHook>(); }
std::unique_ptr<Hook> make_divergence_hook() { return std::make_unique<DivergenceHook>(); }
std::unique_ptr<Hook> make_evaluation_hook(double best_score) {
  return std::make_unique<EvaluationHook>(best_score);
}
std::unique_ptr<Hook> make_averages_hook(Averages& a) { return std::make_unique<AveragesHook>(a); }
std::unique_ptr<Hook> make_tta_hook() { return std::make_unique<TtaHook>(); }
std::unique_ptr<Hook> make_run_dir_hook(const LoopContext& ctx, Averages& a) {
  return std::make_unique<RunDirHook>(ctx, a);
}

std::string epoch_line(const EpochMetrics& m, int epochs, const tasks::Task& task) {
  std::string s = fmt::format("epoch {}/{}  train loss {:.4f}", m.epoch, epochs, m.train_loss);
  if (m.evaluated) s += task.eval_text(m);
  s += fmt::format("  ({:.1f} s, {:.2f} ms/step, {}, lr {:.3g})", m.seconds, m.ms_per_step,
                   task.rate_text(m.samples_per_s), m.lr);
  if (m.best) s += "  best";
  return s;
}

report::Row metrics_row(const EpochMetrics& m, const tasks::Task& task) {
  auto opt = [&](double v, bool on) { return on ? std::optional<double>(v) : std::nullopt; };
  const bool e = m.evaluated, loss = task.has_val_loss();
  report::Row r = {{"epoch", m.epoch},
                   {"step", static_cast<double>(m.step)},
                   {"lr", m.lr},
                   {"train_loss", m.train_loss},
                   {"val_loss", opt(m.val.loss, e && loss)},
                   {"val_top1", opt(m.val.top1, e && loss && task.has_top1())},
                   {"val_top5", opt(m.val.top5, e && m.val.has_top5)},
                   {"val_count", opt(static_cast<double>(m.val.count), e)},
                   {"seconds", m.seconds},
                   {"ms_per_step", m.ms_per_step},
                   {"samples_per_s", m.samples_per_s}};
  task.metric_columns(m, r);
  for (const auto& [name, top1] : m.average_top1) r.emplace_back(name, top1);
  task.breakdown_columns(m, r);
  return r;
}

double read_best_score(const std::string& dir) {
  const fs::path p = fs::path(dir) / "best.json";
  if (dir.empty() || !fs::exists(p)) return -std::numeric_limits<double>::infinity();
  // A regular file only: a FIFO planted as best.json must not block the run.
  const std::string text = read_regular_file("train", p.string());
  try {
    auto j = nlohmann::json::parse(text);
    return j.value("val_score", j.at("val_top1").get<double>());
  } catch (const nlohmann::json::exception&) {
    return -std::numeric_limits<double>::infinity();  // unreadable: rewritten next
  }
}

}  // namespace netspec::train
