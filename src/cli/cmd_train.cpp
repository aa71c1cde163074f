// `netspec train NET|FILE.json [--dataset NAME] [--data DIR] [--epochs N] [--batch B] [--lr X]
// [--optimizer NAME] [--schedule NAME] [--config FILE.json|RUN/config.json] [--run-dir DIR]
// [--resume|--overwrite] [--seed S] [--backend cpu|ref|xla] [--set field=value]... [--limit N]
// [--val-split F] [--init-from FILE|RUN] [--classes N] [--freeze PREFIX...]`. The TrainConfig is
// the spec's "train" object, then --config, then the flags, then each --set in order, each
// validated as it is applied (train_flags.h); the run dir (default runs/<net>-<time>) is checked
// against it before anything is written (run_dir.h). SIGINT/SIGTERM: the step finishes, `last` is
// saved, exit 130.
// Data parallel (docs/distributed.md): --replicas R runs R replica threads (xla: R devices);
// WORLD_SIZE > 1 in the environment (torchrun convention, or `netspec launch`) makes this process
// R replicas of a group: it joins the others (refusing a different config or net) and only rank 0
// prints and writes the run dir. xla across processes is refused (refuse_xla_across_processes).
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/pipeline_flags.h"
#include "cli/train_flags.h"
#include "cli/train_run.h"
#include "core/error.h"
#include "data/datasets.h"
#include "data/sample_source.h"
#include "dist/process_group.h"
#include "layers/param_table.h"
#include "report/console_log.h"
#include "report/progress.h"
#include "spec/param_table.h"
#include "spec/summary.h"
#include "spec/zoo.h"
#include "train/checkpoint_peek.h"
#include "train/config.h"
#include "train/run_dir.h"
#include "train/signals.h"
#include "train/trainer.h"

namespace netspec::cli {

namespace {

struct TrainOpts {
  std::string net, data, config, run_dir, backend = "cpu", limit;
  std::string checkpoint_every_steps;     // TrainOptions::checkpoint_every_steps
  exec::BackendOptions engine;
  std::vector<std::string> sets;
  int replicas = 1;
  int steps_per_call = 0;  // 0: the backend's default (iree: several)
  bool resume = false, overwrite = false;
  ConfigFlags flags;
  PipelineFlags pipeline;  // --data-memory, --data-threads, ... (pipeline_flags.h)
  TrainRunArgs run;  // --val-split, --init-from, --classes, --freeze (train_run.h)
};

// The run's record: a run's config.json (--config RUN/config.json, or --resume --run-dir RUN),
// or the net's spec, with --config, the flags and each --set applied and validated.
train::RunRecord resolve_record(TrainOpts& o, CLI::App* cmd) {
  if (o.resume && o.overwrite) fail("train", "--resume and --overwrite exclude each other");
  if (cmd->count("--steps-per-call") && (o.steps_per_call < 1 || o.steps_per_call > 4096))
    fail("train", "--steps-per-call must be in 1..4096 (got {})", o.steps_per_call);
  // `--resume --run-dir RUN` alone: the net and config come from RUN/config.json.
  if (o.resume && o.net.empty() && o.config.empty() && !o.run_dir.empty()) {
    const auto stored = std::filesystem::path(o.run_dir) / "config.json";
    if (!std::filesystem::exists(stored))
      fail("train", "--resume: {} has no config.json (not a netspec run dir?)", o.run_dir);
    o.config = stored.string();
  }
  // The record: a run's config.json (--config RUN/config.json), or the net's spec.
  train::RunRecord rec;
  const bool from_run = !o.config.empty() && train::is_run_record(o.config);
  if (from_run) {
    if (!o.net.empty())
      fail("train", "give either NET or --config RUN/config.json (got both: '{}', '{}')", o.net,
           o.config);
    rec = train::load_run_record(o.config);
  } else {
    if (o.net.empty())
      fail("train",
           "a net is needed: a zoo name, a spec .json, --config RUN/config.json, or --resume "
           "--run-dir RUN");
    rec.spec = resolve_net(o.net);
  }
  TrainConfig c = rec.spec.train.value_or(TrainConfig{});
  try {
    validate(c);
  } catch (const Error& e) {
    fail("train", "{}: {}", from_run ? o.config : o.net, e.what());
  }
  if (!o.config.empty() && !from_run) {
    train::apply_config_file(c, o.config);
    try {
      validate(c);
    } catch (const Error& e) {
      fail("train", "--config {}: {}", o.config, e.what());
    }
  }
  // Cross-field checks wait until every flag and --set is in (--epochs 1 --set warmupEpochs=0).
  PendingCheck pending;
  o.flags.apply(c, "train", &pending);
  apply_sets(c, o.sets, "train", &pending);
  check_applied(c, "train", pending);
  rec.spec.train = c;
  if (!o.data.empty()) rec.data = std::filesystem::absolute(o.data).string();
  if (cmd->count("--limit"))
    rec.limit = static_cast<int64_t>(
        number_flag("train", "--limit", o.limit, 1, 9007199254740992.0));  // 2^53: exact
  apply_train_run_args(cmd, o.run, rec);
  if (!from_run && !o.resume) size_head_from_data(rec, std::cout);
  if (o.replicas < 1 || o.replicas > exec::kMaxReplicas)
    fail("train", "--replicas must be in 1..{} (got {})", exec::kMaxReplicas, o.replicas);
  rec.backend = o.backend;
  rec.replicas = o.replicas;
  rec.command = command_line();
  rec.version = train::netspec_version();
  return rec;
}

// RUN/train.log's line between two runs' text: when and how the run was continued.
std::string resume_separator(const std::string& command) {
  const std::time_t now = std::time(nullptr);
  char when[32] = {};
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  return fmt::format("----- {}: {} -----", when, command);
}

// Takes the run dir (lock, resume check), joins the process group, loads the data and trains.
// What the console shows is kept in RUN/train.log (report/console_log.h).
void train_logged(TrainOpts& o, CLI::App* cmd, report::ConsoleLog& console) {
  std::ostream& out = console.stream();
  train::RunRecord rec = resolve_record(o, cmd);
  o.pipeline.apply(cmd, "train");
  TrainConfig c = *rec.spec.train;
  const auto env = dist::dist_env_from_environment();
  const bool rank0 = !env || env->world <= 1 || env->rank == 0;
  std::string run_dir = o.run_dir.empty()
                            ? train::default_run_dir(rec.spec.net.name, rec.spec.net.buildTag)
                            : o.run_dir;
  train::NewRunDirCleanup cleanup(rank0 ? run_dir : "");
  std::optional<train::RunDirLock> lock;  // one trainer per run dir, held to the end
  std::string nothing_to_do;              // rank 0's line for a finished run
  if (rank0) {
    try {
      lock.emplace(run_dir, cleanup.fresh());
    } catch (const Error&) {
      cleanup.disarm();  // the files there are the holder's
      throw;
    }
    const auto mode = o.overwrite ? train::RunDirMode::kOverwrite
                      : o.resume  ? train::RunDirMode::kResume
                                  : train::RunDirMode::kCheck;
    rec = train::prepare_run_dir(run_dir, rec, mode, o.flags.given("--epochs"), &out);
    // A finished run: one line, before the data is loaded or the config printed (a process
    // group's ranks hear of it from rank 0 once they have joined, below).
    const std::string last = (std::filesystem::path(run_dir) / "last.safetensors").string();
    const std::optional<int> done = train::checkpoint_epochs(last);
    if (done && *done >= rec.spec.train->epochs)
      nothing_to_do = fmt::format(
          "nothing to do: {} already has {} of {} epochs (raise --epochs to train more)\n", last,
          *done, rec.spec.train->epochs);
    if (!nothing_to_do.empty() && (!env || env->world <= 1)) {
      std::cout << nothing_to_do;
      return;
    }
    if (nothing_to_do.empty()) {
      console.attach((std::filesystem::path(run_dir) / "train.log").string(),
                     resume_separator(rec.command));
      out << "run dir: " << run_dir << "\n" << std::flush;
    }
  }
  c = *rec.spec.train;
  SpecFile spec = rec.spec;
  // A process group (WORLD_SIZE > 1): join before loading data, so a mismatch stops at once.
  std::unique_ptr<dist::ProcessGroup> group;
  train::TrainOptions to;
  to.dp.replicas = o.replicas;
  if (env && env->world > 1) {
    if (o.backend == "xla") refuse_xla_across_processes("train", env->world);
    if (static_cast<int64_t>(env->world) * o.replicas > exec::kMaxReplicas)
      fail("train", "WORLD_SIZE {} x --replicas {} is more than {} replicas", env->world,
           o.replicas, exec::kMaxReplicas);
    nlohmann::ordered_json fp;
    fp["spec"] = nlohmann::ordered_json::parse(dump_spec(spec));
    fp["backend"] = o.backend;
    fp["limit"] = rec.limit;
    fp["world"] = env->world;
    fp["replicas"] = o.replicas;
    fp["skip_bad_images"] = data::pipeline_options().skip_bad;  // one policy for every rank
    group = dist::ProcessGroup::join(*env, fp.dump());
    // Rank 0 found the run finished: every rank ends here, before loading any data.
    const Tensor finished =
        Tensor::from<double>(DType::kF64, {}, {nothing_to_do.empty() ? 0.0 : 1.0});
    const auto any = group->comm().sum_all(env->rank, {finished});
    if (!any) fail("train", "the process group's communicator has no sum all_reduce");
    if (any->at(0).as_double(0) > 0) {
      std::cout << nothing_to_do;  // "" on the other ranks
      return;
    }
    // --replicas R: R replica threads in each process (WORLD_SIZE · R replicas in all).
    to.dp = {env->world * o.replicas, &group->comm(), env->rank, o.replicas};
  }
  ParamTable table = build_param_table(spec.net);
  data::Dataset held_out_test;  // --val-split: the test split, reported once at the end
  train::Splits data = load_train_data(rec, table, &held_out_test);
  const bool val = rec.val_split > 0;
  if (rank0 && !data.pipeline.empty()) std::cout << data.pipeline << "\n";

  if (rank0) {
    out << fmt::format("train {} on {}: {} train / {} {} samples{}, backend {}\n", spec.net.name,
                       enum_name(c.dataset), data.train.size(), data.test.size(),
                       val ? "validation" : "test",
                       val ? fmt::format(" ({} test)", held_out_test.size()) : "", o.backend);
    out << train::format_config(c) << format_summary(spec.net, table, c.batchSize)
        << trainable_line(table, c) << bf16_line(c, o.backend) << std::flush;
  }
  train::install_stop_handlers();
  to.run_dir = rank0 ? run_dir : "";  // rank 0 writes; the others take its state
  to.run = std::make_shared<train::TrainOptions::Run>(
      train::TrainOptions::Run{train::run_record_json(rec), rec.init_from});
  if (rank0) train::save_class_names(run_dir, data.class_names);
  to.backend = o.backend;
  to.backend_options = o.engine;
  to.steps_per_call = o.steps_per_call;
  to.log = rank0 ? &out : nullptr;
  to.tty = report::is_terminal(STDOUT_FILENO);
  to.table = &table;
  to.eval_split = val ? "validation" : "test";
  if (cmd->count("--checkpoint-every-steps"))
    to.checkpoint_every_steps = static_cast<int64_t>(
        number_flag("train", "--checkpoint-every-steps", o.checkpoint_every_steps, 0, 1e15));
  train::TrainResult r = train::run_training(spec, data, to);
  if (r.interrupted) {
    if (rank0) out << "stopped by signal\n" << std::flush;
    std::exit(130);
  }
  if (!rank0) return;
  if (!r.final_line.empty()) out << r.final_line << "\n";  // the task's closing line
  if (!val) return;
  data::Splits held_out;  // the test split, under the run's class names
  held_out.test = std::move(held_out_test);
  held_out.class_names = data.class_names;
  report_held_out_test(run_dir, rec, table, held_out, o.backend, o.engine, out);
}

// train_logged, with a fatal error's message (main() prints it on stderr and exits 2; a
// divergence is one) also kept at the end of RUN/train.log.
void run_train(TrainOpts& o, CLI::App* cmd) {
  report::ConsoleLog console(std::cout);
  try {
    train_logged(o, cmd, console);
  } catch (const Error& e) {
    console.record(e.what());
    throw;
  } catch (const std::bad_alloc&) {
    console.record("netspec train: out of memory (lower --batch or --limit, or use a smaller net)");
    throw;
  } catch (const std::exception& e) {
    console.record(fmt::format("netspec: internal error: {}", e.what()));
    throw;
  }
}

}  // namespace

void register_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOpts>();
  CLI::App* cmd =
      app.add_subcommand("train", "Train a network on a dataset (--backend cpu, ref or xla)");
  cmd->add_option("net", o->net,
                  "zoo net name or a spec .json file (optional with --config RUN/config.json)");
  o->flags.add_dataset(cmd, o->data,
                       "dataset directory (default: the Debian package's); for text, a UTF-8 file");
  o->flags.add(cmd, "--epochs", "epochs", "passes over the training set (default: the spec's)");
  o->flags.add(cmd, "--batch", "batchSize", "batch size (default: the spec's)");
  o->flags.add(cmd, "--lr", "learningRate", "peak learning rate (default: the spec's)");
  o->flags.add(cmd, "--optimizer", "optimizer",
               "sgd | adam | adamw | rmsprop | lamb (default: the spec's; adamw = adam with "
               "weightDecay 0.01 unless set)");
  o->flags.add(cmd, "--schedule", "schedule",
               "constant | cosine | exponential | plateau (default: the spec's; plateau: "
               "plateau* fields, docs/training.md)");
  // The checkpoint policy (train/checkpoint_policy.h), each a TrainConfig field.
  o->flags.add(cmd, "--monitor", "monitor",
               "metric that best, --save-top-k, --early-stop and plateau follow: train_loss or a "
               "val_* column of metrics.csv (default: the task's score)");
  o->flags.add(cmd, "--mode", "monitorMode", "min | max | auto (auto: min for losses, else max)");
  o->flags.add(cmd, "--save-top-k", "saveTopK",
               "keep the K best checkpoints by the monitor in RUN/checkpoints (0: none)");
  o->flags.add(cmd, "--early-stop", "earlyStopPatience",
               "stop after PATIENCE evaluations without improvement of the monitor (0: off)");
  o->flags.add(cmd, "--min-delta", "earlyStopMinDelta",
               "early stop: a change of at most D is no improvement (default 0)");
  cmd->add_option("--config", o->config,
                  "JSON object of TrainConfig fields (applied before flags), or a run's "
                  "config.json (reproduces that run: net, data, limit and every field)");
  cmd->add_option(
      "--set", o->sets,
      "field=value for any TrainConfig field (repeatable, last; lr, bs, wd: learningRate, "
      "batchSize, weightDecay)");
  cmd->add_option("--run-dir", o->run_dir,
                  "checkpoints (last, best), config.json, metrics.csv/.jsonl, loss.png (default: "
                  "runs/<net>-<YYYYmmdd-HHMMSS>); an existing one resumes when its config matches");
  cmd->add_flag("--resume", o->resume,
                "continue the run in --run-dir with its stored config (--epochs, when given, is "
                "taken; no net needed)");
  cmd->add_flag("--overwrite", o->overwrite,
                "start over in --run-dir (removes only netspec's own files there)");
  o->flags.add(cmd, "--seed", "seed", "seed for init and shuffling (default: the spec's)");
  add_backend_options(cmd, o->backend, o->engine);
  cmd->add_option("--limit", o->limit, "use only the first N training samples (N >= 1)");
  cmd->add_option("--replicas", o->replicas,
                  "data-parallel replicas in this process (cpu: threads, xla: devices), each "
                  "training batch/R samples of every step; with WORLD_SIZE (`netspec launch`), "
                  "replicas per process");
  cmd->add_option("--steps-per-call", o->steps_per_call,
                  "train updates per backend call (a K-step module: a while over K stacked "
                  "batches; default 32 on iree, where each call is a process, else 1)");
  add_train_run_options(cmd, o->run);
  o->pipeline.add(cmd, true);
  cmd->add_option("--checkpoint-every-steps", o->checkpoint_every_steps,
                  "also save last every N updates within an epoch (with the data cursor: a kill "
                  "-9 loses at most N updates; default 0: at epoch ends and on a stop only)");
  cmd->footer("\n" + train::config_help());
  cmd->callback([o, cmd] { run_train(*o, cmd); });
}

}  // namespace netspec::cli
