// `netspec emit NET|FILE.json --module KIND --batch B [...] [-o FILE.mlir]`: writes the StableHLO
// module and FILE.manifest.json beside it (stdout and no manifest when -o is absent). Training
// settings come from the spec's "train" object, overridden by --optimizer / --loss.
#include <fmt/format.h>

#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "emit/emit.h"
#include "hlo/printer.h"
#include "spec/zoo.h"

namespace netspec::cli {
namespace {

struct EmitArgs {
  std::string net;
  std::string module = "forward";
  int64_t batch = 1;
  int classes = 0;
  std::string optimizer, loss, out;
  bool generic = false;
};

template <class E>
E parse_or_fail(const std::string& flag, const std::string& s) {
  auto v = parse_enum<E>(s);
  if (!v) fail("emit", "{} {}: unknown (expected one of {})", flag, s, enum_choices<E>());
  return *v;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) fail("emit", "cannot write '{}'", path);
  f << text;
  if (!f) fail("emit", "write to '{}' failed", path);
}

void emit_command(const EmitArgs& a) {
  SpecFile spec = resolve_net(a.net);
  if (a.classes > 0) set_num_classes(spec.net, a.classes);
  TrainConfig tc = spec.train.value_or(TrainConfig{});
  if (!a.optimizer.empty()) tc.optimizer = parse_or_fail<OptimizerKind>("--optimizer", a.optimizer);
  if (!a.loss.empty()) tc.lossKind = parse_or_fail<LossKind>("--loss", a.loss);
  ModuleKind kind = parse_or_fail<ModuleKind>("--module", a.module);
  emit::Emitted e = emit::emit_module(spec.net, kind, emit::EmitOptions::from_train(tc, a.batch));
  std::string text = hlo::print_module(*e.module, {a.generic});
  if (a.out.empty()) {
    fmt::print("{}", text);
    return;
  }
  write_file(a.out, text);
  std::string base = a.out;
  if (base.size() > 5 && base.ends_with(".mlir")) base.resize(base.size() - 5);
  write_file(base + ".manifest.json", e.manifest.to_json());
  fmt::print(stderr, "wrote {} and {}.manifest.json ({} inputs, {} outputs)\n", a.out, base,
             e.manifest.inputs.size(), e.manifest.outputs.size());
}

}  // namespace

void register_emit_command(CLI::App& app) {
  auto args = std::make_shared<EmitArgs>();
  CLI::App* cmd = app.add_subcommand(
      "emit",
      "Emit a StableHLO module for a net (zoo name or spec .json) and its manifest JSON.\n"
      "Modules: forward (BN on batch stats; returns logits and per-BN batch mean/var), eval (BN "
      "on running stats), cam (features before the last globalAvgPool + logits), train_step "
      "(forward, loss, backward, optimizer update; lr and step are inputs), vjp, optimizer.\n"
      "Optimizers: sgd (momentum, nesterov), adam (AdamW when weightDecay > 0), rmsprop (TF "
      "flavour: eps inside the sqrt), lamb. Losses: classCE, softLabelCE, bce, floatTargetMse.");
  cmd->add_option("net", args->net, "zoo name or spec .json file")->required();
  cmd->add_option("--module", args->module,
                  "forward | eval | cam | train_step | vjp | optimizer | loss")
      ->capture_default_str();
  cmd->add_option("--batch", args->batch, "batch size baked into the module")->capture_default_str();
  cmd->add_option("--classes", args->classes, "resize the classifier head to N classes");
  cmd->add_option("--optimizer", args->optimizer, "override the spec's optimizer");
  cmd->add_option("--loss", args->loss, "override the spec's loss");
  cmd->add_flag("--generic", args->generic, "print MLIR's generic op form");
  cmd->add_option("-o,--output", args->out, "output .mlir (FILE.manifest.json beside it)");
  cmd->callback([args] { emit_command(*args); });
}

}  // namespace netspec::cli
