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

std::vector<Tensor> GradCam::inputs(const Tensor& x, const std::vector<int32_t>& k,
                                    const Tensor* mask) const {
  std::vector<Tensor> in = m_.params;
  in.insert(in.end(), m_.running.begin(), m_.running.end());
  in.push_back(x);
  Tensor kt(DType::kI32, {batch_});
  std::memcpy(kt.raw(), k.data(), k.size() * sizeof(int32_t));
  in.push_back(kt);
  if (mask) in.push_back(*mask);
  return in;
}

std::vector<std::vector<double>> GradCam::pixel_classes(const Tensor& logits, int64_t n,
                                                        int64_t cls, std::vector<int32_t>& k,
                                                        Tensor& mask) const {
  const Shape& s = logits.shape();  // [B, C, H, W]
  const int64_t classes = s[1], hw = s[2] * s[3];
  const float* l = logits.data<float>();
  float* mk = mask.data<float>();
  std::vector<std::vector<double>> share;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> pred(static_cast<size_t>(hw));
    std::vector<double> count(static_cast<size_t>(classes), 0.0);
    for (int64_t p = 0; p < hw; ++p) {
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (l[(i * classes + c) * hw + p] > l[(i * classes + best) * hw + p]) best = c;
      pred[p] = best;
      count[best] += 1;
    }
    int64_t ki = cls;
    if (ki < 0) {  // the most predicted class other than the background
      ki = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (count[c] > 0 && (ki == 0 || count[c] > count[ki])) ki = c;
    }
    k[i] = static_cast<int32_t>(ki);
    for (int64_t p = 0; p < hw; ++p) mk[i * hw + p] = pred[p] == ki ? 1.0f : 0.0f;
    for (double& c : count) c /= static_cast<double>(hw);
    share.push_back(std::move(count));
  }
  return share;
}

std::vector<CamOut> GradCam::run(const Tensor& x, int64_t n, int64_t cls) const {
  const int64_t classes = m_.table.output.at(0);
  if (cls >= classes)
    fail("cam", "--class {} is out of range (the net has {} classes)", cls, classes);
  std::vector<int32_t> k(static_cast<size_t>(batch_),
                         static_cast<int32_t>(std::max<int64_t>(cls, 0)));
  std::vector<std::vector<double>> probs;
  std::vector<Tensor> r;
  if (per_pixel()) {  // logits first, then explain each row's class over its predicted pixels
    const Shape& os = m_.table.output;
    Tensor mask(DType::kF32, {batch_, os[1], os[2]});
    std::memset(mask.raw(), 0, static_cast<size_t>(mask.numel()) * sizeof(float));
    r = exe_->run("main", inputs(x, k, &mask));
    probs = pixel_classes(r[0], n, cls, k, mask);
    r = exe_->run("main", inputs(x, k, &mask));
  } else {
    r = exe_->run("main", inputs(x, k, nullptr));
    probs = train::softmax_rows(r[0], n);
    if (cls < 0) {  // explain each row's top class: rerun with K = argmax
      for (int64_t i = 0; i < n; ++i)
        k[i] = static_cast<int32_t>(std::max_element(probs[i].begin(), probs[i].end()) -
                                    probs[i].begin());
      r = exe_->run("main", inputs(x, k, nullptr));
    }
  }
  const Shape& fs = r[1].shape();  // [B, C, h, w]
  if (fs.size() != 4) fail("cam", "cam features must be [B, C, H, W] (got {})", shape_str(fs));
  const int64_t c = fs[1], h = fs[2], w = fs[3];
  std::vector<CamOut> out;
  for (int64_t i = 0; i < n; ++i) {
    CamOut o;
    o.probs = probs[i];
    o.per_pixel = per_pixel();
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
      fmt::format("{}  Grad-CAM for {} ({:.1f}%{})", title, m.class_name(c.cls),
                  100 * c.probs.at(static_cast<size_t>(c.cls)), c.per_pixel ? " of pixels" : ""),
      top_k(m, c.probs, 5), kSize);
}

}  // namespace netspec::viz
