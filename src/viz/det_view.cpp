// Detection views (see det_view.h).
#include "viz/det_view.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "tasks/detection/det_train.h"
#include "viz/report_page.h"

namespace netspec::viz {
namespace {

// Prediction | ground truth for each image, `cell` px per picture, as PNG bytes. The predictions
// drawn are the image's best-scoring ones, as many as its true boxes plus two, above 0.05.
std::string box_panels_png(const Model& m, const data::Splits& sp,
                           const std::vector<train::Detection>& dets, int shown, int cell = 256) {
  const auto& gts = sp.det->test.boxes;
  const int n = std::min<int>(shown, static_cast<int>(gts.size()));
  if (n <= 0) fail("report", "no images to draw");
  constexpr double kPad = 10, kHead = 22, kCap = 18;
  const double row_h = kCap + cell + kPad;
  report::Canvas c(static_cast<int>(2 * cell + 3 * kPad), static_cast<int>(kHead + row_h * n));
  c.text(kPad + cell / 2.0, 16, "prediction", 14, {40, 40, 40}, report::Align::center, true);
  c.text(2 * kPad + cell * 1.5, 16, "ground truth", 14, {40, 40, 40}, report::Align::center, true);
  for (int i = 0; i < n; ++i) {
    const report::RgbImage pic = sample_picture(sp.test, i, m.train.dataset);
    const double s = double(cell) / std::max(pic.width, pic.height);
    const double y = kHead + row_h * i + kCap;
    std::vector<train::Detection> mine;
    for (const train::Detection& d : dets)
      if (d.image == i && d.score >= 0.05) mine.push_back(d);
    std::stable_sort(mine.begin(), mine.end(),
                     [](const auto& a, const auto& b) { return a.score > b.score; });
    mine.resize(std::min(mine.size(), gts[size_t(i)].size() + 2));
    c.text(
        kPad, y - 5,
        fmt::format("image {}: {} predicted, {} true boxes", i, mine.size(), gts[size_t(i)].size()),
        13, {90, 90, 90});
    const double x[2] = {kPad, 2 * kPad + cell};
    for (double ox : x) c.image(pic, ox, y, pic.width * s, pic.height * s, pic.width < cell);
    auto scaled = [&](const data::Box& b) {
      return data::Box{b.x0 * s, b.y0 * s, b.x1 * s, b.y1 * s, b.cls};
    };
    for (const train::Detection& d : mine)
      draw_labelled_box(c, x[0], y, scaled(d.box), box_colour(d.box.cls),
                        fmt::format("{} {:.2f}", m.class_name(d.box.cls), d.score));
    for (const data::Box& b : gts[size_t(i)])
      draw_labelled_box(c, x[1], y, scaled(b), box_colour(b.cls), m.class_name(b.cls));
  }
  return c.png_bytes();
}

std::string ap_cell(double v) { return v < 0 ? std::string("-") : fmt::format("{:.4f}", v); }

}  // namespace

report::Rgb box_colour(int k) {
  static constexpr report::Rgb kCols[] = {
      {255, 255, 0}, {0, 255, 255}, {255, 0, 255}, {255, 128, 0}};
  return kCols[std::max(k, 0) % 4];
}

void draw_box(const report::Canvas& c, double ox, double oy, const data::Box& b, report::Rgb col,
              double thick) {
  c.rect(ox + b.x0, oy + b.y0, b.w(), thick, col);
  c.rect(ox + b.x0, oy + b.y1 - thick, b.w(), thick, col);
  c.rect(ox + b.x0, oy + b.y0, thick, b.h(), col);
  c.rect(ox + b.x1 - thick, oy + b.y0, thick, b.h(), col);
}

void draw_labelled_box(const report::Canvas& c, double ox, double oy, const data::Box& b,
                       report::Rgb col, const std::string& label) {
  draw_box(c, ox, oy, b, col);
  const double ty = b.y0 >= 16 ? b.y0 - 16 : b.y0;  // inside the box at the image's top edge
  c.rect(ox + b.x0, oy + ty, c.text_width(label, 12) + 6, 16, {0, 0, 0});
  c.text(ox + b.x0 + 3, oy + ty + 12, label, 12, col);
}

std::string det_report_sections(const Model& m, const data::Splits& sp, const std::string& what,
                                exec::Backend& be, int shown, double& seconds,
                                const report::EvalLog& log) {
  if (!sp.det) fail("report", "the evaluation split has no boxes (not a detection dataset)");
  const auto t0 = std::chrono::steady_clock::now();
  const train::DetTargets d = train::det_targets(m.spec.net, m.table, m.train);
  const int64_t n = sp.test.size();
  train::Evaluator ev(m.spec.net, std::min<int64_t>(m.train.batchSize, std::max<int64_t>(1, n)), be,
                      &m.table);
  report::EvalProgress bar(log, n, (n + ev.batch() - 1) / ev.batch(), ev.batch(), "images");
  ev.on_batch([&bar] { bar.batch_done(); });
  train::NmsOptions o;
  o.score = 0.001;  // evaluate_det's protocol, so the numbers are training's
  const std::vector<train::Detection> dets = train::detect(ev, m.params, m.running, sp.test, d, o);
  bar.finish();
  const train::DetMetrics mm = train::evaluate_detections(dets, sp.det->test.boxes, d.classes);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string h = "<h2 id=\"evaluation\">Evaluation</h2>\n";
  h += fmt::format(
      "<p class=\"big\">mAP@0.5 <b>{:.4f}</b>, mAP@[.5:.95] <b>{:.4f}</b> on {} images of {} "
      "({:.2f} s)</p>\n",
      mm.voc_map50, mm.coco_map, n, html_escape(what), seconds);
  std::vector<int64_t> gt(size_t(d.classes), 0), pred(size_t(d.classes), 0);
  for (const auto& boxes : sp.det->test.boxes)
    for (const data::Box& b : boxes)
      if (b.cls >= 0 && b.cls < d.classes) ++gt[size_t(b.cls)];
  for (const train::Detection& x : dets)
    if (x.score >= 0.05 && x.box.cls >= 0 && x.box.cls < d.classes) ++pred[size_t(x.box.cls)];
  h += "<h2 id=\"per-class\">Per-class AP</h2>\n<p class=\"note\">VOC AP@0.5 and COCO "
       "AP@[.5:.95] per class; -: no true box of the class in the split</p>\n<table><tr><th "
       "class=\"name\">class</th><th>true boxes</th><th>predicted (score &ge; 0.05)</th>"
       "<th>AP@0.5</th><th>AP@[.5:.95]</th></tr>\n";
  for (int64_t k = 0; k < d.classes; ++k)
    h += fmt::format(
        "<tr><td class=\"name\">{} {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", k,
        html_escape(m.class_name(k)), gt[size_t(k)], pred[size_t(k)],
        ap_cell(mm.voc_ap50.at(size_t(k))), ap_cell(mm.coco_ap.at(size_t(k))));
  h += "</table>\n<h2 id=\"boxes\">Boxes</h2>\n<p class=\"note\">the first images of the split: "
       "the best-scoring predictions (as many as the true boxes plus two, score &ge; 0.05) beside "
       "the ground truth</p>\n";
  if (shown <= 0 || n == 0) return h + "<p class=\"note\">no images</p>\n";
  return h + img_tag(box_panels_png(m, sp, dets, shown), "predicted and true boxes") + "\n";
}

}  // namespace netspec::viz
