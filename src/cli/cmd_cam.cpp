// `netspec cam RUN_DIR|--net NET --checkpoint F IMAGE... [-o DIR] [--class K]`: Grad-CAM per
// image. Writes DIR/<image stem>.cam.png (the input and the input with the class-activation
// heatmap blended over it) and prints the top-5 classes. K defaults to each image's top class.
// `--samples N` instead explains N samples of the run's evaluation split (evenly strided, as
// `report --limit`; --split, --data as for `eval`), written as sample-<index>.cam.png; an image
// folder over the data memory budget streams (--data-memory, pipeline_flags.h) and only those N
// samples are decoded; with --skip-bad-images an unreadable one is left out, counted.
// Classifiers and segmenters (which explain class K over the pixels they predict as K, by
// default the most predicted non-background class, and print pixel shares); the other tasks make
// no class decision to explain and are refused.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/pipeline_flags.h"
#include "cli/run_target.h"
#include "core/error.h"
#include "data/loader.h"
#include "data/sample_source.h"
#include "layers/param_table.h"
#include "report/pictures.h"
#include "tasks/task.h"
#include "train/evaluate.h"
#include "viz/cam.h"

namespace netspec::cli {
namespace {

namespace fs = std::filesystem;

struct CamOpts {
  std::string net, checkpoint, dataset, out, data, split, backend = "cpu";
  exec::BackendOptions engine;
  std::vector<std::string> args;
  int64_t cls = -1, samples = 0;
  PipelineFlags pipeline;
};

// What is explained: a batch of inputs, their pictures and their output names.
struct CamInputs {
  Tensor x;
  std::vector<report::RgbImage> pictures;
  std::vector<std::string> names, stems;  // shown in the panel and printed; the PNG's stem
};

CamInputs file_inputs(const viz::Model& m, const std::vector<std::string>& images) {
  CamInputs in;
  std::vector<Tensor> xs;
  for (const std::string& p : images) {
    xs.push_back(viz::load_input(p, m.table.input, m.train.dataset, m.crop_ratio()));
    in.pictures.push_back(viz::input_picture(p, m.table.input, m.train.dataset, m.crop_ratio()));
    in.names.push_back(p);
    in.stems.push_back(fs::path(p).stem().string());
  }
  in.x = viz::stack(xs);
  return in;
}

// --samples N: N evenly strided samples (floor((2i + 1)·n / 2N)) of the run's evaluation split,
// read through the Loader (a streamed split decodes just these).
CamInputs split_inputs(const CamOpts& o, CLI::App* cmd, const std::string& target,
                       const viz::Model& m) {
  const RunTarget t = resolve_run_target("cam", target, o.checkpoint);
  o.pipeline.apply(cmd, "cam");
  EvalSplit e = load_eval_split("cam", t, *t.spec.train, m.table, o.data, o.split);
  if (!e.data.pipeline.empty()) std::cout << e.data.pipeline << "\n";
  const data::Dataset& ds = e.data.test;
  if (ds.x.rank() != 4)
    fail("cam", "--samples: the split's samples are not images (got {})", ds.x.type_str());
  const int64_t n = ds.size(), k = std::min(o.samples, n);
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < k; ++i) rows.push_back((2 * i + 1) * n / (2 * k));
  const data::Dataset sub = data::take_rows(ds, rows);
  data::Loader ld(sub, k, false, 0);
  ld.set_skip_bad(sub.streamed() && data::pipeline_options().skip_bad);  // left out, counted
  ld.start_epoch(0);
  CamInputs in;
  Tensor x, y;
  std::vector<int64_t> read;  // the rows of sub read (all but the unreadable ones)
  const int64_t kept = ld.batch(0, x, y, &read);
  if (const data::Loader::Skipped sk = ld.skipped(); sk.count > 0) {
    std::cout << train::skipped_eval_line("cam", sk.count, sk.first, kept) << "\n";
    if (kept == 0) fail("cam", "--samples: none of the {} samples could be read", k);
  }
  Shape xs = x.shape();  // the Grad-CAM module's batch: the samples read
  xs[0] = kept;
  in.x = Tensor(x.dtype(), xs);
  std::memcpy(in.x.raw(), x.raw(), in.x.nbytes());
  for (int64_t j = 0; j < kept; ++j) {
    const int64_t r = read[static_cast<size_t>(j)], i = rows[static_cast<size_t>(r)];
    in.pictures.push_back(viz::sample_picture(sub, r, m.train.dataset));
    in.names.push_back(
        fmt::format("sample {} ({}, label {})", i, e.what, m.class_name(y.data<int32_t>()[j])));
    in.stems.push_back(fmt::format("sample-{}", i));
  }
  return in;
}

void register_cam_command(CLI::App& app) {
  auto o = std::make_shared<CamOpts>();
  CLI::App* cmd = app.add_subcommand(
      "cam", "Grad-CAM heatmaps: which pixels made the net choose a class (PNG per image)");
  cmd->add_option("args", o->args, "RUN_DIR then images (JPEG/PNG/.npy); with --net: images only");
  cmd->add_option("--net", o->net, "zoo net name or spec .json (instead of a RUN_DIR)");
  cmd->add_option("--checkpoint", o->checkpoint,
                  "a .safetensors checkpoint (default with RUN_DIR: best, else last)");
  cmd->add_option("--dataset", o->dataset, "class names and normalisation (default: the spec's)");
  cmd->add_option("-o,--out", o->out, "output directory (default: RUN_DIR/cam, or ./cam)");
  cmd->add_option("--class", o->cls, "class index to explain (default: each image's top class)");
  cmd->add_option("--samples", o->samples,
                  "explain N evenly strided samples of the run's evaluation split instead of "
                  "image files");
  cmd->add_option("--split", o->split, "with --samples: val or test (default: as `eval`)");
  cmd->add_option("--data", o->data, "with --samples: dataset directory (default: the run's)");
  o->pipeline.add(cmd);
  add_backend_options(cmd, o->backend, o->engine);
  cmd->callback([o, cmd] {
    if (o->args.empty() && o->net.empty())
      fail("cam",
           "usage: netspec cam RUN_DIR IMAGE... (or --net NET --checkpoint FILE IMAGE..., or "
           "RUN_DIR --samples N); writes one heatmap PNG per image");
    std::vector<std::string> images = o->args;
    std::string run_dir;
    if (o->net.empty()) {
      run_dir = images.front();
      images.erase(images.begin());
    }
    const bool split = cmd->count("--samples") > 0;
    if (split && o->samples < 1) fail("cam", "--samples must be >= 1 (got {})", o->samples);
    if (split && !images.empty())
      fail("cam", "--samples explains split samples; image files given too ({})", images.front());
    if (!split && (cmd->count("--split") || cmd->count("--data")))
      fail("cam", "--split and --data choose the samples of --samples N");
    if (!split && images.empty()) fail("cam", "no images given (got only {})", run_dir);
    viz::Model m = viz::load_model(run_dir, o->net, o->checkpoint, o->dataset);
    const tasks::TaskKind task = tasks::task_kind(m.spec.net, m.train);
    if (task != tasks::TaskKind::classification && task != tasks::TaskKind::segmentation)
      fail("cam",
           "Grad-CAM explains a class decision of a classifier or segmenter; this run is {} "
           "(lossKind {})",
           tasks::task_name(task), enum_name(m.train.lossKind));
    const CamInputs in = split ? split_inputs(*o, cmd, run_dir.empty() ? o->net : run_dir, m)
                               : file_inputs(m, images);
    auto backend = exec::make_backend(o->backend, o->engine);
    const auto n = static_cast<int64_t>(in.names.size());
    viz::GradCam gc(m, n, *backend);
    std::vector<viz::CamOut> cams = gc.run(in.x, n, o->cls);
    const fs::path out = !o->out.empty()
                             ? fs::path(o->out)
                             : (run_dir.empty() ? fs::path("cam") : fs::path(run_dir) / "cam");
    fs::create_directories(out);
    for (int64_t i = 0; i < n; ++i) {
      const std::string& p = in.names[i];
      const std::string png = (out / (in.stems[i] + ".cam.png")).string();
      report::write_bytes(png,
                          viz::cam_panel(m, in.pictures[i], cams[i],
                                         split ? in.stems[i] : fs::path(p).filename().string()));
      std::cout << fmt::format("{}: Grad-CAM for {} -> {}\n", p, m.class_name(cams[i].cls), png);
      for (const auto& [name, prob] : viz::top_k(m, cams[i].probs, 5))
        std::cout << fmt::format("  {:>6.2f}%{}  {}\n", 100 * prob,
                                 cams[i].per_pixel ? " of pixels" : "", name);
    }
  });
}

}  // namespace
NETSPEC_REGISTER_COMMAND(cam, register_cam_command)
}  // namespace netspec::cli
