#include "train/epoch_run.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "data/sample_source.h"
#include "train/batch_augment.h"
#include "train/data_parallel.h"

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

// Every sample is trained once per epoch (PyTorch's drop_last=False): nb = ceil(N/B) batches, the
// last one smaller; an update takes k of them, the last update perhaps fewer. Batches are
// assembled on a worker thread while the step runs (Prefetcher); a mid-epoch resume starts the
// loader at the data cursor's batch (all before it full: a mid-epoch save precedes the last
// update).
EpochRun::EpochRun(LoopContext& ctx, const std::vector<std::unique_ptr<Hook>>& hooks,
                   data::Dataset train_ds, const BatchAugment& batch_aug, int epoch)
    : ctx_(ctx),
      hooks_(hooks),
      batch_aug_(batch_aug),
      epoch_(epoch),
      k_(ctx.stepper.accum()),
      batch_(ctx.c.batchSize),
      b0_(ctx.s.batch_in_epoch),
      ds_(std::move(train_ds)),
      ld_(ds_, batch_, true, static_cast<uint64_t>(ctx.c.seed), *ctx.aug),
      pf_(ld_),
      b_(b0_),
      loss_sum_(ctx.s.loss_sum),
      samples_(b0_ * k_ * batch_) {
  ctx.epoch = epoch;
  ctx.first_update = b0_;
  ctx.train_ds = &ds_;
  configure_loader(ctx, ds_, batch_aug, ld_);
  nb_ = ld_.num_batches();
  // K steps per call: the full batches go K at a time; the smaller tail batch runs alone.
  full_end_ = nb_ > 0 && ld_.batch_rows(nb_ - 1) < batch_ ? nb_ - 1 : nb_;
  pf_.start_epoch(epoch - 1, b0_ * k_);
}

void EpochRun::hold() {
  TrainState& s = ctx_.s;
  ctx_.stepper.sync(s);  // the backend's params / optimizer state into s for `last`
  s.batch_in_epoch = b_;
  s.loss_sum = loss_sum_;
  s.cursor = cursor_at(ctx_.c, epoch_ - 1, b_ * k_ * batch_, ds_.size(), ctx_.o.dp.replicas);
}

// Update u's micro-batches (batches u·k .. u·k + k-1, fewer at the epoch's end). `step` is the
// 0-based update count it will be.
int64_t EpochRun::gather(int64_t u, int64_t step) {
  xs_.clear();
  ys_.clear();
  const int reps = ctx_.o.dp.replicas;
  int64_t n = 0;
  for (int64_t j = u * k_; j < std::min<int64_t>((u + 1) * k_, nb_); ++j) {
    try {
      if (!pf_.next(mb_)) fail("train", "loader ended early (batch {} of {})", j, nb_);
    } catch (const Error&) {
      data_failed_ = true;
      throw;
    }
    if (batch_aug_.active()) batch_aug_.apply(epoch_ - 1, j, ld_, mb_);
    if (mb_.valid % reps != 0) {  // data parallel: equal shards (drops < R samples)
      mb_.valid -= mb_.valid % reps;
      mb_.x = first_rows(mb_.x, mb_.valid);
      mb_.y = first_rows(mb_.y, mb_.valid);
    }
    n += mb_.valid;
    ctx_.task.micro_batch(step, j, mb_.x, mb_.y);
    xs_.push_back(std::move(mb_.x));
    ys_.push_back(std::move(mb_.y));
  }
  return n;
}

double EpochRun::lr_of(int64_t step) const {
  double r = learning_rate(ctx_.c, step, ctx_.steps_per_epoch);
  for (auto& h : hooks_) r = h->adjust_lr(ctx_, r);
  return r;
}

// Update u done: the epoch's running loss and accuracy, the step count, the hooks.
void EpochRun::finished(int64_t u, double loss, double lr, double dt, int64_t n, int64_t correct,
                        int64_t counted) {
  step_secs_ += dt;
  // The epoch's train loss is the mean over its samples: Σ loss·n / Σ n.
  loss_sum_ += loss * static_cast<double>(n);
  samples_ += n;
  run_samples_ += n;
  ++ctx_.s.step;
  if (correct >= 0) {
    correct_ = std::max<int64_t>(correct_, 0) + correct;
    counted_ += counted;
  }
  StepEnd e{u, loss, lr, dt, n, loss_sum_ / static_cast<double>(samples_), run_samples_};
  e.correct = correct_;
  e.counted = counted_;
  for (auto& h : hooks_) h->after_step(ctx_, e);
}

void EpochRun::step_k(int64_t calls) {
  TrainState& s = ctx_.s;
  std::vector<Tensor> cx, cy;
  std::vector<double> lrs;
  std::vector<int64_t> ns;
  for (int64_t i = 0; i < calls; ++i) {  // accum 1 under K steps: an update is one batch
    ns.push_back(gather(b_ + i, s.step + i));
    cx.push_back(std::move(xs_.at(0)));
    cy.push_back(std::move(ys_.at(0)));
    lrs.push_back(lr_of(s.step + i));
  }
  const auto ts = Clock::now();
  const std::vector<double> losses = ctx_.stepper.steps(s, cx, cy, lrs, s.step + 1);
  const double dt = secs(ts) / static_cast<double>(calls);  // the call's time, per update
  for (int64_t i = 0; i < calls; ++i)
    finished(b_ + i, losses[i], lrs[i], dt, ns[i], ctx_.stepper.last_correct(size_t(i)),
             ctx_.stepper.last_counted(size_t(i)));
  lr_ = lrs.back();
}

void EpochRun::step_one() {
  TrainState& s = ctx_.s;
  const int64_t n = gather(b_, s.step);
  if (ctx_.task.labels_need_params()) {  // DETR: matched to the current predictions
    ctx_.stepper.sync(s);
    ctx_.task.update_labels(s, xs_, ys_);
  }
  lr_ = lr_of(s.step);
  const auto ts = Clock::now();
  const double loss = ctx_.stepper.step(s, xs_, ys_, lr_, s.step + 1);
  finished(b_, loss, lr_, secs(ts), n, ctx_.stepper.last_correct(), ctx_.stepper.last_counted());
}

int64_t EpochRun::advance() {
  const int per_call = ctx_.stepper.steps_per_call();
  const bool k_steps = per_call > 1 && b_ < full_end_;
  const int64_t calls = k_steps ? std::min<int64_t>(per_call, full_end_ - b_) : 1;
  try {
    if (k_steps)
      step_k(calls);
    else
      step_one();
  } catch (const Error&) {           // an unreadable sample: `last` at update b, then the error
    if (data_failed_ && b_ > b0_) {  // (the batches gathered for this call were not trained)
      hold();
      for (auto& h : hooks_) h->on_stop(ctx_);
      if (ctx_.o.log && !ctx_.last.empty())
        *ctx_.o.log << fmt::format(
            "saved {} at step {} (epoch {}, batch {}/{}) before the unreadable sample; rerun to "
            "resume\n",
            ctx_.last, ctx_.s.step, epoch_, b_, ctx_.steps_per_epoch);
    }
    throw;
  }
  b_ += calls;
  return calls;
}

EpochMetrics EpochRun::finish() {
  TrainState& s = ctx_.s;
  ctx_.stepper.sync(s);  // evaluation and checkpoints read s.params / s.opt
  s.epoch = epoch_;
  s.batch_in_epoch = 0;
  s.loss_sum = 0;
  s.cursor = cursor_at(ctx_.c, epoch_, 0, ds_.size(), ctx_.o.dp.replicas);
  skipped_line(ctx_, ld_, epoch_);
  EpochMetrics m;
  m.epoch = epoch_;
  m.step = s.step;
  m.lr = lr_;
  m.train_loss = loss_sum_ / static_cast<double>(samples_);
  m.samples = samples_;
  const double run_steps = static_cast<double>(ctx_.steps_per_epoch - b0_);
  m.ms_per_step = run_steps > 0 ? 1e3 * step_secs_ / run_steps : 0;
  m.samples_per_s = step_secs_ > 0 ? static_cast<double>(run_samples_) / step_secs_ : 0;
  return m;
}

}  // namespace netspec::train
