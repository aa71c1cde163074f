// `netspec train NET|FILE.json [--dataset NAME] [--data DIR] [--epochs N] [--batch B] [--lr X]
// [--optimizer NAME] [--schedule NAME] [--config FILE.json] [--run-dir DIR] [--seed S]
// [--backend cpu|ref|xla] [--set field=value]... [--limit N]`. The TrainConfig is the spec's "train"
// object, then --config, then the flags, then each --set in order; it is validated before the
// run directory is touched. SIGINT/SIGTERM: the step finishes, `last` is saved, exit 130.
// Data parallel (docs/distributed.md): --replicas R runs R replica threads; WORLD_SIZE > 1 in the
// environment (torchrun convention, or `netspec launch`) makes this process one replica of a
// group: it joins the others (refusing a different config or net) and only rank 0 prints and
// writes the run dir.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "layers/param_table.h"
#include "dist/process_group.h"
#include "report/progress.h"
#include "spec/param_table.h"
#include "spec/summary.h"
#include "spec/zoo.h"
#include "train/config.h"
#include "train/signals.h"
#include "train/trainer.h"

namespace netspec::cli {

void register_train_command(CLI::App& app) {
  struct Opts {
    std::string net, dataset, data, optimizer, schedule, config, run_dir, backend = "cpu";
    exec::BackendOptions engine;
    std::vector<std::string> sets;
    int epochs = 0, batch = 0, seed = -1, replicas = 1;
    double lr = 0;
    int64_t limit = 0;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("train", "Train a network on a dataset (--backend cpu, ref or xla)");
  cmd->add_option("net", o->net, "zoo net name or a spec .json file")->required();
  cmd->add_option("--dataset", o->dataset, "fashion-mnist | mnist | ... (default: the spec's)");
  cmd->add_option("--data", o->data,
                  "dataset directory (default: the Debian package's); for text, a UTF-8 file");
  cmd->add_option("--epochs", o->epochs, "passes over the training set (default: the spec's)");
  cmd->add_option("--batch", o->batch, "batch size (default: the spec's)");
  cmd->add_option("--lr", o->lr, "peak learning rate (default: the spec's)");
  cmd->add_option("--optimizer", o->optimizer, "sgd | adam | rmsprop | lamb (default: the spec's)");
  cmd->add_option("--schedule", o->schedule,
                  "constant | cosine | exponential (default: the spec's)");
  cmd->add_option("--config", o->config,
                  "JSON object of TrainConfig fields (applied before flags)");
  cmd->add_option("--set", o->sets, "field=value for any TrainConfig field (repeatable, last)");
  cmd->add_option("--run-dir", o->run_dir,
                  "checkpoints (last, best), config.json, metrics.csv/.jsonl, loss.png; resumes");
  cmd->add_option("--seed", o->seed, "seed for init and shuffling (default: the spec's)");
  add_backend_options(cmd, o->backend, o->engine);
  cmd->add_option("--limit", o->limit, "use only the first N training samples");
  cmd->add_option("--replicas", o->replicas,
                  "data-parallel replicas on threads of this process, each training batch/R "
                  "samples of every step (processes: WORLD_SIZE, see `netspec launch`)");
  cmd->footer("\n" + train::config_help());
  cmd->callback([o] {
    // IREE's PyPI tools run one process per call: the state would cross files every step.
    if (o->backend == "iree")
      fail("train",
           "--backend iree cannot keep training state between steps with IREE's command-line "
           "tools (docs/engines.md); use --backend xla or cpu");
    SpecFile spec = resolve_net(o->net);
    TrainConfig c = spec.train.value_or(TrainConfig{});
    if (!o->config.empty()) train::apply_config_file(c, o->config);
    if (!o->dataset.empty()) c.dataset = train::parse_dataset(o->dataset);
    if (o->epochs > 0) c.epochs = o->epochs;
    if (o->batch > 0) c.batchSize = o->batch;
    if (o->lr > 0) c.learningRate = o->lr;
    if (o->seed >= 0) c.seed = o->seed;
    if (!o->optimizer.empty()) {
      auto k = parse_enum<OptimizerKind>(o->optimizer);
      if (!k)
        fail("train", "unknown --optimizer '{}' (expected {})", o->optimizer,
             enum_choices<OptimizerKind>());
      c.optimizer = *k;
    }
    if (!o->schedule.empty()) {
      auto k = parse_enum<Schedule>(o->schedule);
      if (!k)
        fail("train", "unknown --schedule '{}' (expected {})", o->schedule,
             enum_choices<Schedule>());
      c.schedule = *k;
    }
    for (const auto& s : o->sets) train::apply_set(c, s);
    validate(c);
    spec.train = c;
    if (o->replicas < 1 || o->replicas > exec::kMaxReplicas)
      fail("train", "--replicas must be in 1..{} (got {})", exec::kMaxReplicas, o->replicas);
    // A process group (WORLD_SIZE > 1): join before loading data, so a mismatch stops at once.
    std::unique_ptr<dist::ProcessGroup> group;
    train::TrainOptions to;
    to.dp.replicas = o->replicas;
    if (auto env = dist::dist_env_from_environment(); env && env->world > 1) {
      if (o->replicas > 1)
        fail("train",
             "--replicas {} with WORLD_SIZE {}: a process group runs one replica per "
             "process",
             o->replicas, env->world);
      nlohmann::ordered_json fp;
      fp["spec"] = nlohmann::ordered_json::parse(dump_spec(spec));
      fp["backend"] = o->backend;
      fp["limit"] = o->limit;
      fp["world"] = env->world;
      group = dist::ProcessGroup::join(*env, fp.dump());
      to.dp = {env->world, &group->comm(), env->rank};
    }
    const bool rank0 = to.dp.rank == 0;
    ParamTable table = build_param_table(spec.net);
    train::Splits data = train::load_for_net(c, table, o->data, o->limit);

    if (rank0) {
      std::cout << fmt::format("train {} on {}: {} train / {} test samples, backend {}\n",
                               spec.net.name, enum_name(c.dataset), data.train.size(),
                               data.test.size(), o->backend);
      std::cout << train::format_config(c) << format_summary(spec.net, table, c.batchSize)
                << std::flush;
    }
    train::install_stop_handlers();
    to.run_dir = rank0 ? o->run_dir : "";  // rank 0 writes; the others take its state
    to.backend = o->backend;
    to.backend_options = o->engine;
    to.log = rank0 ? &std::cout : nullptr;
    to.tty = report::is_terminal(STDOUT_FILENO);
    to.table = &table;
    train::TrainResult r = train::run_training(spec, data, to);
    if (r.interrupted) {
      if (rank0) std::cout << "stopped by signal\n" << std::flush;
      std::exit(130);
    }
    if (!rank0) return;
    for (auto it = r.epochs.rbegin(); it != r.epochs.rend(); ++it)
      if (it->evaluated && data.text) {
        std::cout << fmt::format(
            "validation loss {:.4f}, {:.4f} bits per character (unigram {:.4f}) on {} tokens\n",
            it->val.loss, train::bits_per_char(it->val.loss), r.unigram_bpc, it->val.count);
        break;
      } else if (it->evaluated && it->det) {
        std::cout << fmt::format("test mAP@0.5 {:.4f}, mAP@[.5:.95] {:.4f} on {} images\n",
                                 it->map.voc_map50, it->map.coco_map, it->val.count);
        break;
      } else if (it->evaluated) {
        std::cout << fmt::format("test accuracy {:.2f}%", 100 * it->val.top1);
        if (it->val.has_top5) std::cout << fmt::format(" (top-5 {:.2f}%)", 100 * it->val.top5);
        std::cout << fmt::format(" on {} samples\n", it->val.count);
        break;
      }
  });
}

}  // namespace netspec::cli
