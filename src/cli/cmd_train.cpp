// `netspec train NET|FILE.json [--dataset NAME] [--data DIR] [--epochs N] [--batch B] [--lr X]
// [--optimizer NAME] [--run-dir DIR] [--seed S] [--backend cpu|ref] [--limit N]`: trains on the
// CPU executor, printing one line per epoch; flags override the spec's "train" object.
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "spec/zoo.h"
#include "train/trainer.h"

namespace netspec::cli {

void register_train_command(CLI::App& app) {
  struct Opts {
    std::string net, dataset, data, optimizer, run_dir, backend = "cpu";
    int epochs = 0, batch = 0, seed = -1;
    double lr = 0;
    int64_t limit = 0;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("train", "Train a network on a dataset (CPU executor)");
  cmd->add_option("net", o->net, "zoo net name or a spec .json file")->required();
  cmd->add_option("--dataset", o->dataset, "fashion-mnist | mnist (default: the spec's)");
  cmd->add_option("--data", o->data, "dataset directory (default: the Debian package's)");
  cmd->add_option("--epochs", o->epochs, "passes over the training set (default: the spec's)");
  cmd->add_option("--batch", o->batch, "batch size (default: the spec's)");
  cmd->add_option("--lr", o->lr, "peak learning rate (default: the spec's)");
  cmd->add_option("--optimizer", o->optimizer, "sgd | adam | rmsprop | lamb (default: the spec's)");
  cmd->add_option("--run-dir", o->run_dir, "checkpoints, config.json and metrics.csv; resumes");
  cmd->add_option("--seed", o->seed, "seed for init and shuffling (default: the spec's)");
  cmd->add_option("--backend", o->backend, "cpu | ref")->capture_default_str();
  cmd->add_option("--limit", o->limit, "use only the first N training samples");
  cmd->callback([o] {
    SpecFile spec = resolve_net(o->net);
    TrainConfig c = spec.train.value_or(TrainConfig{});
    if (!o->dataset.empty()) {
      std::string n = o->dataset == "fashion-mnist" ? "fashionMnist" : o->dataset;
      auto k = parse_enum<DatasetKind>(n);
      if (!k) fail("train", "unknown --dataset '{}' (expected fashion-mnist, mnist)", o->dataset);
      c.dataset = *k;
    }
    if (o->epochs > 0) c.epochs = o->epochs;
    if (o->batch > 0) c.batchSize = o->batch;
    if (o->lr > 0) c.learningRate = o->lr;
    if (o->seed >= 0) c.seed = o->seed;
    if (!o->optimizer.empty()) {
      auto k = parse_enum<OptimizerKind>(o->optimizer);
      if (!k) fail("train", "unknown --optimizer '{}' (expected {})", o->optimizer,
                   enum_choices<OptimizerKind>());
      c.optimizer = *k;
    }
    spec.train = c;
    train::Splits data = train::load_dataset(c.dataset, o->data, o->limit);
    std::cout << fmt::format("train {} on {}: {} train / {} test samples, {} epochs, batch {}, {} "
                             "lr {:g}, backend {}\n",
                             spec.net.name, enum_name(c.dataset), data.train.size(),
                             data.test.size(), c.epochs, c.batchSize, enum_name(c.optimizer),
                             c.learningRate, o->backend);
    train::TrainResult r = train::run_training(spec, data, {o->run_dir, o->backend, &std::cout});
    if (!r.epochs.empty())
      std::cout << fmt::format("test accuracy {:.2f}%\n", 100 * r.epochs.back().test_acc);
  });
}

}  // namespace netspec::cli
