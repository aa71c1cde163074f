// `netspec predict NET|FILE.json|RUN_DIR [--checkpoint PATH] [--dataset NAME] [--top K] [--json]
// IMAGE...|DIR`: class name and top-K softmax probabilities per image. Images are JPEG/PNG
// (decoded, resized and centre-cropped to the net's input, normalised with the dataset's
// mean/std; grayscale nets take the channel mean) or .npy tensors already shaped like the net's
// input (used as they are); a directory stands for its images, sorted. A run dir gives the net,
// dataset, class names and checkpoint (its best). --json prints one JSON array.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "cli/commands.h"
#include "cli/run_target.h"
#include "cli/train_flags.h"
#include "core/error.h"
#include "core/npy.h"
#include "data/image.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/zoo.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/evaluate.h"
#include "train/trainer.h"

namespace netspec::cli {
namespace {

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// One input sample f32 shaped like the net's input (no batch dim).
// Images are resized and centre-cropped as the evaluation split is (image folders:
// testCropRatio; the fixed-size datasets: the whole image).
Tensor load_input(const std::string& path, const Shape& in, DatasetKind kind, double crop_ratio) {
  if (ends_with(path, ".npy")) {
    Tensor t = read_npy(path);
    if (t.dtype() != DType::kF32 || t.shape() != in)
      fail("predict", "{}: .npy input must be f32 {} (got {})", path, shape_str(in), t.type_str());
    return t;
  }
  if (in.size() != 3 || (in[0] != 1 && in[0] != 3))
    fail("predict", "{}: images need a net input [1 or 3, H, W] (got {})", path, shape_str(in));
  data::Normalization norm = data::dataset_normalization(kind);
  const int64_t c = in[0], h = in[1], w = in[2];
  if (c == 3 && norm.mean.size() == 3)
    return data::preprocess_image(path, h, w, norm.mean, norm.std, crop_ratio);
  // Grayscale net (decoded images are RGB): the channel mean of the [0, 1] image, normalised.
  if (c != 1 || norm.mean.empty())
    fail("predict", "{}: no normalisation for a {}-channel net on {}", path, c, enum_name(kind));
  Tensor rgb = data::preprocess_image(path, h, w, {0, 0, 0}, {1, 1, 1}, crop_ratio);
  Tensor g(DType::kF32, in);
  const float* p = rgb.data<float>();
  // A 3-channel normalisation (an RGB image folder trained as grayscale): the channel averages.
  float mean = 0, sd = 0;
  for (size_t k = 0; k < norm.mean.size(); ++k) mean += norm.mean[k], sd += norm.std.at(k);
  mean /= static_cast<float>(norm.mean.size());
  sd /= static_cast<float>(norm.mean.size());
  for (int64_t i = 0; i < h * w; ++i)
    g.data<float>()[i] = ((p[i] + p[h * w + i] + p[2 * h * w + i]) / 3.f - mean) / sd;
  return g;
}

// The inputs with each directory replaced by its .jpg/.jpeg/.png/.npy files, sorted.
std::vector<std::string> expand_inputs(const std::vector<std::string>& in) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : in) {
    if (!fs::is_directory(p)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(p)) {
      std::string ext = e.path().extension().string();
      for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (e.is_regular_file() &&
          (ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".npy"))
        files.push_back(e.path().string());
    }
    if (files.empty()) fail("predict", "{}: no .jpg/.jpeg/.png/.npy files in the directory", p);
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

void register_predict_command(CLI::App& app) {
  struct Opts {
    std::string net, checkpoint, backend = "cpu", top = "5";
    exec::BackendOptions engine;
    std::vector<std::string> inputs;
    bool json = false;
    ConfigFlags flags;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("predict", "Classify images with a checkpoint (top-K)");
  cmd->add_option("net", o->net, "zoo net name, a spec .json file, or a run dir")->required();
  cmd->add_option("inputs", o->inputs, "JPEG/PNG images, .npy tensors, or directories of them")
      ->required();
  cmd->add_option("--checkpoint", o->checkpoint,
                  "a .safetensors checkpoint (default with a run dir: its best)");
  o->flags.add(cmd, "--dataset", "dataset",
               "dataset the net was trained on: class names, normalisation (default: spec's)");
  cmd->add_option("--top", o->top, "probabilities shown per input (>= 1)")->capture_default_str();
  cmd->add_flag("--json", o->json, "print a JSON array: input, label, index, top [{class, p}]");
  add_backend_options(cmd, o->backend, o->engine);
  cmd->callback([o] {
    const auto top = static_cast<size_t>(number_flag("predict", "--top", o->top, 1));
    RunTarget t = resolve_run_target("predict", o->net, o->checkpoint);
    const SpecFile& spec = t.spec;
    TrainConfig c = *spec.train;
    o->flags.apply(c, "predict");
    ParamTable table = build_param_table(spec.net);
    std::vector<std::string> names = t.class_names;
    if (names.empty()) try {
        names = data::dataset_class_names(c.dataset);
      } catch (const Error&) {
        // datasets without fixed names (image folders): indices are printed
      }
    const std::vector<std::string> inputs = expand_inputs(o->inputs);
    auto backend = exec::make_backend(o->backend, o->engine);
    const int64_t n = static_cast<int64_t>(inputs.size());
    train::Evaluator ev(spec.net, n, *backend, &table);
    train::TrainState s =
        train::make_state(train::init_params(table, c.init, 0), {}, ev.manifest());
    train::load_checkpoint(t.checkpoint, table, s, false);
    Shape xs = table.input;
    xs.insert(xs.begin(), n);
    Tensor x(DType::kF32, xs);
    const size_t row = x.nbytes() / static_cast<size_t>(n);
    for (int64_t i = 0; i < n; ++i) {
      Tensor in = load_input(
          inputs[i], table.input, c.dataset,
          c.dataset == DatasetKind::imagenette || c.dataset == DatasetKind::folder ? c.testCropRatio
                                                                                   : 1.0);
      std::memcpy(static_cast<uint8_t*>(x.raw()) + i * row, in.raw(), row);
    }
    auto probs = train::softmax_rows(ev.logits(s.params, s.running, x), n);
    auto name = [&](size_t k) { return k < names.size() ? names[k] : fmt::format("class {}", k); };
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (int64_t i = 0; i < n; ++i) {
      const auto& p = probs[i];
      std::vector<size_t> idx(p.size());
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
      const size_t k_max = std::min(idx.size(), top);
      if (o->json) {
        nlohmann::ordered_json r, tops = nlohmann::ordered_json::array();
        r["input"] = inputs[i];
        r["label"] = name(idx[0]);
        r["index"] = idx[0];
        for (size_t k = 0; k < k_max; ++k)
          tops.push_back({{"class", name(idx[k])}, {"index", idx[k]}, {"p", p[idx[k]]}});
        r["top"] = tops;
        all.push_back(r);
        continue;
      }
      std::cout << fmt::format("{}: {}\n", inputs[i], name(idx[0]));
      for (size_t k = 0; k < k_max; ++k)
        std::cout << fmt::format("  {:>6.2f}%  {} ({})\n", 100 * p[idx[k]], name(idx[k]), idx[k]);
    }
    if (o->json) std::cout << all.dump(2) << "\n";
  });
}

}  // namespace
NETSPEC_REGISTER_COMMAND(predict, register_predict_command)
}  // namespace netspec::cli
