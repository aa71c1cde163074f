// Detector prediction from a run directory (predict_det.h).
#include "cli/predict_det.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_check.h"
#include "data/det_data.h"
#include "data/image.h"
#include "layers/param_table.h"
#include "report/canvas.h"
#include "spec/spec_json.h"
#include "tasks/detection/det_train.h"
#include "train/checkpoint.h"
#include "train/run_dir.h"
#include "train/trainer.h"
#include "viz/det_view.h"

namespace netspec::cli {
namespace {

namespace fs = std::filesystem;

}  // namespace

void predict_run_dir(const PredictDetOptions& o) {
  const fs::path dir(o.run_dir);
  if (!fs::exists(dir / "config.json"))
    fail("predict", "{}: no config.json (not a run directory)", o.run_dir);
  // Regular files only: a FIFO planted in the run dir must not block (issue 40 item 8).
  nlohmann::json cfg =
      nlohmann::json::parse(read_regular_file("predict", (dir / "config.json").string()));
  SpecFile spec = parse_spec(cfg.at("spec").dump(), (dir / "config.json").string());
  const TrainConfig c = spec.train.value_or(TrainConfig{});
  const ParamTable table = build_param_table(spec.net);
  const train::DetTargets d = train::det_targets(spec.net, table, c);
  std::vector<std::string> names;
  names = train::load_class_names(o.run_dir);
  const fs::path ckpt =
      fs::exists(dir / "best.safetensors") ? dir / "best.safetensors" : dir / "last.safetensors";
  auto backend = exec::make_backend(o.backend, o.engine);
  const int64_t n = static_cast<int64_t>(o.images.size());
  train::Evaluator ev(spec.net, n, *backend, &table);
  train::TrainState s = train::make_state(train::init_params(table, c.init, 0), {}, ev.manifest());
  train::load_checkpoint(ckpt.string(), table, s, false);
  // The images at the net's size, as the detection datasets load them (stretched).
  std::vector<Tensor> originals;
  Tensor x(DType::kUI8, {n, 3, d.height, d.width});
  for (int64_t i = 0; i < n; ++i) {
    originals.push_back(data::decode_image(o.images[i]));
    Tensor r = data::resize_bilinear(originals.back(), d.height, d.width);
    std::memcpy(x.data<uint8_t>() + i * r.numel(), r.raw(), r.nbytes());
  }
  data::Dataset ds(x, Tensor(DType::kI32, {n}), data::kImageNetNorm.mean, data::kImageNetNorm.std);
  train::NmsOptions no{o.iou, o.score, o.max_det};
  std::vector<train::Detection> dets = train::detect(ev, s.params, s.running, ds, d, no);
  auto name = [&](int k) { return k < int(names.size()) ? names[k] : fmt::format("class {}", k); };
  nlohmann::json out = nlohmann::json::array();
  int total_w = 0, max_h = 0;
  for (const Tensor& im : originals)
    total_w += int(im.shape()[2]), max_h = std::max(max_h, int(im.shape()[1]));
  const int up = std::max(1, 384 / std::max(max_h, 1));  // small images are drawn enlarged
  report::Canvas canvas(std::max(total_w * up, 1), std::max(max_h * up, 1));
  int ox = 0;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& im = originals[i];
    const int64_t h = im.shape()[1], w = im.shape()[2];
    const double sx = double(w) / double(d.width), sy = double(h) / double(d.height);
    report::RgbImage rgb{static_cast<int>(w), static_cast<int>(h)};
    const uint8_t* px = im.data<uint8_t>();
    for (int64_t q = 0; q < h * w; ++q)
      for (int ch = 0; ch < 3; ++ch) rgb.rgb[q * 3 + ch] = px[ch * h * w + q];
    canvas.image(rgb, ox, 0, double(w * up), double(h * up), true);
    nlohmann::json boxes = nlohmann::json::array();
    std::cout << fmt::format("{}:\n", o.images[i]);
    for (const train::Detection& det : dets) {
      if (det.image != i) continue;
      data::Box b{det.box.x0 * sx, det.box.y0 * sy, det.box.x1 * sx, det.box.y1 * sy, det.box.cls};
      b.x0 = std::clamp(b.x0, 0.0, double(w)), b.x1 = std::clamp(b.x1, 0.0, double(w));
      b.y0 = std::clamp(b.y0, 0.0, double(h)), b.y1 = std::clamp(b.y1, 0.0, double(h));
      std::cout << fmt::format("  {:<10} {:.3f}  [{:.1f}, {:.1f}, {:.1f}, {:.1f}]\n", name(b.cls),
                               det.score, b.x0, b.y0, b.x1, b.y1);
      boxes.push_back({{"class", b.cls},
                       {"name", name(b.cls)},
                       {"score", det.score},
                       {"box", {b.x0, b.y0, b.x1, b.y1}}});
      const data::Box drawn{b.x0 * up, b.y0 * up, b.x1 * up, b.y1 * up, b.cls};
      viz::draw_labelled_box(canvas, ox, 0, drawn, viz::box_colour(b.cls),
                             fmt::format("{} {:.2f}", name(b.cls), det.score));
    }
    out.push_back({{"image", o.images[i]}, {"detections", boxes}});
    ox += int(w) * up;
  }
  if (o.json) std::cout << out.dump(2) << "\n";
  if (!o.png.empty()) {
    canvas.write_png(o.png);
    std::cout << fmt::format("wrote {}\n", o.png);
  }
}

}  // namespace netspec::cli
