// Segmentation views (see seg_view.h).
#include "viz/seg_view.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>

#include "core/error.h"
#include "data/loader.h"
#include "tasks/segmentation/seg_metrics.h"
#include "viz/report_page.h"

namespace netspec::viz {
namespace {

// Mean IoU of one image over the classes in its truth or its prediction.
double image_miou(const int32_t* t, const int32_t* p, int64_t hw, int64_t classes) {
  std::vector<int64_t> inter(size_t(classes), 0), uni(size_t(classes), 0);
  for (int64_t i = 0; i < hw; ++i) {
    if (t[i] == p[i]) {
      ++inter[size_t(t[i])], ++uni[size_t(t[i])];
    } else {
      ++uni[size_t(t[i])], ++uni[size_t(p[i])];
    }
  }
  double sum = 0;
  int present = 0;
  for (int64_t k = 0; k < classes; ++k)
    if (uni[size_t(k)] > 0) sum += double(inter[size_t(k)]) / double(uni[size_t(k)]), ++present;
  return present ? sum / present : 0;
}

std::string panels_tag(const Model& m, const data::Dataset& ds, const SegScored& s,
                       const std::vector<int64_t>& pick, const std::vector<double>& iou,
                       const std::vector<std::string>& names, const std::string& alt) {
  const Shape& ms = s.masks.shape();
  const int64_t hw = ms[1] * ms[2];
  std::vector<SegPanel> rows;
  for (int64_t i : pick)
    rows.push_back({sample_picture(ds, i, m.train.dataset), ds.y.data<int32_t>() + i * hw,
                    s.masks.data<int32_t>() + i * hw,
                    fmt::format("sample {}: mIoU {:.3f}", i, iou[size_t(i)])});
  return img_tag(seg_panels_png(rows, names), alt) + "\n";
}

}  // namespace

report::Rgb class_colour(int64_t k) {
  static constexpr report::Rgb kTab10[] = {
      {31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
      {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  return kTab10[static_cast<size_t>(std::max<int64_t>(k, 0) % 10)];
}

Tensor argmax_masks(const Tensor& logits, int64_t n) {
  const Shape& ls = logits.shape();
  if (ls.size() != 4)
    fail("segmentation", "expected per-pixel logits [B, C, H, W] (got {})", logits.type_str());
  const int64_t c = ls[1], hw = ls[2] * ls[3];
  Tensor out(DType::kI32, {n, ls[2], ls[3]});
  const float* l = logits.data<float>();
  int32_t* o = out.data<int32_t>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < hw; ++i) {
      const float* z = l + b * c * hw + i;  // the tie rule of SegScorer: the first maximum
      int64_t arg = 0;
      for (int64_t j = 1; j < c; ++j)
        if (z[j * hw] > z[arg * hw]) arg = j;
      o[b * hw + i] = static_cast<int32_t>(arg);
    }
  return out;
}

report::RgbImage mask_overlay(const report::RgbImage& img, const int32_t* mask, double alpha) {
  report::RgbImage out = img;
  for (int i = 0; i < img.width * img.height; ++i) {
    const report::Rgb c = class_colour(mask[i]);
    for (int ch = 0; ch < 3; ++ch)
      out.rgb[size_t(i * 3 + ch)] = static_cast<uint8_t>(
          std::lround((1 - alpha) * img.rgb[size_t(i * 3 + ch)] + alpha * c[size_t(ch)]));
  }
  return out;
}

report::RgbImage mask_picture(const int32_t* mask, int w, int h) {
  report::RgbImage out(w, h);
  for (int i = 0; i < w * h; ++i) {
    const report::Rgb c = class_colour(mask[i]);
    std::copy(c.begin(), c.end(), out.rgb.begin() + i * 3);
  }
  return out;
}

double draw_legend(const report::Canvas* c, const std::vector<std::string>& names, double x,
                   double y, double width) {
  constexpr double kFs = 13, kRow = 20, kBox = 13, kGap = 18;
  report::Canvas probe(1, 1);  // text widths when only measuring
  const report::Canvas& tc = c ? *c : probe;
  double cx = x, cy = y;
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string label = fmt::format("{} {}", k, names[k]);
    const double w = kBox + 5 + tc.text_width(label, kFs) + kGap;
    if (cx > x && cx + w > x + width) cx = x, cy += kRow;
    if (c) {
      c->rect(cx, cy + 3, kBox, kBox, class_colour(int64_t(k)));
      c->text(cx + kBox + 5, cy + 14, label, kFs, {40, 40, 40});
    }
    cx += w;
  }
  return names.empty() ? 0 : cy - y + kRow;
}

std::string seg_panels_png(const std::vector<SegPanel>& rows, const std::vector<std::string>& names,
                           int cell) {
  if (rows.empty()) fail("segmentation", "no images to draw");
  constexpr double kPad = 10, kHead = 20, kCap = 18;
  // No truth known for any row (predict): image | prediction only.
  const bool truth = std::any_of(rows.begin(), rows.end(), [](auto& r) { return r.truth; });
  const int cols = truth ? 3 : 2;
  const double width = std::max(cols * cell + (cols + 1) * kPad, 320.0);
  const double legend = draw_legend(nullptr, names, kPad, 0, width - 2 * kPad);
  const double row_h = kCap + cell + kPad;
  report::Canvas c(static_cast<int>(width),
                   static_cast<int>(kHead + row_h * double(rows.size()) + legend + kPad));
  const std::vector<std::string> heads =
      truth ? std::vector<std::string>{"image", "truth", "prediction"}
            : std::vector<std::string>{"image", "prediction"};
  for (int j = 0; j < cols; ++j)
    c.text(kPad + j * (cell + kPad) + cell / 2.0, 15, heads[size_t(j)], 14, {40, 40, 40},
           report::Align::center, true);
  for (size_t r = 0; r < rows.size(); ++r) {
    const SegPanel& p = rows[r];
    const double y = kHead + row_h * double(r);
    c.text(kPad, y + 14, p.caption, 13, {90, 90, 90});
    const int w = p.image.width, h = p.image.height;
    std::vector<report::RgbImage> pics{p.image};
    if (truth)
      pics.push_back(p.truth ? mask_overlay(p.image, p.truth, 0.55) : report::RgbImage(w, h));
    pics.push_back(mask_overlay(p.image, p.pred, 0.55));
    const double s = double(cell) / std::max(w, h);
    for (size_t j = 0; j < pics.size(); ++j)
      c.image(pics[j], kPad + double(j) * (cell + kPad), y + kCap, w * s, h * s, w < cell);
  }
  draw_legend(&c, names, kPad, kHead + row_h * double(rows.size()), width - 2 * kPad);
  return c.png_bytes();
}

SegScored score_segmentation(const Model& m, const data::Dataset& ds, exec::Backend& be,
                             const report::EvalLog& log) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t batch = std::min<int64_t>(m.train.batchSize, std::max<int64_t>(1, ds.size()));
  train::Evaluator ev(m.spec.net, batch, be, &m.table);
  data::Loader ld(ds, batch, false, 0);
  ld.start_epoch(0);
  train::SegScorer sc;
  SegScored s;
  if (ds.y.rank() != 3)
    fail("report", "segmentation labels must be i32 [N, H, W] (got {})", ds.y.type_str());
  s.masks = Tensor(DType::kI32, ds.y.shape());
  const int64_t hw = ds.y.shape()[1] * ds.y.shape()[2];
  report::EvalProgress bar(log, ds.size(), ld.num_batches(), batch, "images", "pixel accuracy");
  for (int64_t b = 0, at = 0; b < ld.num_batches(); ++b) {
    Tensor x, y;
    const int64_t n = ld.batch(b, x, y);
    const Tensor logits = ev.logits(m.params, m.running, x);
    sc.add(logits, y, n);  // batch sums in batch order, as training's evaluation folds them
    const Tensor mk = argmax_masks(logits, n);
    std::memcpy(s.masks.data<int32_t>() + at * hw, mk.raw(), mk.nbytes());
    at += n;
    int64_t right = 0;  // the confusion matrix's diagonal
    for (int64_t k = 0; k < sc.classes; ++k) right += sc.confusion[size_t(k * sc.classes + k)];
    bar.batch_done(sc.count ? double(right) / double(sc.count) : 0.0);
  }
  bar.finish();
  sc.fill(s.metrics);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

std::string seg_report_sections(const Model& m, const data::Dataset& ds, const std::string& what,
                                const SegScored& s, int shown) {
  const train::EvalMetrics& e = s.metrics;
  const int64_t classes = int64_t(e.iou.size()), n = s.masks.shape()[0];
  const int64_t hw = s.masks.shape()[1] * s.masks.shape()[2];
  std::vector<std::string> names;
  for (int64_t k = 0; k < classes; ++k) names.push_back(m.class_name(k));
  std::string h = "<h2 id=\"evaluation\">Evaluation</h2>\n";
  h += fmt::format(
      "<p class=\"big\">mIoU <b>{:.4f}</b>, Dice <b>{:.4f}</b>, pixel accuracy <b>{:.2f}%</b> "
      "on {} pixels of {} ({:.2f} s)</p>\n",
      e.miou, e.dice, 100 * e.top1, e.count, html_escape(what), s.seconds);
  // Per class: IoU and Dice from the split's confusion counts, and the pixel shares.
  std::vector<int64_t> truth(size_t(classes), 0), pred(size_t(classes), 0);
  for (int64_t i = 0; i < n * hw; ++i)
    ++truth[size_t(ds.y.data<int32_t>()[i])], ++pred[size_t(s.masks.data<int32_t>()[i])];
  h += "<h2 id=\"per-class\">Per-class IoU</h2>\n<table><tr><th class=\"name\">class</th>"
       "<th>IoU</th><th>Dice</th><th>pixels (truth)</th><th>pixels (predicted)</th></tr>\n";
  auto num = [](double v) { return std::isnan(v) ? std::string("-") : fmt::format("{:.4f}", v); };
  for (int64_t k = 0; k < classes; ++k)
    h += fmt::format(
        "<tr><td class=\"name\"><span style=\"color: rgb({},{},{})\">&#9632;</span> {} {}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        class_colour(k)[0], class_colour(k)[1], class_colour(k)[2], k,
        html_escape(names[size_t(k)]), num(e.iou[size_t(k)]), num(e.class_dice[size_t(k)]),
        truth[size_t(k)], pred[size_t(k)]);
  h += "</table>\n";
  std::vector<double> iou(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    iou[size_t(i)] =
        image_miou(ds.y.data<int32_t>() + i * hw, s.masks.data<int32_t>() + i * hw, hw, classes);
  const int64_t k = std::min<int64_t>(n, std::max(0, shown));
  h += "<h2 id=\"samples\">Samples</h2>\n<p class=\"note\">image | truth | prediction, the "
       "first samples of the split; the class colours are blended over the image</p>\n";
  if (k == 0) return h + "<p class=\"note\">no samples</p>\n";
  std::vector<int64_t> first(static_cast<size_t>(k));
  std::iota(first.begin(), first.end(), 0);
  h += panels_tag(m, ds, s, first, iou, names, "image, truth and prediction of the first samples");
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return iou[size_t(a)] < iou[size_t(b)]; });
  order.resize(size_t(k));
  h += "<h2 id=\"worst\">Worst IoU</h2>\n<p class=\"note\">the samples with the lowest mean IoU "
       "(over the classes in their truth or prediction)</p>\n";
  h += panels_tag(m, ds, s, order, iou, names, "the worst-IoU samples");
  return h;
}

}  // namespace netspec::viz
