// Box-aware augmentation (det_boxes.h): the image and its boxes move by one map.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "data/det_boxes.h"

namespace netspec::data {
namespace {

void check_image(const Tensor& img, const char* where) {
  if (img.dtype() != DType::kUI8 || img.shape().size() != 3)
    fail(where, "expects a ui8 image [C, H, W] (got {} {})", dtype_name(img.dtype()),
         img.shape().size());
}

}  // namespace

void hflip(Tensor& img, std::vector<Box>& boxes) {
  check_image(img, "hflip");
  const int64_t c = img.shape()[0], h = img.shape()[1], w = img.shape()[2];
  uint8_t* p = img.data<uint8_t>();
  for (int64_t r = 0; r < c * h; ++r) std::reverse(p + r * w, p + (r + 1) * w);
  for (Box& b : boxes) {
    const double x0 = double(w) - b.x1, x1 = double(w) - b.x0;
    b.x0 = x0;
    b.x1 = x1;
  }
}

std::vector<Box> map_boxes(const std::vector<Box>& boxes, double s, double tx, double ty, int64_t w,
                           int64_t h, const DropRule& rule) {
  std::vector<Box> out;
  for (const Box& b : boxes) {
    Box m{s * b.x0 + tx, s * b.y0 + ty, s * b.x1 + tx, s * b.y1 + ty, b.cls};
    const double full = m.w() * m.h();
    Box c{std::clamp(m.x0, 0.0, double(w)), std::clamp(m.y0, 0.0, double(h)),
          std::clamp(m.x1, 0.0, double(w)), std::clamp(m.y1, 0.0, double(h)), b.cls};
    if (c.w() <= 0 || c.h() <= 0) continue;  // entirely outside the frame
    if (c.w() < rule.wh_thr || c.h() < rule.wh_thr) continue;
    if (c.w() * c.h() < rule.area_thr * full) continue;
    out.push_back(c);
  }
  return out;
}

Tensor warp_scale_translate(const Tensor& img, double s, double tx, double ty, uint8_t fill) {
  check_image(img, "affine");
  if (!(s > 0)) fail("affine", "scale must be > 0 (got {})", s);
  const int64_t c = img.shape()[0], h = img.shape()[1], w = img.shape()[2];
  Tensor out(DType::kUI8, img.shape());
  const uint8_t* src = img.data<uint8_t>();
  uint8_t* dst = out.data<uint8_t>();
  // Output pixel centre (x + 0.5) comes from source (x + 0.5 - tx) / s: nearest neighbour.
  for (int64_t y = 0; y < h; ++y) {
    const double sy = (double(y) + 0.5 - ty) / s;
    const int64_t iy = static_cast<int64_t>(std::floor(sy));
    for (int64_t x = 0; x < w; ++x) {
      const double sx = (double(x) + 0.5 - tx) / s;
      const int64_t ix = static_cast<int64_t>(std::floor(sx));
      const bool in = iy >= 0 && iy < h && ix >= 0 && ix < w;
      for (int64_t ch = 0; ch < c; ++ch)
        dst[(ch * h + y) * w + x] = in ? src[(ch * h + iy) * w + ix] : fill;
    }
  }
  return out;
}

void crop(Tensor& img, std::vector<Box>& boxes, int64_t x0, int64_t y0, int64_t cw, int64_t ch,
          const DropRule& rule) {
  check_image(img, "crop");
  const int64_t c = img.shape()[0], h = img.shape()[1], w = img.shape()[2];
  if (x0 < 0 || y0 < 0 || cw < 1 || ch < 1 || x0 + cw > w || y0 + ch > h)
    fail("crop", "window [{}, {}] + {}x{} outside the {}x{} image", x0, y0, cw, ch, w, h);
  Tensor out(DType::kUI8, {c, ch, cw});
  const uint8_t* src = img.data<uint8_t>();
  uint8_t* dst = out.data<uint8_t>();
  for (int64_t k = 0; k < c; ++k)
    for (int64_t y = 0; y < ch; ++y)
      std::copy_n(src + (k * h + y0 + y) * w + x0, cw, dst + (k * ch + y) * cw);
  img = std::move(out);
  boxes = map_boxes(boxes, 1.0, -double(x0), -double(y0), cw, ch, rule);
}

void random_affine(Tensor& img, std::vector<Box>& boxes, const AffineAug& a, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1), pm(-1, 1);
  if (a.prob <= 0 || u(rng) >= a.prob) return;
  const int64_t h = img.shape()[1], w = img.shape()[2];
  const double s = 1 + pm(rng) * a.scale;
  const double dx = pm(rng) * a.translate * double(w), dy = pm(rng) * a.translate * double(h);
  // About the frame centre: x' = s·(x - W/2) + W/2 + dx.
  const double tx = (1 - s) * double(w) / 2 + dx, ty = (1 - s) * double(h) / 2 + dy;
  img = warp_scale_translate(img, s, tx, ty, 114);
  boxes = map_boxes(boxes, s, tx, ty, w, h, a.rule);
}

}  // namespace netspec::data
