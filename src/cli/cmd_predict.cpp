// `netspec predict NET|FILE.json|RUN_DIR [--checkpoint PATH] [--dataset NAME] [--top K] [--json]
// [--png OUT.png] IMAGE...|DIR`: class name and top-K softmax probabilities per image. Images are
// JPEG/PNG (decoded, resized and centre-cropped to the net's input, normalised with the dataset's
// mean/std; grayscale nets take the channel mean) or .npy tensors already shaped like the net's
// input (used as they are); a directory stands for its images and those of its class sub-folders,
// sorted; a .csv table gives one input per row (features, with or without the label column). A
// run dir gives the net, dataset, class names and checkpoint (its best). --json prints one JSON
// array. A detector's run dir (yoloAnchor / yolov1Masked / detrSet) prints its boxes instead
// (predict_det.h).
// --png OUT.png: a grid of the images with their top-3 classes (green frame and line when the top
// class is the image's folder name, i.e. the label is known and right; red when wrong). A
// segmentation net prints per-class pixel fractions, draws its masks and writes mask PNGs
// (predict_seg.h).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "cli/commands.h"
#include "cli/predict_det.h"
#include "cli/predict_seg.h"
#include "cli/run_target.h"
#include "cli/train_flags.h"
#include "core/error.h"
#include "data/dir_list.h"
#include "data/own_data.h"
#include "layers/param_table.h"
#include "report/pictures.h"
#include "spec/param_table.h"
#include "spec/zoo.h"
#include "tasks/task.h"
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

bool is_input_file(const data::DirEntry& e) {
  std::string ext = e.path.extension().string();
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return e.kind == data::EntryKind::kRegular &&
         (ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".npy");
}

// The inputs with each directory replaced by its .jpg/.jpeg/.png/.npy files and those of its
// sub-folders one level down (the class-folder layout DIR/<class>/x.png, whose folder names
// give the known labels), sorted. Entries are resolved without throwing: a symlink loop is
// refused naming it (data/dir_list.h).
std::vector<std::string> expand_inputs(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const auto& p : in) {
    if (data::entry_kind("predict", p) != data::EntryKind::kDirectory) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> files;
    for (const data::DirEntry& e : data::list_dir("predict", p)) {
      if (is_input_file(e)) files.push_back(e.path.string());
      if (e.kind == data::EntryKind::kDirectory)
        for (const data::DirEntry& f : data::list_dir("predict", e.path))
          if (is_input_file(f)) files.push_back(f.path.string());
    }
    if (files.empty())
      fail("predict", "{}: no .jpg/.jpeg/.png/.npy files in the directory or its sub-folders", p);
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

// The net's inputs, one per image / .npy, and one per row of each .csv table (named
// "FILE.csv row K"), stacked into [N, ...input].
struct PredictBatch {
  std::vector<std::string> names;
  std::vector<bool> from_csv;
  Tensor x;
};
PredictBatch load_predict_batch(const std::vector<std::string>& inputs, const Shape& in,
                                DatasetKind kind, double crop) {
  std::vector<Tensor> parts;  // [k, ...input] each
  PredictBatch b;
  const int64_t row_elems = num_elements(in);
  for (const auto& p : inputs) {
    if (std::filesystem::path(p).extension() == ".csv") {
      Tensor t = data::load_csv_features(p, row_elems);
      for (int64_t r = 0; r < t.shape()[0]; ++r) {
        b.names.push_back(fmt::format("{} row {}", p, r + 1));
        b.from_csv.push_back(true);
      }
      parts.push_back(std::move(t));
      continue;
    }
    parts.push_back(viz::load_input(p, in, kind, crop));
    b.names.push_back(p);
    b.from_csv.push_back(false);
  }
  Shape xs = in;
  xs.insert(xs.begin(), static_cast<int64_t>(b.names.size()));
  b.x = Tensor(DType::kF32, xs);
  size_t at = 0;
  for (const Tensor& t : parts) {
    std::memcpy(static_cast<uint8_t*>(b.x.raw()) + at, t.raw(), t.nbytes());
    at += t.nbytes();
  }
  return b;
}

void register_predict_command(CLI::App& app) {
  struct Opts {
    std::string net, checkpoint, png, masks, backend = "cpu", top = "5";
    exec::BackendOptions engine;
    std::vector<std::string> inputs;
    bool json = false;
    ConfigFlags flags;
    PredictDetOptions det;  // NET is a detector's run directory: predict_det.h
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("predict", "Classify images with a checkpoint (top-K)");
  cmd->add_option("net", o->net, "zoo net name, a spec .json file, or a run dir");
  cmd->add_option("inputs", o->inputs,
                  "JPEG/PNG images, .npy tensors, directories of them (and of class folders), "
                  "or .csv tables (a net trained on --dataset csv: one prediction per row)");
  cmd->add_option("--checkpoint", o->checkpoint,
                  "a .safetensors checkpoint (default with a run dir: its best)");
  o->flags.add(cmd, "--dataset", "dataset",
               "dataset the net was trained on: class names, normalisation (default: spec's)");
  cmd->add_option("--top", o->top, "probabilities shown per input (>= 1)")->capture_default_str();
  cmd->add_flag("--json", o->json,
                "print a JSON array: input, label, index, top [{class, p}] (a detector: boxes)");
  cmd->add_option("--png", o->png,
                  "also draw the images with their top-3 classes into this PNG (a detector's run "
                  "dir: the images with their boxes)");
  cmd->add_option("--masks", o->masks,
                  "segmentation: write IMAGE_STEM.mask.png (class index per pixel) per image into "
                  "this directory (default: next to --png)");
  cmd->add_option("--iou", o->det.iou, "detector: NMS IoU threshold")->capture_default_str();
  cmd->add_option("--score", o->det.score, "detector: score threshold")->capture_default_str();
  cmd->add_option("--max-det", o->det.max_det, "detector: boxes kept per image")
      ->capture_default_str();
  add_backend_options(cmd, o->backend, o->engine);
  cmd->callback([o] {
    if (o->net.empty() || o->inputs.empty())
      fail("predict",
           "usage: netspec predict RUN_DIR INPUT... (or NET --checkpoint FILE INPUT...); INPUT: "
           "an image, .npy, .csv table or a folder of them (got {})",
           o->net.empty() ? "nothing" : "no inputs after " + o->net);
    const auto top = static_cast<size_t>(number_flag("predict", "--top", o->top, 1));
    RunTarget rt = resolve_run_target("predict", o->net, o->checkpoint);
    const SpecFile& spec = rt.spec;
    TrainConfig c = *spec.train;
    if (tasks::task_kind(spec.net, c) == tasks::TaskKind::nerf)
      fail("predict",
           "a nerf net renders camera rays, not inputs: `netspec report RUN_DIR` renders every "
           "held-out view with its PSNR, `netspec eval RUN_DIR` scores them, and training writes "
           "RUN_DIR/render.png");
    if (!rt.run_dir.empty() && tasks::task_kind(spec.net, c) == tasks::TaskKind::detection) {
      PredictDetOptions d = o->det;  // a detector's run directory: boxes (predict_det.h)
      d.json = o->json;
      d.png = o->png;
      d.run_dir = rt.run_dir;
      d.images = expand_inputs(o->inputs);
      d.backend = o->backend;
      d.engine = o->engine;
      return predict_run_dir(d);
    }
    if (tasks::task_kind(spec.net, c) == tasks::TaskKind::fold)
      fail("predict",
           "{} is a protein-fold net (lossKind af2Fold): predict has no structure output yet; use "
           "`netspec eval` for FAPE / lDDT-Cα or `netspec report` for distance maps",
           spec.net.name);
    o->flags.apply(c, "predict");
    ParamTable table = build_param_table(spec.net);
    std::vector<std::string> names = rt.class_names;
    if (names.empty()) try {
        names = data::dataset_class_names(c.dataset);
      } catch (const Error&) {
        // datasets without fixed names (image folders): indices are printed
      }
    const std::vector<std::string> inputs = expand_inputs(o->inputs);
    if (tasks::task_kind(spec.net, c) == tasks::TaskKind::segmentation) {
      PredictSegOptions sg{&spec,      &c,        &table, rt.checkpoint, o->png, o->masks,
                           o->backend, o->engine, inputs, names,         o->json};
      return predict_segmentation(sg);  // class maps (predict_seg.h)
    }
    auto backend = exec::make_backend(o->backend, o->engine);
    const double crop = train::eval_crop_ratio(c);
    PredictBatch b = load_predict_batch(inputs, table.input, c.dataset, crop);
    const std::vector<std::string>& names_in = b.names;
    const int64_t n = static_cast<int64_t>(names_in.size());
    train::Evaluator ev(spec.net, n, *backend, &table);
    train::TrainState s =
        train::make_state(train::init_params(table, c.init, 0), {}, ev.manifest());
    train::load_checkpoint(rt.checkpoint, table, s, false);
    const Tensor& x = b.x;
    std::vector<report::Tile> tiles;
    const Tensor logits = ev.logits(s.params, s.running, x);
    auto probs = train::softmax_rows(logits, n);
    const int64_t classes = logits.shape().at(1);
    std::vector<std::string> bad;  // inputs whose logits are not finite (NaN input, bad weights)
    auto name = [&](size_t k) { return k < names.size() ? names[k] : fmt::format("class {}", k); };
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (int64_t i = 0; i < n; ++i) {
      const float* l = logits.data<float>() + i * classes;
      if (!std::all_of(l, l + classes, [](float v) { return std::isfinite(v); })) {
        if (o->json)
          all.push_back({{"input", names_in[i]}, {"error", "the net's outputs are not finite"}});
        else
          std::cout << fmt::format("{}: no prediction (the net's outputs are not finite)\n",
                                   names_in[i]);
        bad.push_back(names_in[i]);
        continue;
      }
      const auto& p = probs[i];
      std::vector<size_t> idx(p.size());
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
      const size_t k_max = std::min(idx.size(), top);
      if (o->json) {
        nlohmann::ordered_json r, tops = nlohmann::ordered_json::array();
        r["input"] = names_in[i];
        r["label"] = name(idx[0]);
        r["index"] = idx[0];
        for (size_t k = 0; k < k_max; ++k)
          tops.push_back({{"class", name(idx[k])}, {"index", idx[k]}, {"p", p[idx[k]]}});
        r["top"] = tops;
        all.push_back(r);
      } else {
        std::cout << fmt::format("{}: {}\n", names_in[i], name(idx[0]));
        for (size_t k = 0; k < k_max; ++k)
          std::cout << fmt::format("  {:>6.2f}%  {} ({})\n", 100 * p[idx[k]], name(idx[k]), idx[k]);
      }
      if (o->png.empty() || b.from_csv[i]) continue;  // a table row has no picture
      report::Tile t{viz::input_picture(names_in[i], table.input, c.dataset, crop),
                     std::filesystem::path(names_in[i]).filename().string(),
                     {},
                     folder_label(names_in[i], names)};
      for (size_t k = 0; k < std::min<size_t>(3, idx.size()); ++k)
        t.top.emplace_back(name(idx[k]), p[idx[k]]);
      tiles.push_back(std::move(t));
    }
    if (o->json) std::cout << all.dump(2) << "\n";
    if (!o->png.empty()) {
      report::write_bytes(o->png, report::grid_png(tiles, 4));
      if (!o->json) std::cout << "wrote " << o->png << "\n";
    }
    if (!bad.empty())
      fail("predict",
           "{} of {} inputs gave non-finite outputs (NaN or Inf in the input or the checkpoint; "
           "first: {})",
           bad.size(), n, bad[0]);
  });
}

}  // namespace
NETSPEC_REGISTER_COMMAND(predict, register_predict_command)
}  // namespace netspec::cli
