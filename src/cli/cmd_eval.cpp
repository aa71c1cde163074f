// `netspec eval NET|FILE.json|RUN_DIR [--checkpoint PATH] [--dataset NAME] [--data DIR]
// [--batch B] [--backend cpu|ref|xla] [--data-memory MB] [--data-threads N] [--no-dct-scale]
// [--skip-bad-images]`:
// loads the parameters and BN running statistics from a checkpoint (last or best) and prints the
// test split's loss, top-1, top-5 (when classes > 5) and sample count. A run dir (or its
// config.json) gives the net, dataset, data, limit, vocabulary and checkpoint (its best); flags
// given override them. A run trained with --val-split F is scored on the validation split it held
// out (the same seeded permutation), and the output says so (--split test: the test split
// instead). Image folders and packs over the data memory budget stream through the Loader, as in
// `train`, and the "data: ..." line says which path was taken; with --skip-bad-images a streamed
// sample that cannot be read is left out of the scores, counted in one line. Segmentation runs
// print mIoU, Dice and pixel accuracy; DDPM runs the noise-prediction MSE on the first 1024 test
// images, as training's validation does; protein-fold runs (af2Fold) FAPE, lDDT-Cα and
// distogram CE; NeRF runs render every held-out ray and print PSNR. Started by `netspec launch`
// (WORLD_SIZE > 1), each process evaluates its share of the test batches and rank 0 prints the
// whole split's metrics.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/pipeline_flags.h"
#include "cli/run_target.h"
#include "cli/train_flags.h"
#include "core/error.h"
#include "data/datasets.h"
#include "data/sample_source.h"
#include "dist/process_group.h"
#include "layers/param_table.h"
#include "losses/loss.h"
#include "spec/param_table.h"
#include "spec/spec_json.h"
#include "tasks/diffusion/ddpm.h"
#include "tasks/fold/fold_task.h"
#include "tasks/task.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/evaluate.h"
#include "train/trainer.h"

namespace netspec::cli {
namespace {

void register_eval_command(CLI::App& app) {
  struct Opts {
    std::string net, checkpoint, data, split, backend = "cpu";
    exec::BackendOptions engine;
    ConfigFlags flags;
    PipelineFlags pipeline;  // image folders over --data-memory stream (pipeline_flags.h)
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate a checkpoint on a dataset's test split");
  cmd->add_option("net", o->net, "zoo net name, a spec .json file, or a run dir")->required();
  cmd->add_option("--checkpoint", o->checkpoint,
                  "a .safetensors checkpoint (last or best; default with a run dir: its best)");
  o->flags.add_dataset(cmd, o->data,
                       "dataset directory (default: the run's --data, else the Debian package's)");
  cmd->add_option("--split", o->split,
                  "val (the run's --val-split hold-out) or test (default: val for a run trained "
                  "with --val-split, else test)");
  o->flags.add(cmd, "--batch", "batchSize", "evaluation batch size (default: the spec's)");
  add_backend_options(cmd, o->backend, o->engine);
  o->pipeline.add(cmd);
  cmd->callback([o, cmd] {
    RunTarget t = resolve_run_target("eval", o->net, o->checkpoint);
    TrainConfig c = *t.spec.train;
    o->flags.apply(c, "eval");
    o->pipeline.apply(cmd, "eval");
    ParamTable table = build_param_table(t.spec.net);
    auto backend = exec::make_backend(o->backend, o->engine);
    // The eval module's rows: nerf renders batchSize rays of nerfSamples points.
    const bool nerf = tasks::task_kind(t.spec.net, c) == tasks::TaskKind::nerf;
    train::Evaluator ev(t.spec.net, c.batchSize * losses::rows_per_sample(c), *backend, &table);
    train::TrainState s =
        train::make_state(train::init_params(table, c.init, 0), {}, ev.manifest());
    train::load_checkpoint(t.checkpoint, table, s, false);
    EvalSplit es = load_eval_split("eval", t, c, table, o->data, o->split);
    data::Splits& data = es.data;
    if (data.text && !table.input.empty())
      remap_to_run_vocab(data, t.run_dir, static_cast<int>(table.input[0]));
    // Processes: join after the checkpoint and data loaded (a bad path fails alone, at once).
    const auto env = dist::dist_env_from_environment();
    std::unique_ptr<dist::ProcessGroup> group;
    if (env && env->world > 1) {
      if (o->backend == "xla") refuse_xla_across_processes("eval", env->world);
      nlohmann::ordered_json fp;
      fp["spec"] = nlohmann::ordered_json::parse(dump_spec(t.spec));
      fp["checkpoint"] = std::filesystem::absolute(t.checkpoint).string();
      fp["batch"] = c.batchSize;
      fp["test_samples"] = data.test.size();
      fp["skip_bad_images"] = data::pipeline_options().skip_bad;  // one policy for every rank
      group = dist::ProcessGroup::join(*env, fp.dump());
    }
    const train::RankSplit split{group ? &group->comm() : nullptr, group ? env->rank : 0};
    if (split.rank == 0 && !data.pipeline.empty()) std::cout << data.pipeline << "\n";
    // Classification, regression and DDPM evaluate through the Loader; the other tasks read
    // their split's tensors whole.
    const tasks::TaskKind kind = tasks::task_kind(t.spec.net, c);
    if (kind != tasks::TaskKind::classification && kind != tasks::TaskKind::regression &&
        kind != tasks::TaskKind::diffusion)
      data::require_in_ram(data.test, "eval",
                           fmt::format("the {} task's evaluation", tasks::task_name(kind)));
    if (nerf) {  // the task renders the held-out rays and scores PSNR, as training does
      auto task = tasks::make_task(
          tasks::TaskKind::nerf, tasks::TaskEnv{t.spec.net, table, c, data, split, nullptr, nullptr});
      task->attach(ev);
      train::EpochMetrics em;
      task->evaluate(s, {}, em);
      if (split.rank == 0)
        std::cout << fmt::format("eval {} ({} epochs, step {}) on {}, {}: {}\n", t.spec.net.name,
                                 s.epoch, s.step, enum_name(c.dataset), es.what,
                                 task->final_text(em, "test"));
      return;
    }
    const train::EvalMetrics m =
        c.ddpm ? train::ddpm_evaluate(train::DdpmSchedule(c), c.dataset, ev, s.params, s.running,
                                      data.test, 1024, split)
        : tasks::task_kind(t.spec.net, c) == tasks::TaskKind::fold
            ? tasks::fold_evaluate(ev, s.params, s.running, data.test, split)
            : ev.run(s.params, s.running, data.test, {}, split.group, split.rank);
    if (split.rank != 0) return;
    if (m.skipped > 0)  // --skip-bad-images: the metrics below are over the samples read
      std::cout << train::skipped_eval_line("eval", m.skipped, m.skipped_first, m.count) << "\n";
    // Text: the corpus's validation windows (no --val-split), named by the dataset alone.
    std::cout << fmt::format("eval {} ({} epochs, step {}) on {}{}: loss {:.4f}", t.spec.net.name,
                             s.epoch, s.step, enum_name(c.dataset), data.text ? "" : ", " + es.what,
                             m.loss);
    if (m.regression)
      std::cout << "  (noise mse)";
    else if (m.fold)
      std::cout << fmt::format("  FAPE {:.3f} Å  lDDT-Cα {:.2f}  distogram CE {:.4f}", m.fape,
                               m.lddt, m.dist_ce);
    else if (m.seg)
      std::cout << fmt::format("  mIoU {:.4f}  dice {:.4f}  pixel acc {:.2f}%", m.miou, m.dice,
                               100 * m.top1);
    else
      std::cout << fmt::format("  top-1 {:.2f}%", 100 * m.top1);
    if (m.has_top5) std::cout << fmt::format("  top-5 {:.2f}%", 100 * m.top5);
    std::cout << fmt::format("  count {}", m.count);
    if (group) std::cout << fmt::format("  ({} processes)", env->world);
    std::cout << "\n";
  });
}

}  // namespace
NETSPEC_REGISTER_COMMAND(eval, register_eval_command)
}  // namespace netspec::cli
