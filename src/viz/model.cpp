// Loading a trained model and the pictures of its inputs (see model.h).
#include "viz/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/npy.h"
#include "data/datasets.h"
#include "data/image.h"
#include "data/sample_source.h"
#include "emit/emit.h"
#include "layers/param_table.h"
#include "spec/zoo.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/run_dir.h"
#include "train/trainer.h"

namespace netspec::viz {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

uint8_t to_byte(double v) {
  return static_cast<uint8_t>(std::lround(255 * std::clamp(v, 0.0, 1.0)));
}

}  // namespace

std::string Model::class_name(int64_t k) const {
  return k >= 0 && k < static_cast<int64_t>(class_names.size()) ? class_names[k]
                                                                : fmt::format("class {}", k);
}

double Model::crop_ratio() const { return train::eval_crop_ratio(train); }

Model load_model(const std::string& run_dir, const std::string& net, const std::string& checkpoint,
                 const std::string& dataset) {
  Model m;
  if (!run_dir.empty()) {
    const fs::path dir(run_dir);
    std::ifstream f(dir / "config.json");
    if (!f)
      fail("model", "{}: no config.json (is it a run directory of `netspec train`?)", run_dir);
    nlohmann::json cfg;
    try {
      cfg = nlohmann::json::parse(f);
    } catch (const nlohmann::json::exception& e) {
      fail("model", "{}/config.json: {}", run_dir, e.what());
    }
    if (!cfg.contains("spec")) fail("model", "{}/config.json has no \"spec\"", run_dir);
    m.spec = parse_spec(cfg["spec"].dump(), (dir / "config.json").string());
    m.checkpoint = checkpoint;
    if (m.checkpoint.empty())
      for (const char* c : {"best.safetensors", "last.safetensors"})
        if (fs::exists(dir / c)) {
          m.checkpoint = (dir / c).string();
          break;
        }
    if (m.checkpoint.empty())
      fail("model", "{}: no best.safetensors or last.safetensors (train first)", run_dir);
  } else {
    if (net.empty() || checkpoint.empty())
      fail("model", "give a RUN_DIR, or --net NET with --checkpoint FILE");
    m.spec = resolve_net(net);
    m.checkpoint = checkpoint;
  }
  m.train = m.spec.train.value_or(TrainConfig{});
  if (!dataset.empty()) m.train.dataset = train::parse_dataset(dataset);
  m.table = build_param_table(m.spec.net);
  // The run's own names (RUN/classes.json: a folder's class directories), else the dataset's.
  if (!run_dir.empty() && dataset.empty()) m.class_names = train::load_class_names(run_dir);
  if (m.class_names.empty()) try {
      m.class_names = data::dataset_class_names(m.train.dataset);
    } catch (const Error&) {
      // image folders and synthetic sets without classes.json: indices are shown
    }
  emit::EmitOptions eo;
  emit::Emitted ev = emit::emit_module(m.spec.net, m.table, ModuleKind::eval, eo);
  train::TrainState s =
      train::make_state(train::init_params(m.table, m.train.init, 0), {}, ev.manifest);
  train::load_checkpoint(m.checkpoint, m.table, s, false);
  m.params = std::move(s.params);
  m.running = std::move(s.running);
  return m;
}

Tensor load_input(const std::string& path, const Shape& in, DatasetKind kind, double crop_ratio) {
  if (ends_with(path, ".npy")) {
    Tensor t = read_npy(path);
    if (t.dtype() != DType::kF32 || t.shape() != in)
      fail("input", "{}: .npy input must be f32 {} (got {})", path, shape_str(in), t.type_str());
    return t;
  }
  if (in.size() != 3 || (in[0] != 1 && in[0] != 3))
    fail("input", "{}: images need a net input [1 or 3, H, W] (got {})", path, shape_str(in));
  return input_from_pixels(data::resize_center_crop(data::decode_image(path), in[1], in[2],
                                                    crop_ratio),
                           in, kind, path);
}

Tensor input_from_pixels(const Tensor& px, const Shape& in, DatasetKind kind,
                         const std::string& what) {
  if (in.size() != 3 || (in[0] != 1 && in[0] != 3) || px.dtype() != DType::kUI8 ||
      px.shape() != Shape{3, in[1], in[2]})
    fail("input", "{}: pixels ui8 [3, H, W] for a net input [1 or 3, H, W] (got {} for {})", what,
         px.type_str(), shape_str(in));
  data::Normalization norm = data::dataset_normalization(kind);
  const int64_t c = in[0], hw = in[1] * in[2];
  const uint8_t* u = px.data<uint8_t>();
  Tensor g(DType::kF32, in);
  float* o = g.data<float>();
  if (c == 3 && norm.mean.size() == 3) {  // (u / 255 - mean) / std per channel
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t i = 0; i < hw; ++i)
        o[k * hw + i] = (static_cast<float>(u[k * hw + i]) / 255.f - norm.mean[size_t(k)]) /
                        norm.std[size_t(k)];
    return g;
  }
  // Grayscale net (decoded images are RGB): the channel mean of the [0, 1] image, normalised.
  if (c != 1 || norm.mean.empty())
    fail("input", "{}: no normalisation for a {}-channel net on {}", what, c, enum_name(kind));
  // A 3-channel normalisation (an RGB image folder trained as grayscale): the channel averages.
  float mean = 0, sd = 0;
  for (size_t k = 0; k < norm.mean.size(); ++k) mean += norm.mean[k], sd += norm.std.at(k);
  mean /= static_cast<float>(norm.mean.size());
  sd /= static_cast<float>(norm.mean.size());
  for (int64_t i = 0; i < hw; ++i) {
    const float p0 = static_cast<float>(u[i]) / 255.f, p1 = static_cast<float>(u[hw + i]) / 255.f,
                p2 = static_cast<float>(u[2 * hw + i]) / 255.f;
    o[i] = ((p0 + p1 + p2) / 3.f - mean) / sd;
  }
  return g;
}

report::RgbImage tensor_picture(const float* x, const Shape& chw, DatasetKind kind) {
  if (chw.size() != 3) fail("picture", "expected an image [C, H, W] (got {})", shape_str(chw));
  const int64_t c = chw[0], h = chw[1], w = chw[2];
  data::Normalization norm;
  try {
    norm = data::dataset_normalization(kind);
  } catch (const Error&) {
    // no normalisation known: values are taken as [0, 1]
  }
  report::RgbImage img(static_cast<int>(w), static_cast<int>(h));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t xx = 0; xx < w; ++xx)
      for (int k = 0; k < 3; ++k) {
        const int64_t ch = c == 1 ? 0 : std::min<int64_t>(k, c - 1);
        double v = x[(ch * h + y) * w + xx];
        if (static_cast<size_t>(ch) < norm.mean.size()) v = v * norm.std[ch] + norm.mean[ch];
        img.rgb[(static_cast<size_t>(y) * w + xx) * 3 + k] = to_byte(v);
      }
  return img;
}

report::RgbImage input_picture(const std::string& path, const Shape& in, DatasetKind kind,
                               double crop_ratio) {
  if (ends_with(path, ".npy") || in.size() != 3) {
    Tensor t = load_input(path, in, kind, crop_ratio);
    return tensor_picture(t.data<float>(), in, kind);
  }
  Tensor px = data::resize_center_crop(data::decode_image(path), in[1], in[2], crop_ratio);
  const int64_t h = in[1], w = in[2];
  report::RgbImage img(static_cast<int>(w), static_cast<int>(h));
  const uint8_t* p = px.data<uint8_t>();
  for (int64_t i = 0; i < h * w; ++i)
    for (int k = 0; k < 3; ++k) img.rgb[i * 3 + k] = p[k * h * w + i];
  return img;
}

report::RgbImage sample_picture(const data::Dataset& ds, int64_t i, DatasetKind kind) {
  Shape chw(ds.x.shape().begin() + 1, ds.x.shape().end());
  if (chw.size() != 3) fail("picture", "dataset samples are not images (got {})", ds.x.type_str());
  const int64_t n = chw[0] * chw[1] * chw[2];
  if (ds.x.dtype() == DType::kF32) return tensor_picture(ds.x.data<float>() + i * n, chw, kind);
  if (ds.x.dtype() != DType::kUI8)
    fail("picture", "dataset samples must be f32 or ui8 (got {})", ds.x.type_str());
  if (i < 0 || i >= ds.size())
    fail("picture", "sample {} out of range (the split has {})", i, ds.size());
  std::vector<uint8_t> row;  // a streamed sample, read through the split's source
  if (ds.streamed()) {
    row.resize(static_cast<size_t>(n));
    ds.source->read(i, row.data());
  }
  const uint8_t* p = ds.streamed() ? row.data() : ds.x.data<uint8_t>() + i * n;
  report::RgbImage img(static_cast<int>(chw[2]), static_cast<int>(chw[1]));
  const int64_t hw = chw[1] * chw[2];
  for (int64_t j = 0; j < hw; ++j)
    for (int k = 0; k < 3; ++k) img.rgb[j * 3 + k] = p[(chw[0] == 1 ? 0 : k) * hw + j];
  return img;
}

Tensor stack(const std::vector<Tensor>& samples) {
  if (samples.empty()) fail("input", "no samples to stack");
  Shape s = samples[0].shape();
  s.insert(s.begin(), static_cast<int64_t>(samples.size()));
  Tensor x(DType::kF32, s);
  const size_t row = samples[0].nbytes();
  for (size_t i = 0; i < samples.size(); ++i)
    std::memcpy(static_cast<uint8_t*>(x.raw()) + i * row, samples[i].raw(), row);
  return x;
}

}  // namespace netspec::viz
