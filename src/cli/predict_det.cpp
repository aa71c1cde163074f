// Detector prediction from a run directory (predict_det.h).
#include "cli/predict_det.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/det_data.h"
#include "data/image.h"
#include "layers/param_table.h"
#include "report/plot.h"
#include "spec/spec_json.h"
#include "train/checkpoint.h"
#include "train/det_train.h"
#include "train/trainer.h"

namespace netspec::cli {
namespace {

namespace fs = std::filesystem;

void draw_box(report::Image& img, int ox, const data::Box& b, report::Rgb c) {
  const int x0 = ox + int(b.x0), x1 = ox + int(b.x1) - 1, y0 = int(b.y0), y1 = int(b.y1) - 1;
  for (int t = 0; t < 2; ++t) {
    for (int x = x0; x <= x1; ++x) img.set(x, y0 + t, c), img.set(x, y1 - t, c);
    for (int y = y0; y <= y1; ++y) img.set(x0 + t, y, c), img.set(x1 - t, y, c);
  }
}

}  // namespace

void predict_run_dir(const PredictDetOptions& o) {
  const fs::path dir(o.run_dir);
  std::ifstream cf(dir / "config.json");
  if (!cf) fail("predict", "{}: no config.json (not a run directory)", o.run_dir);
  nlohmann::json cfg = nlohmann::json::parse(cf);
  SpecFile spec = parse_spec(cfg.at("spec").dump(), (dir / "config.json").string());
  const TrainConfig c = spec.train.value_or(TrainConfig{});
  const ParamTable table = build_param_table(spec.net);
  const train::DetTargets d = train::det_targets(spec.net, table, c);
  std::vector<std::string> names;
  if (std::ifstream nf(dir / "classes.json"); nf) names = nlohmann::json::parse(nf);
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
  report::Image canvas(std::max(total_w * up, 1), std::max(max_h * up, 1), {255, 255, 255});
  int ox = 0;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& im = originals[i];
    const int64_t h = im.shape()[1], w = im.shape()[2];
    const double sx = double(w) / double(d.width), sy = double(h) / double(d.height);
    for (int64_t y = 0; y < h; ++y)
      for (int64_t xx = 0; xx < w; ++xx) {
        const uint8_t* p = im.data<uint8_t>();
        for (int k = 0; k < up * up; ++k)
          canvas.set(ox + int(xx) * up + k % up, int(y) * up + k / up,
                     {p[y * w + xx], p[(h + y) * w + xx], p[(2 * h + y) * w + xx]});
      }
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
      static const report::Rgb kCols[] = {
          {255, 255, 0}, {0, 255, 255}, {255, 0, 255}, {255, 128, 0}};
      const report::Rgb col = kCols[b.cls % 4];
      const data::Box drawn{b.x0 * up, b.y0 * up, b.x1 * up, b.y1 * up, b.cls};
      draw_box(canvas, ox, drawn, col);
      const std::string label = fmt::format("{} {:.2f}", name(b.cls), det.score);
      const int ty = std::max(0, int(drawn.y0) - 12);
      for (int yy = ty; yy < ty + 12; ++yy)
        for (int xx = ox + int(drawn.x0); xx < ox + int(drawn.x0) + report::text_width(label) + 4;
             ++xx)
          canvas.set(xx, yy, {0, 0, 0});
      report::draw_text(canvas, ox + int(drawn.x0) + 2, ty + 1, label, col);
    }
    out.push_back({{"image", o.images[i]}, {"detections", boxes}});
    ox += int(w) * up;
  }
  if (o.json) std::cout << out.dump(2) << "\n";
  if (!o.png.empty()) {
    report::write_png(o.png, canvas);
    std::cout << fmt::format("wrote {}\n", o.png);
  }
}

}  // namespace netspec::cli
