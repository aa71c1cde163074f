// `netspec predict NET|FILE.json --checkpoint PATH [--dataset NAME] [--top K] IMAGE...`: class
// name and top-K softmax probabilities per image. `netspec predict RUN_DIR IMAGE... [--png OUT.png]
// [--json]`: a detector's boxes (predict_det.h). Images are JPEG/PNG (decoded, resized and
// centre-cropped to the net's input, normalised with the dataset's mean/std; grayscale nets take
// the channel mean) or .npy tensors already shaped like the net's input (used as they are).
// --png OUT.png: a grid of the images with their top-3 classes (green frame and line when the top
// class is the image's folder name, i.e. the label is known and right; red when wrong).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <optional>

#include "cli/commands.h"
#include "cli/predict_det.h"
#include "core/error.h"
#include "layers/param_table.h"
#include "report/pictures.h"
#include "spec/param_table.h"
#include "spec/zoo.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/evaluate.h"
#include "train/trainer.h"
#include "viz/model.h"

namespace netspec::cli {
namespace {

// The known label of an image file: its folder's name when that is a class name (the image-folder
// layout DIR/<class>/x.jpg), else none.
std::optional<std::string> folder_label(const std::string& path,
                                        const std::vector<std::string>& names) {
  std::string dir = std::filesystem::path(path).parent_path().filename().string();
  if (std::find(names.begin(), names.end(), dir) != names.end()) return dir;
  return std::nullopt;
}

void register_predict_command(CLI::App& app) {
  struct Opts {
    std::string net, checkpoint, dataset, png, backend = "cpu";
    exec::BackendOptions engine;
    std::vector<std::string> inputs;
    int top = 5;
    PredictDetOptions det;  // NET is a run directory (detectors): predict_det.h
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("predict", "Classify images with a checkpoint (top-K)");
  cmd->add_option("net", o->net, "zoo net name or a spec .json file")->required();
  cmd->add_option("inputs", o->inputs, "JPEG/PNG images or .npy tensors")->required();
  cmd->add_option("--checkpoint", o->checkpoint, "a .safetensors checkpoint (not for a run dir)");
  cmd->add_flag("--json", o->det.json, "run dir of a detector: print the boxes as JSON");
  cmd->add_option("--iou", o->det.iou, "detector: NMS IoU threshold")->capture_default_str();
  cmd->add_option("--score", o->det.score, "detector: score threshold")->capture_default_str();
  cmd->add_option("--max-det", o->det.max_det, "detector: boxes kept per image")
      ->capture_default_str();
  cmd->add_option("--dataset", o->dataset,
                  "dataset the net was trained on: class names, normalisation (default: spec's)");
  cmd->add_option("--top", o->top, "probabilities shown per input")->capture_default_str();
  cmd->add_option("--png", o->png,
                  "also draw the images with their top-3 classes into this PNG (a detector's run "
                  "dir: the images with their boxes)");
  add_backend_options(cmd, o->backend, o->engine);
  cmd->callback([o] {
    if (std::filesystem::is_directory(o->net)) {  // a run directory of `netspec train`
      PredictDetOptions d = o->det;
      d.png = o->png;
      d.run_dir = o->net;
      d.images = o->inputs;
      d.backend = o->backend;
      d.engine = o->engine;
      return predict_run_dir(d);
    }
    if (o->checkpoint.empty()) fail("predict", "--checkpoint is required with a net name or spec");
    SpecFile spec = resolve_net(o->net);
    TrainConfig c = spec.train.value_or(TrainConfig{});
    if (!o->dataset.empty()) c.dataset = train::parse_dataset(o->dataset);
    ParamTable table = build_param_table(spec.net);
    std::vector<std::string> names;
    try {
      names = data::dataset_class_names(c.dataset);
    } catch (const Error&) {
      // datasets without fixed names (image folders): indices are printed
    }
    auto backend = exec::make_backend(o->backend, o->engine);
    const int64_t n = static_cast<int64_t>(o->inputs.size());
    train::Evaluator ev(spec.net, n, *backend, &table);
    train::TrainState s =
        train::make_state(train::init_params(table, c.init, 0), {}, ev.manifest());
    train::load_checkpoint(o->checkpoint, table, s, false);
    Shape xs = table.input;
    xs.insert(xs.begin(), n);
    Tensor x(DType::kF32, xs);
    const size_t row = x.nbytes() / static_cast<size_t>(n);
    const double crop = c.dataset == DatasetKind::imagenette ? c.testCropRatio : 1.0;
    std::vector<report::Tile> tiles;
    for (int64_t i = 0; i < n; ++i) {
      Tensor t = viz::load_input(o->inputs[i], table.input, c.dataset, crop);
      std::memcpy(static_cast<uint8_t*>(x.raw()) + i * row, t.raw(), row);
    }
    auto probs = train::softmax_rows(ev.logits(s.params, s.running, x), n);
    for (int64_t i = 0; i < n; ++i) {
      const auto& p = probs[i];
      std::vector<size_t> idx(p.size());
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
      auto name = [&](size_t k) {
        return k < names.size() ? names[k] : fmt::format("class {}", k);
      };
      std::cout << fmt::format("{}: {}\n", o->inputs[i], name(idx[0]));
      for (size_t k = 0; k < std::min(idx.size(), static_cast<size_t>(std::max(1, o->top))); ++k)
        std::cout << fmt::format("  {:>6.2f}%  {} ({})\n", 100 * p[idx[k]], name(idx[k]), idx[k]);
      if (o->png.empty()) continue;
      report::Tile t{viz::input_picture(o->inputs[i], table.input, c.dataset, crop),
                     std::filesystem::path(o->inputs[i]).filename().string(),
                     {},
                     folder_label(o->inputs[i], names)};
      for (size_t k = 0; k < std::min<size_t>(3, idx.size()); ++k)
        t.top.emplace_back(name(idx[k]), p[idx[k]]);
      tiles.push_back(std::move(t));
    }
    if (!o->png.empty()) {
      report::write_bytes(o->png, report::grid_png(tiles, 4));
      std::cout << "wrote " << o->png << "\n";
    }
  });
}

}  // namespace
NETSPEC_REGISTER_COMMAND(predict, register_predict_command)
}  // namespace netspec::cli
