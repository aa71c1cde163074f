// `netspec list`: the bundled zoo nets (models/*.json) with parameter counts, input shapes and
// what `netspec train NET` runs (its task and dataset);
// nets with a layer kind that has no IR yet (the layer registry's traits) are marked with the
// kinds, since emit/train/eval refuse them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "data/datasets.h"
#include "layers/lower.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/summary.h"
#include "spec/zoo.h"
#include "tasks/task.h"

namespace netspec::cli {

void register_list_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("list", "List the bundled nets (spec files under models/)");
  cmd->callback([] {
    auto names = zoo_names();
    if (names.empty()) fail("list", "no nets found in '{}'", zoo_dir());
    std::cout << fmt::format("{:<26} {:>14}  {:<12} {:>6}  {:<30} {}\n", "net", "params", "input",
                             "layers", "trains (task/dataset)", "lowered");
    int refused = 0;
    for (const auto& n : names) {
      SpecFile s = resolve_net(n);
      ParamTable t = build_param_table(s.net);
      std::string in;
      for (int64_t d : t.input) {
        if (!in.empty()) in += 'x';
        in += std::to_string(d);
      }
      std::vector<std::string> missing;  // kinds without IR, once each
      for (const Layer& l : s.net.layers) {
        std::string k(layer_kind(l));
        if ((!layers::find_emitter(k) || !layers::traits(k).lowered) &&
            std::find(missing.begin(), missing.end(), k) == missing.end())
          missing.push_back(k);
      }
      refused += !missing.empty();
      const TrainConfig c = s.train.value_or(TrainConfig{});
      const std::string trains = fmt::format("{}/{}", tasks::task_name(tasks::task_kind(s.net, c)),
                                             data::dataset_flag_name(c.dataset));
      std::cout << fmt::format(
          "{:<26} {:>14}  {:<12} {:>6}  {:<30} {}\n", n, group_digits(t.total_params()), in,
          s.net.layers.size(), trains,
          missing.empty() ? "yes"
                          : fmt::format("no: {} not lowered yet", fmt::join(missing, ", ")));
    }
    std::cout << fmt::format("{} nets in {}; {} cannot be lowered yet (summary only)\n",
                             names.size(), zoo_dir(), refused);
  });
}

}  // namespace netspec::cli
