// Training setup (see trainer.h): the task, the modules, the initial or resumed state and the run
// dir's record; the epoch/update loop and its hooks are in loop.cpp and hooks.cpp. Module inputs
// and outputs are bound by the manifests' roles (docs/abi.md), so nothing here hard-codes the
// optimizer's state layout.
#include "train/trainer.h"

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/error.h"
#include "core/file_check.h"
#include "data/loader.h"
#include "layers/param_table.h"
#include "losses/loss.h"
#include "tasks/prior_bias.h"
#include "tasks/task.h"
#include "train/averaging.h"
#include "train/batch_augment.h"
#include "train/checkpoint.h"
#include "train/checkpoint_policy.h"
#include "train/hooks.h"
#include "train/init_from.h"
#include "train/stepper.h"
#include "train/train_res.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;

// Every split is checked now, not after an epoch of training (a test split of another image size
// failed only at the first evaluation, naming a module argument).
void check_split(const data::Dataset& d, const char* name, const ParamTable& table,
                 const tasks::Task& task) {
  const Shape& x = d.x.shape();
  const Shape sample = x.size() < 2 ? Shape{} : task.input_sample(Shape(x.begin() + 1, x.end()));
  if (sample.empty() || sample != table.input)
    fail("train", "{} split sample shape does not match the net's input (got {}, expected {})",
         name, d.x.type_str(), "Nx" + shape_str(table.input));
  if (d.y.rank() < 1 || d.y.shape()[0] != d.x.shape()[0])
    fail("train", "{} split has {} labels for {} samples", name,
         d.y.rank() < 1 ? 0 : d.y.shape()[0], d.x.shape()[0]);
}

// A streamed training split (data/sample_source.h) reaches the step through the Loader only;
// what reads the whole split at once is refused, naming the way back to the in-RAM path.
void refuse_for_stream(const tasks::Task& task) {
  if (task.kind() != tasks::TaskKind::classification)
    fail("train",
         "the training split is streamed (its decoded images are over the data memory budget) "
         "and the {} task needs it in RAM: raise --data-memory MB",
         tasks::task_name(task.kind()));
}

// A resumed data cursor (checkpoint.h) must describe this run's permutation: the same seed and,
// mid-epoch, the same epoch, training-set size and batch, at the update batch_in_epoch says (an
// older checkpoint without a cursor resumes from batch_in_epoch alone).
void check_cursor(const TrainState& s, const TrainConfig& c, int64_t samples, int k,
                  const std::string& last) {
  const DataCursor& d = s.cursor;
  if (!d.present) return;
  if (d.epoch != s.epoch || d.position != s.batch_in_epoch * k * c.batchSize)
    fail("train", "{}: data cursor '{}' disagrees with epoch {} update {} of the checkpoint", last,
         cursor_text(d), s.epoch, s.batch_in_epoch);
  if (d.position == 0) return;  // an epoch boundary: any data, seed or batch may follow
  if (d.samples != samples || d.seed != c.seed || d.batch != c.batchSize)
    fail("train",
         "{}: saved mid-epoch at sample {} of a permutation of {} samples (seed {}, batch {}); "
         "this run's epoch has {} samples (seed {}, batch {}): the data changed, so the rest of "
         "that epoch is unknown (restore the data, or resume from an epoch-end checkpoint)",
         last, d.position, d.samples, d.seed, d.batch, samples, c.seed, c.batchSize);
}

// Resumes from RUN/last.safetensors when it exists (and the weight averages beside it), then
// writes config.json and the task's files. Returns the best score best.json holds.
double open_run_dir(const SpecFile& spec, const TrainConfig& c, const ParamTable& table,
                    const TrainOptions& o, const tasks::Task& task, Averages& averages,
                    TrainState& s) {
  const fs::path dir = o.run_dir;
  ensure_writable_dir("train", dir.string(), "run dir");
  const std::string last = (dir / "last.safetensors").string();
  if (fs::exists(last)) {
    load_checkpoint(last, table, s);
    // Format 1 summed per-update mean losses; every update it made mid-epoch was full.
    if (s.format < 2) s.loss_sum *= static_cast<double>(c.batchSize) * c.gradAccumSteps;
    if (o.log)
      *o.log << fmt::format("resuming {} at epoch {} batch {} (step {})\n", last, s.epoch + 1,
                            s.batch_in_epoch, s.step);
    if (averages.any())  // EMA / SWA / SWAG continue from where `last` stopped
      if (std::string why = averages.load_state((dir / "averages.safetensors").string(), s);
          !why.empty() && o.log)
        *o.log << why << "\n";
  }
  const double best = read_best_score(o.run_dir);
  nlohmann::ordered_json cfg;
  SpecFile resolved = spec;
  resolved.train = c;
  cfg["spec"] = nlohmann::ordered_json::parse(dump_spec(resolved));
  cfg["backend"] = o.backend;
  write_file_atomic((dir / "config.json").string(),
                    !o.run || o.run->config_json.empty() ? cfg.dump(2) + "\n" : o.run->config_json);
  task.save_run_files(o.run_dir);
  return best;
}

// Updates per backend call: --steps-per-call, else kIreeStepsPerCall on iree, else 1. What
// needs the parameters between two updates of one call is refused by name.
int steps_per_call(const TrainOptions& o, const TrainConfig& c, const tasks::Task& task) {
  if (o.steps_per_call < 0 || o.steps_per_call > 4096)
    fail("train", "steps per call must be in 1..4096 (got {})", o.steps_per_call);
  int k = o.steps_per_call > 0 ? o.steps_per_call : o.backend == "iree" ? kIreeStepsPerCall : 1;
  if (k > 1 && o.steps_per_call == 0 &&
      (c.gradAccumSteps > 1 || o.dp.replicas > 1 || o.dp.multi_process()))
    fail("train",
         "--backend iree runs {} steps per call, which gradAccumSteps > 1 and data parallel "
         "do not support (got gradAccumSteps {}, {} replicas); pass --steps-per-call 1 (one "
         "process per step) or use --backend cpu",
         k, c.gradAccumSteps, o.dp.replicas);
  if (k > 1 && task.labels_need_params())
    fail("train",
         "the {} task matches labels to the current parameters before every update, which a "
         "{}-steps-per-call run cannot (use --steps-per-call 1)",
         tasks::task_name(task.kind()), k);
  return k;
}

}  // namespace

std::vector<std::string> unsupported_settings(const TrainConfig& c) {
  std::vector<std::string> out;
  if (!c.runningBN) out.emplace_back("runningBN = false");
  return out;
}

TrainResult run_training(const SpecFile& spec, const Splits& data, const TrainOptions& o) {
  const TrainConfig c = spec.train.value_or(TrainConfig{});
  validate(c);
  const NetSpec& net = spec.net;
  const ParamTable table = o.table ? *o.table : build_param_table(net);
  const RankSplit split{o.dp.comm, o.dp.rank};
  // The task checks its data and fields before anything is compiled.
  auto task = tasks::make_task(tasks::task_kind(net, c),
                               tasks::TaskEnv{net, table, c, data, split, nullptr, o.log});
  check_split(data.train, "training", table, *task);
  if (data.test.x.rank() > 0) check_split(data.test, "test", table, *task);
  // Fields whose machinery does not exist yet are refused, never silently ignored.
  if (auto u = unsupported_settings(c); !u.empty())
    fail("train", "{} {} not supported by the trainer yet (set {} to the default)",
         fmt::join(u, ", "), u.size() > 1 ? "are" : "is", u.size() > 1 ? "them" : "it");
  if (c.useTTA && !c.augment)
    fail("train", "useTTA averages views of the training augmentation: set augment = true");
  task->check(data.train);
  check_monitor(c, *task);  // before the run dir is written: a refused run leaves none
  if (data.train.streamed()) refuse_for_stream(*task);

  // trainRes: the train step runs on trainRes x trainRes images, evaluation at the net's size.
  const std::optional<TrainResolution> tres = train_resolution(net, table, c, data.train);
  const NetSpec& train_net = tres ? tres->net : net;
  const ParamTable& train_table = tres ? tres->table : table;
  const data::Dataset& train_src = tres ? tres->train : data.train;
  if (tres && o.log)
    *o.log << fmt::format("trainRes: training at {}x{}, evaluating at {}x{}\n", c.trainRes,
                          c.trainRes, net.inputHeight, net.inputWidth);

  exec::BackendOptions bo = o.backend_options;
  if (!o.dp.multi_process()) bo.devices = std::max(bo.devices, o.dp.replicas);  // xla: R devices
  auto backend = exec::make_backend(o.backend, bo);
  const int per_call = steps_per_call(o, c, *task);
  // The modules' batch in net rows (nerf: rays x points per ray); the loop counts samples.
  TrainConfig rows_c = c;
  rows_c.batchSize = static_cast<int>(c.batchSize * losses::rows_per_sample(c));
  Stepper stepper(train_net, rows_c, *backend, &train_table, o.dp, per_call);
  // iree: each call is a process; evaluation (many small calls) runs on the cpu backend from the
  // same parameters.
  std::unique_ptr<exec::Backend> cpu = o.backend == "iree" ? exec::make_backend("cpu") : nullptr;
  exec::Backend& eval_backend = cpu ? *cpu : *backend;
  if (o.log && per_call > 1)
    *o.log << fmt::format(
        "{}: {} train steps per call (K-step module); evaluation on the {} "
        "backend\n",
        o.backend, per_call, eval_backend.name());
  Evaluator evaluator(net, rows_c.batchSize, eval_backend, &table);
  task->attach(evaluator);
  Averages averages(train_net, c, eval_backend, train_table, evaluator);  // EMA / SWA / SWAG
  if (per_call > 1 && averages.per_step())
    fail("train",
         "useEMA updates the average after every step, which a {}-steps-per-call run does not "
         "see (use --steps-per-call 1, or useSWA)",
         per_call);
  averages.set_split(split);  // processes: each evaluates its share of the batches
  std::vector<Tensor> init = init_params(table, c.init, static_cast<uint64_t>(c.seed));
  if (std::string said = apply_prior_bias(net, table, c, task->prior_data(train_src), init);
      o.log && !said.empty())
    *o.log << said << "\n";
  TrainState s = make_state(std::move(init), stepper.state_manifest(), evaluator.manifest());
  check_freeze(c, table);
  if (!c.bootstrapRanges.empty() && c.bootstrapBackbone.empty())
    fail("train", "bootstrapRanges '{}' needs bootstrapBackbone (the file to load from)",
         c.bootstrapRanges);
  if (!c.bootstrapBackbone.empty())
    load_init_weights(c.bootstrapBackbone, table, s, c.bootstrapRanges, o.log);
  if (o.run && !o.run->init_from.empty()) load_init_weights(o.run->init_from, table, s, "", o.log);
  const double best = o.run_dir.empty() ? -std::numeric_limits<double>::infinity()
                                        : open_run_dir(spec, c, table, o, *task, averages, s);
  TrainResult res;
  if (std::string line = task->start_line(); !line.empty() && o.log) *o.log << line << "\n";
  res.unigram_bpc = task->unigram_bpc();
  task->configure_averages(averages);

  data::Augment aug =
      c.augment && task->loader_augments() ? data::Augment::standard() : data::Augment{};
  if (c.randomResizedCrop) {  // torchvision's RandomResizedCrop + RandomHorizontalFlip
    if (!task->loader_augments())
      fail("train", "randomResizedCrop is for image classification (this task augments its own "
           "samples)");
    aug.rrc = aug.flip = true;
    aug.crop = false;
  }
  aug.rand_augment = c.randAugment;  // RandAugment / AutoAugment after crop/flip (ui8 images)
  aug.auto_augment = c.autoAugment;
  aug.ra = {c.randAugmentN,          c.randAugmentM,        c.randAugmentMstd, 0.5,
            c.randAugmentIncreasing, c.randAugmentGeometric};
  const BatchAugment batch_aug(c, table, train_src);  // erasing, mixup/cutmix, soft targets
  if (c.augment && train_src.x.shape().size() != 4)
    fail("train", "augment needs image data [N, C, H, W] (got {})", train_src.x.type_str());

  const std::string last =
      o.run_dir.empty() ? "" : (fs::path(o.run_dir) / "last.safetensors").string();
  LoopContext ctx{c, net, table, o, *task, stepper, evaluator, s, 0, 0, 0, nullptr, &aug, last, {}};
  data::Dataset first = epoch_set(ctx, train_src, s.epoch);
  const int k = stepper.accum();
  const int64_t nb = data::Loader(first, c.batchSize, true, 0).num_batches();
  ctx.steps_per_epoch = (nb + k - 1) / k;
  if (s.batch_in_epoch >= ctx.steps_per_epoch)
    fail("train",
         "{}: checkpoint is at update {} of an epoch of {} updates (different batch size or "
         "dataset?)",
         ctx.last, s.batch_in_epoch, ctx.steps_per_epoch);
  check_cursor(s, c, first.size(), k, ctx.last);
  if (s.epoch >= c.epochs && o.log)
    *o.log << fmt::format("nothing to do: {} already has {} of {} epochs\n", ctx.last, s.epoch,
                          c.epochs);
  CheckpointPolicy policy(c);  // monitor, top-k, early stop, plateau: continues from `last`
  policy.restore(s.policy, ctx.last);
  // The hooks in call order. Rows past the checkpoint are dropped only now (the run-dir hook),
  // after every check of the resume point.
  std::vector<std::unique_ptr<Hook>> hooks;
  hooks.push_back(make_divergence_hook());
  hooks.push_back(make_progress_hook());
  hooks.push_back(make_evaluation_hook(best));
  hooks.push_back(make_checkpoint_policy_hook(policy));  // before SWA's constant lr
  hooks.push_back(make_averages_hook(averages));
  if (c.useTTA) hooks.push_back(make_tta_hook());
  hooks.push_back(make_run_dir_hook(ctx, averages));
  if (auto tb = make_tensorboard_hook(ctx)) hooks.push_back(std::move(tb));
  broadcast_state(s, o.dp);  // processes: every rank resumes from rank 0's checkpoint
  if (o.dp.multi_process()) policy.restore(s.policy, ctx.last);
  if (const int stopped = policy.state().stopped_epoch; stopped > 0 && s.epoch < c.epochs) {
    ctx.stop_reason = fmt::format("early-stopped after epoch {}", stopped);
    if (o.log)
      *o.log << fmt::format("nothing to do: {} was early-stopped after epoch {}\n", ctx.last,
                            stopped);
  }
  const int reps = o.dp.replicas;
  const int64_t tail = first.size() % c.batchSize;
  if (reps > 1 && tail % reps != 0 && tail < reps)
    fail("train",
         "the epoch's last batch has {} samples, fewer than the {} replicas (choose a batchSize "
         "that leaves a larger remainder of the {} samples, or use --limit)",
         tail, reps, first.size());
  const char* where = o.dp.multi_process() ? " (processes)"
                      : o.backend == "xla" ? " (devices)"
                                           : " (threads)";
  if (reps > 1 && o.log)
    *o.log << fmt::format("data parallel: {} replicas{}, {} samples each per step{}\n", reps, where,
                          c.batchSize / reps, c.syncBN ? ", sync-BN" : "");
  res.first_epoch = s.epoch + 1;
  res.first_batch = s.batch_in_epoch;
  run_loop(ctx, hooks, train_src, std::move(first), batch_aug, res);
  res.steps = s.step;
  res.params = s.params;
  for (auto it = res.epochs.rbegin(); it != res.epochs.rend() && res.final_line.empty(); ++it)
    if (it->evaluated) res.final_line = task->final_text(*it, o.eval_split);
  return res;
}

}  // namespace netspec::train
