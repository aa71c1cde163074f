// Detection decoding, NMS and metrics (detection.h).
#include "tasks/detection/detection.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace netspec::train {
namespace {

using data::Box;

double sigmoid(double z) { return 1 / (1 + std::exp(-z)); }

// Best class and its softmax probability of logits z[0..k).
std::pair<int, double> best_class(const float* z, int64_t k) {
  if (k == 0) return {0, 1.0};
  const int64_t arg = std::max_element(z, z + k) - z;
  double sum = 0;
  for (int64_t c = 0; c < k; ++c) sum += std::exp(double(z[c]) - double(z[arg]));
  return {int(arg), 1 / sum};
}

// One class's matching over images at IoU threshold t (pycocotools evaluateImg + accumulate):
// returns (score, tp) of every kept detection in the stable score order, and the GT count.
struct Matched {
  std::vector<double> score;
  std::vector<char> tp;
  int64_t npos = 0;
};

Matched match_class(const std::vector<std::vector<const Detection*>>& per_image,
                    const std::vector<std::vector<Box>>& gts, int cls, double t, size_t max_det) {
  Matched m;
  std::vector<std::pair<double, char>> all;  // image order, then score order within each image
  for (size_t i = 0; i < gts.size(); ++i) {
    std::vector<const Box*> g;
    for (const Box& b : gts[i])
      if (b.cls == cls) g.push_back(&b);
    m.npos += int64_t(g.size());
    std::vector<const Detection*> d = per_image[i];
    std::stable_sort(d.begin(), d.end(),
                     [](const Detection* a, const Detection* b) { return a->score > b->score; });
    if (d.size() > max_det) d.resize(max_det);
    std::vector<char> used(g.size(), 0);
    const double thr = std::min(t, 1 - 1e-10);
    for (const Detection* det : d) {
      double best = thr;
      int hit = -1;
      for (size_t j = 0; j < g.size(); ++j) {
        if (used[j]) continue;
        const double iou = data::box_iou(det->box, *g[j]);
        if (iou < best) continue;
        best = iou;
        hit = int(j);
      }
      if (hit >= 0) used[hit] = 1;
      all.emplace_back(det->score, hit >= 0 ? 1 : 0);
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [s, tp] : all) {
    m.score.push_back(s);
    m.tp.push_back(tp);
  }
  return m;
}

// The VOC devkit's matching: every detection of the class in global score order takes the ground
// truth of max IoU in its image; a TP when that IoU > 0.5 and the box is not taken yet.
Matched voc_match(const std::vector<std::vector<const Detection*>>& per_image,
                  const std::vector<std::vector<Box>>& gts, int cls) {
  Matched m;
  std::vector<const Detection*> d;
  std::vector<std::vector<char>> used(gts.size());
  for (size_t i = 0; i < gts.size(); ++i) {
    d.insert(d.end(), per_image[i].begin(), per_image[i].end());
    for (const Box& b : gts[i]) m.npos += b.cls == cls;
    used[i].assign(gts[i].size(), 0);
  }
  std::stable_sort(d.begin(), d.end(),
                   [](const Detection* a, const Detection* b) { return a->score > b->score; });
  for (const Detection* det : d) {
    double best = -1;
    int hit = -1;
    const auto& g = gts[det->image];
    for (size_t j = 0; j < g.size(); ++j) {
      if (g[j].cls != cls) continue;
      const double iou = data::box_iou(det->box, g[j]);
      if (iou > best) best = iou, hit = int(j);
    }
    const bool tp = hit >= 0 && best > 0.5 && !used[det->image][hit];
    if (tp) used[det->image][hit] = 1;
    m.score.push_back(det->score);
    m.tp.push_back(tp ? 1 : 0);
  }
  return m;
}

// COCO 101-point AP of one class at one threshold (-1 without ground truth).
double coco_ap(const Matched& m) {
  if (m.npos == 0) return -1;
  const size_t n = m.tp.size();
  std::vector<double> rc(n), pr(n);
  double tp = 0, fp = 0;
  for (size_t i = 0; i < n; ++i) {
    (m.tp[i] ? tp : fp) += 1;
    rc[i] = tp / double(m.npos);
    pr[i] = tp / (fp + tp + 2.220446049250313e-16);  // np.spacing(1)
  }
  for (size_t i = n; i-- > 1;) pr[i - 1] = std::max(pr[i - 1], pr[i]);
  double sum = 0;
  for (int r = 0; r <= 100; ++r) {
    const double thr = r == 100 ? 1.0 : double(r) * 0.01;  // np.linspace(0, 1, 101)
    const size_t at = std::lower_bound(rc.begin(), rc.end(), thr) - rc.begin();
    sum += at < n ? pr[at] : 0.0;
  }
  return sum / 101;
}

// VOC all-point interpolated AP (-1 without ground truth).
double voc_ap(const Matched& m) {
  if (m.npos == 0) return -1;
  std::vector<double> rc{0}, pr{0};
  double tp = 0, fp = 0;
  for (char t : m.tp) {
    (t ? tp : fp) += 1;
    rc.push_back(tp / double(m.npos));
    pr.push_back(tp / (tp + fp));
  }
  rc.push_back(1);
  pr.push_back(0);
  for (size_t i = pr.size() - 1; i-- > 0;) pr[i] = std::max(pr[i], pr[i + 1]);
  double ap = 0;
  for (size_t i = 1; i < rc.size(); ++i) ap += (rc[i] - rc[i - 1]) * pr[i];
  return ap;
}

double mean_valid(const std::vector<double>& v) {
  double s = 0;
  int n = 0;
  for (double x : v)
    if (x >= 0) s += x, ++n;
  return n ? s / n : 0;
}

}  // namespace

std::vector<Detection> decode_anchor_rows(const Tensor& rows, const data::AnchorSpec& s,
                                          int64_t img_w, int64_t img_h, double min_score,
                                          int64_t image) {
  if (rows.shape().size() != 2 || rows.shape()[1] < 5 || rows.dtype() != DType::kF32)
    fail("decode", "expects f32 rows [N, 5 + K] (got {})", rows.type_str());
  const int64_t k = rows.shape()[1] - 5;
  const int64_t pairs = int64_t(s.anchors.size() / 2), a = s.per_cell > 0 ? s.per_cell : pairs;
  const float* p = rows.data<float>();
  std::vector<Detection> out;
  int64_t r = 0;
  for (size_t lv = 0; lv < s.strides.size(); ++lv) {
    const double st = s.strides[lv];
    const int64_t gw = img_w / int64_t(st), gh = img_h / int64_t(st);
    for (int64_t y = 0; y < gh; ++y)
      for (int64_t x = 0; x < gw; ++x)
        for (int64_t q = 0; q < a; ++q, ++r) {
          if (r >= rows.shape()[0]) fail("decode", "rows end at {} before the anchor layout", r);
          const float* z = p + r * (5 + k);
          const double obj = sigmoid(z[4]);
          if (obj < min_score) continue;
          auto [cls, pc] = best_class(z + 5, k);
          const double score = obj * pc;
          if (score < min_score) continue;
          const int64_t ai = (pairs == a ? 0 : int64_t(lv) * a) + q;
          const double cx = (double(x) + sigmoid(z[0])) * st, cy = (double(y) + sigmoid(z[1])) * st;
          const double w = s.anchors[2 * ai] * std::exp(double(z[2]));
          const double h = s.anchors[2 * ai + 1] * std::exp(double(z[3]));
          out.push_back({image, {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, cls}, score});
        }
  }
  if (r != rows.shape()[0])
    fail("decode", "{} rows but the anchor layout has {}", rows.shape()[0], r);
  return out;
}

std::vector<Detection> decode_yolov1(const Tensor& grid, int64_t img_w, int64_t img_h, bool diou,
                                     double min_score, int64_t image) {
  if (grid.shape().size() != 3 || grid.shape()[0] < 5 || grid.dtype() != DType::kF32)
    fail("decode", "expects an f32 grid [5 + K, gH, gW] (got {})", grid.type_str());
  const int64_t k = grid.shape()[0] - 5, gh = grid.shape()[1], gw = grid.shape()[2];
  const float* p = grid.data<float>();
  std::vector<Detection> out;
  for (int64_t i = 0; i < gh; ++i)
    for (int64_t j = 0; j < gw; ++j) {
      auto ch = [&](int64_t c) { return double(p[(c * gh + i) * gw + j]); };
      int cls = 0;
      double best = k ? ch(5) : 1.0;
      for (int64_t c = 1; c < k; ++c)
        if (ch(5 + c) > best) best = ch(5 + c), cls = int(c);
      const double score = ch(4) * best;
      if (score < min_score) continue;
      const double fx = diou ? sigmoid(ch(0)) : ch(0), fy = diou ? sigmoid(ch(1)) : ch(1);
      const double w = (diou ? std::exp(ch(2)) : std::max(ch(2), 0.0)) * double(img_w);
      const double h = (diou ? std::exp(ch(3)) : std::max(ch(3), 0.0)) * double(img_h);
      const double cx = (double(j) + fx) * double(img_w) / double(gw);
      const double cy = (double(i) + fy) * double(img_h) / double(gh);
      out.push_back({image, {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, cls}, score});
    }
  return out;
}

std::vector<Detection> nms(std::vector<Detection> d, double iou_thr, double score_thr,
                           int64_t max_det) {
  std::erase_if(d, [&](const Detection& x) { return x.score < score_thr; });
  std::stable_sort(d.begin(), d.end(),
                   [](const Detection& a, const Detection& b) { return a.score > b.score; });
  std::vector<Detection> keep;
  for (const Detection& x : d) {
    if (int64_t(keep.size()) >= max_det) break;
    bool ok = true;
    for (const Detection& y : keep)
      if (y.box.cls == x.box.cls && data::box_iou(x.box, y.box) > iou_thr) {
        ok = false;
        break;
      }
    if (ok) keep.push_back(x);
  }
  return keep;
}

DetMetrics evaluate_detections(const std::vector<Detection>& dets,
                               const std::vector<std::vector<Box>>& gts, int64_t classes) {
  DetMetrics m;
  std::vector<std::vector<std::vector<const Detection*>>> by(
      classes, std::vector<std::vector<const Detection*>>(gts.size()));
  for (const Detection& d : dets) {
    if (d.image < 0 || d.image >= int64_t(gts.size()) || d.box.cls < 0 || d.box.cls >= classes)
      fail("mAP", "detection of image {} class {} out of range", d.image, d.box.cls);
    by[d.box.cls][d.image].push_back(&d);
  }
  for (int c = 0; c < int(classes); ++c) {
    m.voc_ap50.push_back(voc_ap(voc_match(by[c], gts, c)));
    double sum = 0, ap50 = -1;
    for (int t = 0; t < 10; ++t) {
      const double thr = t == 9 ? 0.95 : 0.5 + double(t) * (0.45 / 9);  // np.linspace(.5, .95, 10)
      const double ap = coco_ap(match_class(by[c], gts, c, thr, 100));
      if (t == 0) ap50 = ap;
      sum += ap;
    }
    m.coco_ap.push_back(ap50 < 0 ? -1 : sum / 10);
    if (ap50 >= 0) m.coco_ap50 += ap50;
  }
  m.voc_map50 = mean_valid(m.voc_ap50);
  m.coco_map = mean_valid(m.coco_ap);
  int valid = 0;
  for (double a : m.coco_ap) valid += a >= 0;
  m.coco_ap50 = valid ? m.coco_ap50 / valid : 0;
  return m;
}

}  // namespace netspec::train
