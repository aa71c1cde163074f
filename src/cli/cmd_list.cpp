// `netspec list`: the bundled zoo nets (models/*.json) with parameter counts, input shapes and
// whether every layer is lowered (else the kinds that are not, which emit/train refuse).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "layers/lower.h"
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
    std::cout << fmt::format("{:<26} {:>14}  {:<12} {:>6}  {}\n", "net", "params", "input",
                             "layers", "lowered");
    for (const auto& n : names) {
      SpecFile s = resolve_net(n);
      ParamTable t = build_param_table(s.net);
      std::string in;
      for (int64_t d : t.input) {
        if (!in.empty()) in += 'x';
        in += std::to_string(d);
      }
      std::vector<std::string> missing;  // kinds without IR, each once
      for (const Layer& l : s.net.layers) {
        std::string k(layer_kind(l));
        if (!layers::traits(l).lowered &&
            std::find(missing.begin(), missing.end(), k) == missing.end())
          missing.push_back(k);
      }
      std::string lowered =
          missing.empty() ? "yes" : fmt::format("no ({})", fmt::join(missing, ", "));
      std::cout << fmt::format("{:<26} {:>14}  {:<12} {:>6}  {}\n", n,
                               group_digits(t.total_params()), in, s.net.layers.size(), lowered);
    }
    std::cout << fmt::format("{} nets in {}\n", names.size(), zoo_dir());
  });
}

}  // namespace netspec::cli
