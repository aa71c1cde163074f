// `netspec data synth --task T --format F --n N -o DIR [--seed S]`: writes a procedurally
// generated data set in a real data set's on-disk format (src/data/synth.h, synth_det.h), so that
// training and tests run offline on files a real download would replace unchanged.
// det also takes [--size S] [--classes K] [--val-fraction F] (data/synth_det.h); nerf (--format
// transforms) writes the procedural radiance field, --n training views of --size pixels.
// `data pack` writes shards + an index from an image-folder tree (data/pack.h); `data bench`
// times the streamed decode + augment pipeline alone (data/pipeline_bench.h).
#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "data/pack.h"
#include "data/pipeline_bench.h"
#include "data/sample_source.h"
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

std::string synth_nerf_task(const SynthArgs& a) {
  if (a.o.format != "transforms")
    fail("synth", "nerf --format {}: unknown (expected transforms)", a.o.format);
  data::synth_nerf(a.o, a.det.size);
  return fmt::format("wrote the procedural radiance field, {} training and 4 held-out {}x{} views "
                     "(transforms.json layout), to {}",
                     a.o.n, a.det.size, a.det.size, a.o.out);
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
    {"nerf", "transforms", synth_nerf_task},
};

std::string task_names() {
  std::string s;
  for (const auto& t : kTasks)
    s += fmt::format("{}{} (--format {})", s.empty() ? "" : ", ", t.name, t.formats);
  return s;
}

// `data pack --dataset folder|imagenet --data DIR -o OUT [--max-side S] [--quality Q|--raw]`.
void add_pack_command(CLI::App* cmd) {
  struct PackArgs {
    std::string dataset = "folder";
    data::PackOptions o;
  };
  auto a = std::make_shared<PackArgs>();
  CLI::App* pack = cmd->add_subcommand(
      "pack", "Rewrite an image-folder tree as a few shard files and an index (data/pack.h)");
  pack->add_option("--dataset", a->dataset, "folder | imagenet (the layout of --data)")
      ->capture_default_str();
  pack->add_option("--data", a->o.data, "the image-folder tree")->required();
  pack->add_option("-o,--output,--out", a->o.out, "output directory (created)")->required();
  pack->add_option("--max-side", a->o.max_side, "shrink images whose longer side is over S (0: keep)")
      ->capture_default_str();
  auto* q = pack->add_option("--quality", a->o.quality, "JPEG quality 1..100")
                ->capture_default_str();
  pack->add_flag("--raw", a->o.raw, "store raw pixels instead of JPEG")->excludes(q);
  pack->add_option("--shard-mb", a->o.shard_mb, "shard size in MiB")->capture_default_str();
  pack->add_option("--threads", a->o.threads, "encode threads (0: the cores less one)")
      ->capture_default_str();
  pack->callback([a] {
    if (a->dataset != "folder" && a->dataset != "imagenet")
      fail("data pack", "--dataset {}: packs image folders (expected folder or imagenet)",
           a->dataset);
    fmt::print("{}\n", data::write_pack(a->o));
  });
}

// `data bench --dataset folder|imagenet|packed --data DIR --input CxHxW [--augment train|rrc|eval]
// [--threads N] [--batch B] [--batches K]`: images/s of the streamed pipeline alone.
void add_bench_command(CLI::App* cmd) {
  struct BenchArgs {
    std::string dataset = "folder", data, input = "3x224x224", augment = "train";
    int threads = 0;
    int64_t batch = 64, batches = 0;
    bool no_dct = false;
  };
  auto a = std::make_shared<BenchArgs>();
  CLI::App* bench =
      cmd->add_subcommand("bench", "Measure the streamed image pipeline's images/s (no step)");
  bench->add_option("--dataset", a->dataset, "folder | imagenet | packed")->capture_default_str();
  bench->add_option("--data", a->data, "image-folder tree or a pack")->required();
  bench->add_option("--input", a->input, "CxHxW")->capture_default_str();
  bench->add_option("--augment", a->augment,
                    "train (padded crop + flip) | rrc (RandomResizedCrop + flip) | eval")
      ->capture_default_str();
  bench->add_flag("--no-dct-scale", a->no_dct, "decode JPEGs at full resolution");
  bench->add_option("--threads", a->threads, "decode threads (0: the cores less one)")
      ->capture_default_str();
  bench->add_option("--batch", a->batch, "batch size")->capture_default_str();
  bench->add_option("--batches", a->batches, "batches to time (0: one epoch)")
      ->capture_default_str();
  bench->callback([a] {
    if (a->no_dct) data::pipeline_options().dct_scale = false;
    fmt::print("{}\n", data::bench_pipeline(a->dataset, a->data, a->input,
                                                                a->augment, a->threads, a->batch,
                                                                a->batches)); });
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
  synth->add_option("--size", opts->a.det.size, "det, nerf: square image side in pixels")
      ->capture_default_str();
  synth
      ->add_option("--classes", opts->a.det.classes,
                   "det: classes 1..4 (rect, ellipse, triangle, cross)")
      ->capture_default_str();
  synth
      ->add_option("--val-fraction", opts->a.det.val_fraction,
                   "det: fraction of images in the val split")
      ->capture_default_str();
  add_pack_command(cmd);
  add_bench_command(cmd);
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
