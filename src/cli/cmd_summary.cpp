// `netspec summary NET|FILE.json [--classes N] [--batch B]`: validates the spec and prints the
// ParamTable as a table (index, layer, output shape, params, FLOPs) with totals (FLOPs and MACs).
#include <iostream>

#include "cli/commands.h"
#include "cli/train_flags.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/summary.h"
#include "spec/zoo.h"

namespace netspec::cli {

void register_summary_command(CLI::App& app) {
  struct Opts {
    std::string net;
    std::string classes, batch = "1";
  };
  auto opts = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand(
      "summary", "Validate a network spec and print its layers, shapes, parameters and FLOPs");
  cmd->add_option("net", opts->net, "zoo net name (see `netspec list`) or a spec .json file")
      ->required();
  cmd->add_option("--classes", opts->classes,
                  "resize the classifier head to N classes (default: as in the spec)");
  cmd->add_option("--batch", opts->batch, "batch size shown in shapes and FLOPs")
      ->capture_default_str();
  cmd->callback([opts, cmd] {
    SpecFile spec = resolve_net(opts->net);
    const int batch = static_cast<int>(number_flag("summary", "--batch", opts->batch, 1, 1e9));
    if (cmd->count("--classes"))
      set_num_classes(spec.net,
                      static_cast<int>(number_flag("summary", "--classes", opts->classes, 1, 1e9)));
    if (spec.train) validate(*spec.train);
    ParamTable table = build_param_table(spec.net);
    std::cout << format_summary(spec.net, table, batch);
  });
}

}  // namespace netspec::cli
