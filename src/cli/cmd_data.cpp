// `netspec data synth --task T --format F --n N -o DIR [--seed S]`: writes a procedurally
// generated data set in a real data set's on-disk format (src/data/synth.h, synth_det.h), so that
// training and tests run offline on files a real download would replace unchanged.
// det also takes [--size S] [--classes K] [--val-fraction F] (data/synth_det.h).
#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "data/synth.h"
#include "data/synth_det.h"

namespace netspec::cli {
namespace {

struct SynthArgs {
  data::SynthOptions o;
  data::SynthDetOptions det;  // det only: size, classes, val_fraction (the rest from o)
};

std::string synth_seg_task(const SynthArgs& a) {
  data::synth_seg(a.o);
  return fmt::format("wrote {} seg samples ({} format) to {}", a.o.n, a.o.format, a.o.out);
}

std::string synth_det_task(const SynthArgs& a) {
  data::SynthDetOptions d = a.det;
  d.dir = a.o.out;
  d.format = a.o.format;
  d.n = a.o.n;
  d.seed = a.o.seed;
  if (d.format != "voc" && d.format != "coco")
    fail("synth", "det --format {}: unknown (expected voc or coco)", d.format);
  const int64_t boxes = data::write_synth_det(d);
  return fmt::format("wrote {} det images ({} format, {} boxes, {} classes) to {}", d.n, d.format,
                     boxes, d.classes, d.dir);
}

// Synthesis tasks: name, formats (for the help), function (each in src/data/synth_<task>.cpp).
struct SynthTask {
  const char* name;
  const char* formats;
  std::string (*fn)(const SynthArgs&);
};
constexpr SynthTask kTasks[] = {
    {"seg", "pets|brats", synth_seg_task},
    {"det", "voc|coco", synth_det_task},
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
    SynthArgs a;
  };
  auto opts = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("data", "Data set tools");
  cmd->require_subcommand(1);
  CLI::App* synth = cmd->add_subcommand(
      "synth", "Write a small procedurally generated data set in a real data set's file format");
  synth->add_option("--task", opts->task, "task: " + task_names())->required();
  synth->add_option("--format", opts->a.o.format, "the on-disk format of the task")->required();
  synth->add_option("--n", opts->a.o.n, "number of samples (det: the last --val-fraction are val)")
      ->required();
  synth->add_option("-o,--output,--out", opts->a.o.out, "output directory (created)")->required();
  synth->add_option("--seed", opts->a.o.seed, "random seed")->capture_default_str();
  synth->add_option("--size", opts->a.det.size, "det: square image side in pixels")
      ->capture_default_str();
  synth
      ->add_option("--classes", opts->a.det.classes,
                   "det: classes 1..4 (rect, ellipse, triangle, cross)")
      ->capture_default_str();
  synth
      ->add_option("--val-fraction", opts->a.det.val_fraction,
                   "det: fraction of images in the val split")
      ->capture_default_str();
  synth->callback([opts] {
    for (const auto& t : kTasks)
      if (opts->task == t.name) {
        fmt::print("{}\n", t.fn(opts->a));
        return;
      }
    fail("data", "--task {}: unknown (expected one of: {})", opts->task, task_names());
  });
}

}  // namespace

NETSPEC_REGISTER_COMMAND(data, register_data_command)

}  // namespace netspec::cli
