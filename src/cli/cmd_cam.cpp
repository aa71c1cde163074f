// `netspec cam RUN_DIR|--net NET --checkpoint F IMAGE... [-o DIR] [--class K]`: Grad-CAM per
// image. Writes DIR/<image stem>.cam.png (the input and the input with the class-activation
// heatmap blended over it) and prints the top-5 classes. K defaults to each image's top class.
// Classifiers and segmenters (which explain class K over the pixels they predict as K, by
// default the most predicted non-background class, and print pixel shares); the other tasks
// make no class decision to explain and are refused.
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "report/pictures.h"
#include "tasks/task.h"
#include "viz/cam.h"

namespace netspec::cli {
namespace {

namespace fs = std::filesystem;

void register_cam_command(CLI::App& app) {
  struct Opts {
    std::string net, checkpoint, dataset, out, backend = "cpu";
    exec::BackendOptions engine;
    std::vector<std::string> args;
    int64_t cls = -1;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand(
      "cam", "Grad-CAM heatmaps: which pixels made the net choose a class (PNG per image)");
  cmd->add_option("args", o->args, "RUN_DIR then images (JPEG/PNG/.npy); with --net: images only");
  cmd->add_option("--net", o->net, "zoo net name or spec .json (instead of a RUN_DIR)");
  cmd->add_option("--checkpoint", o->checkpoint,
                  "a .safetensors checkpoint (default with RUN_DIR: best, else last)");
  cmd->add_option("--dataset", o->dataset, "class names and normalisation (default: the spec's)");
  cmd->add_option("-o,--out", o->out, "output directory (default: RUN_DIR/cam, or ./cam)");
  cmd->add_option("--class", o->cls, "class index to explain (default: each image's top class)");
  add_backend_options(cmd, o->backend, o->engine);
  cmd->callback([o] {
    if (o->args.empty())
      fail("cam",
           "usage: netspec cam RUN_DIR IMAGE... (or --net NET --checkpoint FILE IMAGE...); writes "
           "one heatmap PNG per image");
    std::vector<std::string> images = o->args;
    std::string run_dir;
    if (o->net.empty()) {
      run_dir = images.front();
      images.erase(images.begin());
    }
    if (images.empty()) fail("cam", "no images given (got only {})", run_dir);
    viz::Model m = viz::load_model(run_dir, o->net, o->checkpoint, o->dataset);
    const tasks::TaskKind task = tasks::task_kind(m.spec.net, m.train);
    if (task != tasks::TaskKind::classification && task != tasks::TaskKind::segmentation)
      fail("cam",
           "Grad-CAM explains a class decision of a classifier or segmenter; this run is {} "
           "(lossKind {})",
           tasks::task_name(task), enum_name(m.train.lossKind));
    std::vector<Tensor> xs;
    for (const std::string& p : images)
      xs.push_back(viz::load_input(p, m.table.input, m.train.dataset, m.crop_ratio()));
    auto backend = exec::make_backend(o->backend, o->engine);
    const int64_t n = static_cast<int64_t>(images.size());
    viz::GradCam gc(m, n, *backend);
    std::vector<viz::CamOut> cams = gc.run(viz::stack(xs), n, o->cls);
    const fs::path out = !o->out.empty()
                             ? fs::path(o->out)
                             : (run_dir.empty() ? fs::path("cam") : fs::path(run_dir) / "cam");
    fs::create_directories(out);
    for (int64_t i = 0; i < n; ++i) {
      const std::string& p = images[i];
      report::RgbImage pic = viz::input_picture(p, m.table.input, m.train.dataset, m.crop_ratio());
      const std::string png = (out / (fs::path(p).stem().string() + ".cam.png")).string();
      report::write_bytes(png, viz::cam_panel(m, pic, cams[i], fs::path(p).filename().string()));
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
