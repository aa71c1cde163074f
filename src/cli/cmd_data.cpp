// `netspec data synth --task det --format voc|coco --n N -o DIR [--size S] [--classes K]
// [--seed X]`: writes procedural detection images with known boxes (data/synth_det.h) in the VOC
// or COCO layout the detection readers take.
#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "data/synth_det.h"

namespace netspec::cli {
namespace {

struct SynthArgs {
  std::string task;
  data::SynthDetOptions det;
};

void synth_command(const SynthArgs& a) {
  if (a.task != "det") fail("data synth", "--task: unknown task '{}' (expected det)", a.task);
  const int64_t boxes = data::write_synth_det(a.det);
  fmt::print("wrote {} {} images ({} boxes, {} classes) to {}\n", a.det.n, a.det.format, boxes,
             a.det.classes, a.det.dir);
}

void register_data_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("data", "Dataset tools (synthetic data for tests and demos).");
  cmd->require_subcommand(1);
  auto args = std::make_shared<SynthArgs>();
  CLI::App* s = cmd->add_subcommand("synth", "Write a procedural dataset with known labels.");
  s->add_option("--task", args->task, "det (boxes)")->required();
  s->add_option("--format", args->det.format, "det: voc | coco")->capture_default_str();
  s->add_option("--n", args->det.n, "images (the last --val-fraction form the val split)")
      ->capture_default_str();
  s->add_option("-o,--out", args->det.dir, "output directory")->required();
  s->add_option("--size", args->det.size, "square image side in pixels")->capture_default_str();
  s->add_option("--classes", args->det.classes,
                "det: classes 1..4 (rect, ellipse, triangle, cross)")
      ->capture_default_str();
  s->add_option("--val-fraction", args->det.val_fraction, "fraction of images in the val split")
      ->capture_default_str();
  s->add_option("--seed", args->det.seed, "random seed")->capture_default_str();
  s->callback([args] { synth_command(*args); });
}

}  // namespace
NETSPEC_REGISTER_COMMAND(data, register_data_command)
}  // namespace netspec::cli
