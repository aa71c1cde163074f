// Grad-CAM runs and panels (see cam.h).
#include "viz/cam.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/error.h"
#include "emit/emit.h"
#include "report/heatmap.h"
#include "report/pictures.h"
#include "train/evaluate.h"

namespace netspec::viz {

GradCam::GradCam(const Model& m, int64_t batch, exec::Backend& backend) : m_(m), batch_(batch) {
  emit::EmitOptions eo;
  eo.batch = batch;
  emit::Emitted e = emit::emit_module(m.spec.net, m.table, ModuleKind::grad_cam, eo);
  exe_ = backend.load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
}

std::vector<Tensor> GradCam::inputs(const Tensor& x, const std::vector<int32_t>& k) const {
  std::vector<Tensor> in = m_.params;
  in.insert(in.end(), m_.running.begin(), m_.running.end());
  in.push_back(x);
  Tensor kt(DType::kI32, {batch_});
  std::memcpy(kt.raw(), k.data(), k.size() * sizeof(int32_t));
  in.push_back(kt);
  return in;
}

std::vector<CamOut> GradCam::run(const Tensor& x, int64_t n, int64_t cls) const {
  const int64_t classes = m_.table.output.at(0);
  if (cls >= classes)
    fail("cam", "--class {} is out of range (the net has {} classes)", cls, classes);
  std::vector<int32_t> k(static_cast<size_t>(batch_),
                         static_cast<int32_t>(std::max<int64_t>(cls, 0)));
  std::vector<Tensor> r = exe_->run("main", inputs(x, k));
  auto probs = train::softmax_rows(r[0], n);
  if (cls < 0) {  // explain each row's top class: rerun with K = argmax
    for (int64_t i = 0; i < n; ++i)
      k[i] = static_cast<int32_t>(std::max_element(probs[i].begin(), probs[i].end()) -
                                  probs[i].begin());
    r = exe_->run("main", inputs(x, k));
  }
  const Shape& fs = r[1].shape();  // [B, C, h, w]
  if (fs.size() != 4) fail("cam", "cam features must be [B, C, H, W] (got {})", shape_str(fs));
  const int64_t c = fs[1], h = fs[2], w = fs[3];
  std::vector<CamOut> out;
  for (int64_t i = 0; i < n; ++i) {
    CamOut o;
    o.probs = probs[i];
    o.cls = k[i];
    o.h = h;
    o.w = w;
    o.map = report::grad_cam_map(r[1].data<float>() + i * c * h * w,
                                 r[2].data<float>() + i * c * h * w, c, h, w);
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<std::pair<std::string, double>> top_k(const Model& m, const std::vector<double>& p,
                                                  size_t k) {
  std::vector<size_t> idx(p.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < std::min(k, idx.size()); ++i)
    out.emplace_back(m.class_name(static_cast<int64_t>(idx[i])), p[idx[i]]);
  return out;
}

std::string cam_panel(const Model& m, const report::RgbImage& picture, const CamOut& c,
                      const std::string& title) {
  constexpr int kSize = 224;
  report::RgbImage big = report::resize_nearest(picture, kSize, kSize);
  report::RgbImage over = report::overlay(big, c.map, c.h, c.w);
  return report::cam_panel_png(
      picture, over,
      fmt::format("{}  Grad-CAM for {} ({:.1f}%)", title, m.class_name(c.cls),
                  100 * c.probs.at(static_cast<size_t>(c.cls))),
      top_k(m, c.probs, 5), kSize);
}

}  // namespace netspec::viz
