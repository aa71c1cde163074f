// `netspec eval NET|FILE.json --checkpoint PATH [--dataset NAME] [--data DIR] [--batch B]
// [--backend cpu|ref|xla]`: loads the parameters and BN running statistics from a checkpoint (last
// or best) and prints the test split's loss, top-1, top-5 (when classes > 5) and sample count.
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/zoo.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/evaluate.h"
#include "train/trainer.h"

namespace netspec::cli {
namespace {

void register_eval_command(CLI::App& app) {
  struct Opts {
    std::string net, checkpoint, dataset, data, backend = "cpu";
    exec::BackendOptions engine;
    int batch = 0;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate a checkpoint on a dataset's test split");
  cmd->add_option("net", o->net, "zoo net name or a spec .json file")->required();
  cmd->add_option("--checkpoint", o->checkpoint, "a .safetensors checkpoint (last or best)")
      ->required();
  cmd->add_option("--dataset", o->dataset, "fashion-mnist | mnist | ... (default: the spec's)");
  cmd->add_option("--data", o->data, "dataset directory (default: the Debian package's)");
  cmd->add_option("--batch", o->batch, "evaluation batch size (default: the spec's)");
  add_backend_options(cmd, o->backend, o->engine);
  cmd->callback([o] {
    SpecFile spec = resolve_net(o->net);
    TrainConfig c = spec.train.value_or(TrainConfig{});
    if (!o->dataset.empty()) c.dataset = train::parse_dataset(o->dataset);
    if (o->batch > 0) c.batchSize = o->batch;
    ParamTable table = build_param_table(spec.net);
    auto backend = exec::make_backend(o->backend, o->engine);
    train::Evaluator ev(spec.net, c.batchSize, *backend, &table);
    train::TrainState s =
        train::make_state(train::init_params(table, c.init, 0), {}, ev.manifest());
    train::load_checkpoint(o->checkpoint, table, s, false);
    data::Splits data = train::load_for_net(c, table, o->data, 0);
    train::EvalMetrics m = ev.run(s.params, s.running, data.test);
    std::cout << fmt::format("eval {} ({} epochs, step {}) on {}: loss {:.4f}  top-1 {:.2f}%",
                             spec.net.name, s.epoch, s.step, enum_name(c.dataset), m.loss,
                             100 * m.top1);
    if (m.has_top5) std::cout << fmt::format("  top-5 {:.2f}%", 100 * m.top5);
    std::cout << fmt::format("  count {}\n", m.count);
  });
}

}  // namespace
NETSPEC_REGISTER_COMMAND(eval, register_eval_command)
}  // namespace netspec::cli
