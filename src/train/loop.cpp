// The epoch/update loop (hooks.h): batches in, one Stepper update each, the hooks around it.
#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "data/repeated_aug.h"
#include "data/sample_source.h"
#include "train/batch_augment.h"
#include "train/data_parallel.h"
#include "train/hooks.h"

namespace netspec::train {
namespace {

using Clock = std::chrono::steady_clock;
double secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

// The position of a save: sample `position` of epoch `epoch`'s permutation of `samples`.
DataCursor cursor_at(const TrainConfig& c, int64_t epoch, int64_t position, int64_t samples,
                     int replicas) {
  return {epoch, position, c.seed, samples, c.batchSize, replicas, true};
}

// The training loader's process shard and bad-image policy. Processes decode only their rows of
// each batch (streamed splits; mixup/cutmix pair rows across the whole batch, so they keep all).
void configure_loader(const LoopContext& ctx, const data::Dataset& ds, const BatchAugment& aug,
                      data::Loader& ld) {
  const DataParallel& dp = ctx.o.dp;
  if (ds.streamed() && dp.multi_process() && !aug.mixes())
    ld.set_shard(dp.rank * dp.local, dp.local, dp.replicas);
  ld.set_skip_bad(ds.streamed() && data::pipeline_options().skip_bad);
}

// --skip-bad-images: the epoch's replaced samples (summed over the processes), one line.
void skipped_line(const LoopContext& ctx, const data::Loader& ld, int epoch) {
  if (!data::pipeline_options().skip_bad) return;
  const data::Loader::Skipped sk = ld.skipped();
  int64_t total = sk.count;
  if (ctx.o.dp.multi_process())    // every rank of a group reaches this (the flag is in the
    total = static_cast<int64_t>(  // group's fingerprint)
        sum_over_processes({Tensor::from<double>(DType::kF64, {}, {double(sk.count)})}, ctx.o.dp)
            .at(0)
            .as_double(0));
  if (total == 0 || !ctx.o.log) return;
  *ctx.o.log << fmt::format(
      "epoch {}: skipped {} unreadable image{} (--skip-bad-images: each replaced by the next "
      "sample of the epoch's order){}\n",
      epoch, total, total > 1 ? "s" : "", sk.first.empty() ? "" : "; the first: " + sk.first);
}

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
  const int64_t batch = c.batchSize, spe = ctx.steps_per_epoch;
  const int k = ctx.stepper.accum(), reps = ctx.o.dp.replicas;
  const auto seed = static_cast<uint64_t>(c.seed);
  const int first_epoch = s.epoch + 1;
  for (int epoch = first_epoch; epoch <= c.epochs && ctx.stop_reason.empty(); ++epoch) {
    const auto t0 = Clock::now();
    ctx.epoch = epoch;
    const int64_t b0 = ctx.first_update = s.batch_in_epoch;
    double loss_sum = s.loss_sum, step_secs = 0, lr = 0;
    data::Dataset train_ds =
        epoch == first_epoch ? std::move(first) : epoch_set(ctx, base, epoch - 1);
    ctx.train_ds = &train_ds;
    // Every sample is trained once per epoch (PyTorch's drop_last=False): nb = ceil(N/B) batches,
    // the last one smaller; an update takes k of them, the last update perhaps fewer. Batches are
    // assembled on a worker thread while the step runs (Prefetcher); a mid-epoch resume starts
    // the loader at the data cursor's batch (all before it full: a mid-epoch save precedes the
    // last update), reading nothing before it.
    data::Loader train_ld(train_ds, batch, true, seed, *ctx.aug);
    configure_loader(ctx, train_ds, batch_aug, train_ld);
    const int64_t nb = train_ld.num_batches();
    data::Prefetcher pf(train_ld);
    pf.start_epoch(epoch - 1, b0 * k);
    data::Batch mb;
    int64_t samples = b0 * k * batch, run_samples = 0, correct = -1, counted = 0;
    // Sets s's position (update b of this epoch) and data cursor for a mid-epoch save.
    auto hold_at = [&](int64_t b) {
      ctx.stepper.sync(s);  // the backend's params / optimizer state into s for `last`
      s.batch_in_epoch = b;
      s.loss_sum = loss_sum;
      s.cursor = cursor_at(c, epoch - 1, b * k * batch, train_ds.size(), reps);
    };
    bool data_failed = false;  // the loader's error (an unreadable sample), not the step's
    for (auto& h : hooks) h->before_epoch(ctx);
    // Update u's micro-batches (batches u·k .. u·k + k-1, fewer at the epoch's end) into xs, ys;
    // returns its sample count. `step` is the 0-based update count it will be.
    auto gather = [&](int64_t u, int64_t step, std::vector<Tensor>& xs, std::vector<Tensor>& ys) {
      xs.clear();
      ys.clear();
      int64_t n = 0;
      for (int64_t j = u * k; j < std::min<int64_t>((u + 1) * k, nb); ++j) {
        try {
          if (!pf.next(mb)) fail("train", "loader ended early (batch {} of {})", j, nb);
        } catch (const Error&) {
          data_failed = true;
          throw;
        }
        if (batch_aug.active()) batch_aug.apply(epoch - 1, j, train_ld, mb);
        if (mb.valid % reps != 0) {  // data parallel: equal shards (drops < R samples)
          mb.valid -= mb.valid % reps;
          mb.x = first_rows(mb.x, mb.valid);
          mb.y = first_rows(mb.y, mb.valid);
        }
        n += mb.valid;
        ctx.task.micro_batch(step, j, mb.x, mb.y);
        xs.push_back(std::move(mb.x));
        ys.push_back(std::move(mb.y));
      }
      return n;
    };
    auto lr_of = [&](int64_t step) {
      double r = learning_rate(c, step, spe);
      for (auto& h : hooks) r = h->adjust_lr(ctx, r);
      return r;
    };
    // Update u done: the epoch's running loss, the step count, the hooks.
    auto finish = [&](int64_t u, double loss, double lr_u, double dt, int64_t n, int64_t correct_u,
                      int64_t counted_u) {
      step_secs += dt;
      // The epoch's train loss is the mean over its samples: Σ loss·n / Σ n.
      loss_sum += loss * static_cast<double>(n);
      samples += n;
      run_samples += n;
      ++s.step;
      if (correct_u >= 0) {
        correct = std::max<int64_t>(correct, 0) + correct_u;
        counted += counted_u;
      }
      StepEnd e{u, loss, lr_u, dt, n, loss_sum / static_cast<double>(samples), run_samples};
      e.correct = correct;
      e.counted = counted;
      for (auto& h : hooks) h->after_step(ctx, e);
    };
    // K steps per call (Stepper::steps, accum 1: update = batch): the full batches go K at a
    // time; the epoch's smaller tail batch runs alone (its own module).
    const int per_call = ctx.stepper.steps_per_call();
    const int64_t full_end = nb > 0 && train_ld.batch_rows(nb - 1) < batch ? nb - 1 : nb;
    std::vector<Tensor> xs, ys;
    for (int64_t b = b0; b < spe;) {
      const int64_t calls =
          per_call > 1 && b < full_end ? std::min<int64_t>(per_call, full_end - b) : 1;
      try {
        if (per_call > 1 && b < full_end) {
          std::vector<Tensor> cx, cy;
          std::vector<double> lrs;
          std::vector<int64_t> ns;
          for (int64_t i = 0; i < calls; ++i) {
            ns.push_back(gather(b + i, s.step + i, xs, ys));
            cx.push_back(std::move(xs.at(0)));
            cy.push_back(std::move(ys.at(0)));
            lrs.push_back(lr_of(s.step + i));
          }
          const auto ts = Clock::now();
          const std::vector<double> losses = ctx.stepper.steps(s, cx, cy, lrs, s.step + 1);
          const double dt = secs(ts) / static_cast<double>(calls);  // the call's time, per update
          for (int64_t i = 0; i < calls; ++i)
            finish(b + i, losses[i], lrs[i], dt, ns[i], ctx.stepper.last_correct(size_t(i)),
                   ctx.stepper.last_counted(size_t(i)));
          lr = lrs.back();
        } else {
          const int64_t n = gather(b, s.step, xs, ys);
          if (ctx.task.labels_need_params()) {  // DETR: matched to the current predictions
            ctx.stepper.sync(s);
            ctx.task.update_labels(s, xs, ys);
          }
          lr = lr_of(s.step);
          const auto ts = Clock::now();
          const double loss = ctx.stepper.step(s, xs, ys, lr, s.step + 1);
          finish(b, loss, lr, secs(ts), n, ctx.stepper.last_correct(), ctx.stepper.last_counted());
        }
      } catch (const Error&) {        // an unreadable sample: `last` at update b, then the error
        if (data_failed && b > b0) {  // (the batches gathered for this call were not trained)
          hold_at(b);
          for (auto& h : hooks) h->on_stop(ctx);
          if (ctx.o.log && !ctx.last.empty())
            *ctx.o.log << fmt::format(
                "saved {} at step {} (epoch {}, batch {}/{}) before the "
                "unreadable sample; rerun to resume\n",
                ctx.last, s.step, epoch, b, spe);
        }
        throw;
      }
      b += calls;
      if (const int64_t every = ctx.o.checkpoint_every_steps;
          every > 0 && b < spe && s.step / every != (s.step - calls) / every) {
        hold_at(b);  // a kill from here on loses at most `every` updates (+ one call's)
        for (auto& h : hooks) h->on_checkpoint(ctx);
      }
      if (ctx.stop_requested() && b < spe) {  // processes: all stop together
        hold_at(b);
        for (auto& h : hooks) h->on_stop(ctx);
        if (ctx.o.log)
          *ctx.o.log << fmt::format("interrupted at step {} (epoch {}, batch {}/{}); {}\n", s.step,
                                    epoch, b, spe,
                                    ctx.last.empty() ? "no run dir, nothing saved"
                                                     : "saved " + ctx.last + "; rerun to resume");
        res.interrupted = true;
        return;
      }
    }
    ctx.stepper.sync(s);  // evaluation and checkpoints read s.params / s.opt
    s.epoch = epoch;
    s.batch_in_epoch = 0;
    s.loss_sum = 0;
    s.cursor = cursor_at(c, epoch, 0, train_ds.size(), reps);
    skipped_line(ctx, train_ld, epoch);

    EpochMetrics m;
    m.epoch = epoch;
    m.step = s.step;
    m.lr = lr;
    m.train_loss = loss_sum / static_cast<double>(samples);
    m.samples = samples;
    const double run_steps = static_cast<double>(spe - b0);
    m.ms_per_step = run_steps > 0 ? 1e3 * step_secs / run_steps : 0;
    m.samples_per_s = step_secs > 0 ? static_cast<double>(run_samples) / step_secs : 0;
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
