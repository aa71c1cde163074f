// `netspec data synth --task T --format F --n N -o DIR [--seed S]`: writes a procedurally
// generated data set in a real data set's on-disk format (src/data/synth.h), so that training
// and tests run offline on files a real download would replace unchanged.
#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "data/synth.h"

namespace netspec::cli {
namespace {

// Synthesis tasks: name, formats (for the help), function (each in src/data/synth_<task>.cpp).
struct SynthTask {
  const char* name;
  const char* formats;
  void (*fn)(const data::SynthOptions&);
};
constexpr SynthTask kTasks[] = {
    {"seg", "pets|brats", data::synth_seg},
};

std::string task_names() {
  std::string s;
  for (const auto& t : kTasks)
    s += fmt::format("{}{} (--format {})", s.empty() ? "" : ", ", t.name, t.formats);
  return s;
}

void register_data_command(CLI::App& app) {
  struct Opts {
    std::string task;
    data::SynthOptions o;
  };
  auto opts = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("data", "Data set tools");
  cmd->require_subcommand(1);
  CLI::App* synth = cmd->add_subcommand(
      "synth", "Write a small procedurally generated data set in a real data set's file format");
  synth->add_option("--task", opts->task, "task: " + task_names())->required();
  synth->add_option("--format", opts->o.format, "the on-disk format of the task")->required();
  synth->add_option("--n", opts->o.n, "number of samples")->required();
  synth->add_option("-o,--output", opts->o.out, "output directory (created)")->required();
  synth->add_option("--seed", opts->o.seed, "random seed")->capture_default_str();
  synth->callback([opts] {
    for (const auto& t : kTasks)
      if (opts->task == t.name) {
        t.fn(opts->o);
        fmt::print("wrote {} {} samples ({} format) to {}\n", opts->o.n, t.name, opts->o.format,
                   opts->o.out);
        return;
      }
    fail("data", "--task {}: unknown (expected one of: {})", opts->task, task_names());
  });
}

}  // namespace

NETSPEC_REGISTER_COMMAND(data, register_data_command)

}  // namespace netspec::cli
