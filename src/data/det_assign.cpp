// Box -> loss-target assignment (det_boxes.h).
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "data/det_boxes.h"

namespace netspec::data {
namespace {

// IoU of two boxes of sizes (w, h) sharing a centre.
double shape_iou(double w0, double h0, double w1, double h1) {
  const double inter = std::min(w0, w1) * std::min(h0, h1);
  return inter / (w0 * h0 + w1 * h1 - inter);
}

int64_t cell_of(double c, double stride, int64_t n) {
  return std::clamp<int64_t>(static_cast<int64_t>(std::floor(c / stride)), 0, n - 1);
}

void check_box(const Box& b, const char* where) {
  if (!(b.x1 > b.x0 && b.y1 > b.y0))
    fail(where, "box must have x1 > x0 and y1 > y0 (got [{}, {}, {}, {}])", b.x0, b.y0, b.x1, b.y1);
}

}  // namespace

double box_iou(const Box& a, const Box& b) {
  const double iw = std::max(0.0, std::min(a.x1, b.x1) - std::max(a.x0, b.x0));
  const double ih = std::max(0.0, std::min(a.y1, b.y1) - std::max(a.y0, b.y0));
  const double inter = iw * ih, uni = a.w() * a.h() + b.w() * b.h() - inter;
  return uni > 0 ? inter / uni : 0;
}

Tensor assign_yolov1(const std::vector<Box>& boxes, int64_t img_w, int64_t img_h, int64_t gh,
                     int64_t gw, int64_t classes) {
  const int64_t c = 6 + classes;
  Tensor t(DType::kF32, {c, gh, gw});
  float* v = t.data<float>();
  std::vector<double> owner(gh * gw, 0.0);  // area of the box owning each cell
  for (const Box& b : boxes) {
    check_box(b, "assign yolov1");
    if (b.cls < 0 || b.cls >= classes)
      fail("assign yolov1", "class out of range (got {}, expected 0..{})", b.cls, classes - 1);
    const double cx = (b.x0 + b.x1) / 2, cy = (b.y0 + b.y1) / 2;
    const double sx = double(img_w) / double(gw), sy = double(img_h) / double(gh);
    const int64_t j = cell_of(cx, sx, gw), i = cell_of(cy, sy, gh), cell = i * gw + j;
    const double area = b.w() * b.h();
    if (owner[cell] >= area) continue;
    owner[cell] = area;
    auto at = [&](int64_t ch) -> float& { return v[ch * gh * gw + cell]; };
    at(0) = float(cx / sx - double(j));
    at(1) = float(cy / sy - double(i));
    at(2) = float(b.w() / double(img_w));
    at(3) = float(b.h() / double(img_h));
    at(4) = 1;
    for (int64_t k = 0; k < classes; ++k) at(5 + k) = k == b.cls ? 1.0f : 0.0f;
    at(c - 1) = 1;
  }
  return t;
}

RowChoice choose_row(const Box& b, const AnchorSpec& s, int64_t img_w, int64_t img_h) {
  check_box(b, "assign anchors");
  const int64_t levels = static_cast<int64_t>(s.strides.size());
  const int64_t pairs = static_cast<int64_t>(s.anchors.size() / 2);
  const int64_t a = s.per_cell > 0 ? s.per_cell : pairs;
  if (levels < 1 || pairs < 1 || (pairs != a && pairs != levels * a))
    fail("assign anchors", "anchors: {} pairs for {} per cell at {} levels", pairs, a, levels);
  RowChoice r;
  auto best_anchor = [&](int64_t first, int64_t count, int64_t& k, double& best) {
    for (int64_t q = first; q < first + count; ++q) {
      const double iou = shape_iou(b.w(), b.h(), s.anchors[2 * q], s.anchors[2 * q + 1]);
      if (iou > best) best = iou, k = q;
    }
  };
  int64_t k = 0;
  double best = -1;
  if (pairs == a && levels > 1) {  // shared anchors: level by scale
    const double size = std::log2(std::sqrt(b.w() * b.h()));
    double nearest = 1e300;
    for (int64_t l = 0; l < levels; ++l) {
      const double d = std::abs(size - std::log2(4 * s.strides[l]));
      if (d < nearest) nearest = d, r.level = l;
    }
    best_anchor(0, a, k, best);
    r.anchor = k;
  } else {
    best_anchor(0, pairs, k, best);
    r.level = pairs == a ? 0 : k / a;
    r.anchor = k % a;
  }
  const double st = s.strides[r.level];
  const int64_t gw = img_w / int64_t(st), gh = img_h / int64_t(st);
  r.x = cell_of((b.x0 + b.x1) / 2, st, gw);
  r.y = cell_of((b.y0 + b.y1) / 2, st, gh);
  for (int64_t l = 0; l < r.level; ++l)
    r.row += (img_w / int64_t(s.strides[l])) * (img_h / int64_t(s.strides[l])) * a;
  r.row += (r.y * gw + r.x) * a + r.anchor;
  return r;
}

Tensor assign_anchor_rows(const std::vector<Box>& boxes, const AnchorSpec& s, int64_t img_w,
                          int64_t img_h) {
  const int64_t pairs = static_cast<int64_t>(s.anchors.size() / 2);
  const int64_t a = s.per_cell > 0 ? s.per_cell : pairs;
  int64_t n = 0;
  for (double st : s.strides) {
    if (img_w % int64_t(st) != 0 || img_h % int64_t(st) != 0)
      fail("assign anchors", "image {}x{} is not a multiple of stride {}", img_w, img_h, st);
    n += (img_w / int64_t(st)) * (img_h / int64_t(st)) * a;
  }
  Tensor t(DType::kF32, {n, 6});
  float* v = t.data<float>();
  std::vector<double> owner(n, 0.0);
  for (const Box& b : boxes) {
    const RowChoice r = choose_row(b, s, img_w, img_h);
    const double area = b.w() * b.h();
    if (owner[r.row] >= area) continue;
    owner[r.row] = area;
    const double st = s.strides[r.level];
    const int64_t q = (pairs == a ? 0 : r.level * a) + r.anchor;
    float* row = v + r.row * 6;
    row[0] = 1;
    row[1] = float((b.x0 + b.x1) / 2 / st - double(r.x));
    row[2] = float((b.y0 + b.y1) / 2 / st - double(r.y));
    row[3] = float(std::log(b.w() / s.anchors[2 * q]));
    row[4] = float(std::log(b.h() / s.anchors[2 * q + 1]));
    row[5] = float(b.cls);
  }
  return t;
}

}  // namespace netspec::data
