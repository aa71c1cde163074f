// `netspec list`: the bundled zoo nets (models/*.json) with parameter counts and input shapes.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/summary.h"
#include "spec/zoo.h"

namespace netspec::cli {

void register_list_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("list", "List the bundled nets (spec files under models/)");
  cmd->callback([] {
    auto names = zoo_names();
    if (names.empty()) fail("list", "no nets found in '{}'", zoo_dir());
    std::cout << fmt::format("{:<26} {:>14}  {:<12} {}\n", "net", "params", "input", "layers");
    for (const auto& n : names) {
      SpecFile s = resolve_net(n);
      ParamTable t = build_param_table(s.net);
      std::string in;
      for (int64_t d : t.input) {
        if (!in.empty()) in += 'x';
        in += std::to_string(d);
      }
      std::cout << fmt::format("{:<26} {:>14}  {:<12} {}\n", n, group_digits(t.total_params()), in,
                               s.net.layers.size());
    }
    std::cout << fmt::format("{} nets in {}\n", names.size(), zoo_dir());
  });
}

}  // namespace netspec::cli
