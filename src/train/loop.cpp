// The epoch loop (hooks.h): one EpochRun (epoch_run.h) of updates per epoch, the hooks around it
// (mid-epoch saves, stop requests, the epoch's metrics line and checks).
#include <chrono>

#include "data/repeated_aug.h"
#include "train/epoch_run.h"
#include "train/hooks.h"

namespace netspec::train {
namespace {

using Clock = std::chrono::steady_clock;
double secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

}  // namespace

data::Dataset epoch_set(const LoopContext& ctx, const data::Dataset& base, int epoch) {
  if (ctx.task.redraws_epochs()) return ctx.task.epoch_data(epoch, base);
  // Repeated augmentation: each epoch's rows (timm RepeatAugSampler; the same count every epoch).
  if (ctx.c.repeatedAug > 1)
    return data::repeated_aug_epoch(base, ctx.c.repeatedAug, static_cast<uint64_t>(ctx.c.seed),
                                    epoch);
  return base;
}

void run_loop(LoopContext& ctx, const std::vector<std::unique_ptr<Hook>>& hooks,
              const data::Dataset& base, data::Dataset first, const BatchAugment& batch_aug,
              TrainResult& res) {
  const TrainConfig& c = ctx.c;
  TrainState& s = ctx.s;
  const int64_t spe = ctx.steps_per_epoch;
  const int first_epoch = s.epoch + 1;
  for (int epoch = first_epoch; epoch <= c.epochs && ctx.stop_reason.empty(); ++epoch) {
    const auto t0 = Clock::now();
    EpochRun run(ctx, hooks,
                 epoch == first_epoch ? std::move(first) : epoch_set(ctx, base, epoch - 1),
                 batch_aug, epoch);
    for (auto& h : hooks) h->before_epoch(ctx);
    while (!run.done()) {
      const int64_t calls = run.advance();
      if (const int64_t every = ctx.o.checkpoint_every_steps;
          every > 0 && !run.done() && s.step / every != (s.step - calls) / every) {
        run.hold();  // a kill from here on loses at most `every` updates (+ one call's)
        for (auto& h : hooks) h->on_checkpoint(ctx);
      }
      if (ctx.stop_requested() && !run.done()) {  // processes: all stop together
        run.hold();
        for (auto& h : hooks) h->on_stop(ctx);
        if (ctx.o.log)
          *ctx.o.log << fmt::format("interrupted at step {} (epoch {}, batch {}/{}); {}\n", s.step,
                                    epoch, run.position(), spe,
                                    ctx.last.empty() ? "no run dir, nothing saved"
                                                     : "saved " + ctx.last + "; rerun to resume");
        res.interrupted = true;
        return;
      }
    }
    EpochMetrics m = run.finish();
    std::string suffix;
    for (auto& h : hooks) h->epoch_metrics(ctx, m, suffix);
    m.seconds = secs(t0);
    res.epochs.push_back(m);
    if (ctx.o.log) *ctx.o.log << epoch_line(m, c.epochs, ctx.task) << suffix << "\n" << std::flush;
    for (auto& h : hooks) h->after_epoch(ctx, m);
    if (!ctx.stop_reason.empty() && epoch < c.epochs) {  // early stop: a clean end
      for (auto& h : hooks) h->on_stop(ctx);
      if (ctx.o.log) *ctx.o.log << ctx.stop_reason << "\n" << std::flush;
      break;
    }
    if (ctx.stop_requested() && (epoch < c.epochs || m.val.interrupted)) {
      for (auto& h : hooks) h->on_stop(ctx);
      if (ctx.o.log)
        *ctx.o.log << fmt::format("interrupted after epoch {}; rerun to resume\n", epoch);
      res.interrupted = true;
      break;
    }
  }
}

}  // namespace netspec::train
