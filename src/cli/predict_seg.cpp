// Segmentation prediction (predict_seg.h).
#include "cli/predict_seg.h"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/image_write.h"
#include "report/pictures.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/evaluate.h"
#include "train/trainer.h"
#include "viz/model.h"
#include "viz/seg_slide.h"
#include "viz/seg_view.h"

namespace netspec::cli {

void predict_segmentation(const PredictSegOptions& o) {
  namespace fs = std::filesystem;
  const ParamTable& table = *o.table;
  const TrainConfig& c = *o.config;
  const int64_t n = static_cast<int64_t>(o.images.size());
  auto backend = exec::make_backend(o.backend, o.engine);
  // Windows are scored 4 at a time (a wide image needs 2-3 of them).
  train::Evaluator ev(o.spec->net, 4, *backend, &table);
  train::TrainState s = train::make_state(train::init_params(table, c.init, 0), {}, ev.manifest());
  train::load_checkpoint(o.checkpoint, table, s, false);
  // Logits of every image at its own size (sliding windows over the covering resize).
  std::vector<viz::FullMask> masks;
  for (const std::string& in : o.images)
    masks.push_back(viz::segment_whole_image(ev, s.params, s.running, in, table.input, c.dataset));
  const int64_t classes = table.output.at(0);
  std::vector<std::string> names;
  for (int64_t k = 0; k < classes; ++k)
    names.push_back(k < int64_t(o.names.size()) ? o.names[size_t(k)] : fmt::format("class {}", k));
  const std::string mask_dir = !o.masks.empty() ? o.masks
                               : !o.png.empty() ? fs::absolute(o.png).parent_path().string()
                                                : std::string();
  if (!mask_dir.empty()) fs::create_directories(mask_dir);
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  std::vector<viz::SegPanel> panels;
  for (int64_t i = 0; i < n; ++i) {
    const std::string& in = o.images[size_t(i)];
    const viz::FullMask& fm = masks[size_t(i)];
    const int64_t h = fm.height, w = fm.width;
    std::vector<int64_t> count(size_t(classes), 0);
    for (int32_t v : fm.mask) ++count[size_t(v)];
    nlohmann::ordered_json r, fr = nlohmann::ordered_json::array();
    r["input"] = in;
    std::string line = in + ":";
    for (int64_t k = 0; k < classes; ++k) {
      const double f = double(count[size_t(k)]) / double(h * w);
      fr.push_back({{"class", names[size_t(k)]},
                    {"index", k},
                    {"pixels", count[size_t(k)]},
                    {"fraction", f}});
      line += fmt::format("{} {} {:.1f}%", k ? "," : "", names[size_t(k)], 100 * f);
    }
    r["size"] = {w, h};
    r["classes"] = fr;
    if (!mask_dir.empty()) {
      Tensor g(DType::kUI8, {h, w});
      for (int64_t q = 0; q < h * w; ++q)
        g.data<uint8_t>()[q] = static_cast<uint8_t>(fm.mask[size_t(q)]);
      const std::string mp =
          (fs::path(mask_dir) / (fs::path(in).stem().string() + ".mask.png")).string();
      data::write_png_gray(mp, g);
      r["mask"] = mp;
      line += "  mask " + mp;
    }
    all.push_back(r);
    if (!o.json) std::cout << line << "\n";
    if (!o.png.empty())
      panels.push_back({fm.picture, nullptr, fm.picture_mask.data(),
                        fs::path(in).filename().string()});
  }
  if (o.json) std::cout << all.dump(2) << "\n";
  if (!o.png.empty()) {
    report::write_bytes(o.png, viz::seg_panels_png(panels, names, 192));
    if (!o.json) std::cout << "wrote " << o.png << "\n";
  }
}

}  // namespace netspec::cli
