// NeRF report sections (see nerf_view.h).
#include "viz/nerf_view.h"

#include <algorithm>
#include <chrono>

#include "data/radiance_field.h"
#include "report/pictures.h"
#include "tasks/nerf/render.h"
#include "viz/report_page.h"

namespace netspec::viz {
namespace {

// View v of colours [n, 3] as a picture of H x W.
report::RgbImage view_picture(const Tensor& c, int64_t v, int64_t h, int64_t w) {
  report::RgbImage im(static_cast<int>(w), static_cast<int>(h));
  for (int64_t i = 0; i < h * w; ++i)
    for (int k = 0; k < 3; ++k) {
      const double x = std::clamp(double(c.data<float>()[(v * h * w + i) * 3 + k]), 0.0, 1.0);
      im.rgb[size_t(i * 3 + k)] = uint8_t(x * 255 + 0.5);
    }
  return im;
}

}  // namespace

std::string nerf_report_sections(const Model& m, const data::Splits& sp, const std::string& what,
                                 exec::Backend& be, int shown, double& seconds,
                                 const report::EvalLog& log) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!sp.views) fail("report", "a nerf run's data must be radiance-field rays (no view layout)");
  const data::RayViews& v = *sp.views;
  const tasks::RaySampling rs = tasks::RaySampling::from(m.train);
  train::Evaluator ev(m.spec.net, int64_t{m.train.batchSize} * rs.samples, be, &m.table);
  const int64_t rb = m.train.batchSize;  // rays per eval call
  report::EvalProgress bar(log, sp.test.size(), (sp.test.size() + rb - 1) / rb, rb, "rays");
  ev.on_batch([&bar] { bar.batch_done(); });
  const Tensor pred = tasks::render_rays(ev, m.params, m.running, sp.test.x, rs);
  bar.finish();
  const int64_t per = v.height * v.width, views = sp.test.size() / per;
  const double all = tasks::squared_error(pred, sp.test.y) / double(3 * sp.test.size());
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string h = "<h2 id=\"evaluation\">Evaluation</h2>\n";
  h += fmt::format(
      "<p class=\"big\">PSNR <b>{:.2f} dB</b> (colour MSE {:.5f}) over {} rays of {} held-out "
      "views of {} ({} samples per ray over [{}, {}])</p>\n<table><tr><th>view</th><th>PSNR "
      "(dB)</th></tr>\n",
      tasks::psnr(all), all, sp.test.size(), views, html_escape(what), rs.samples, rs.near,
      rs.far);
  std::vector<report::Tile> tiles;
  for (int64_t k = 0; k < views; ++k) {
    double e = 0;
    for (int64_t i = k * per * 3; i < (k + 1) * per * 3; ++i) {
      const double d = double(pred.data<float>()[i]) - double(sp.test.y.data<float>()[i]);
      e += d * d;
    }
    const double p = tasks::psnr(e / double(3 * per));
    h += fmt::format("<tr><td>{}</td><td>{:.2f}</td></tr>\n", k, p);
    if (k < shown) {
      tiles.push_back({view_picture(pred, k, v.height, v.width),
                       fmt::format("view {} rendered ({:.1f} dB)", k, p), {}, {}});
      tiles.push_back({view_picture(sp.test.y, k, v.height, v.width),
                       fmt::format("view {} truth", k), {}, {}});
    }
  }
  h += "</table>\n<h2 id=\"renders\">Renders</h2>\n";
  return h + img_tag(report::grid_png(tiles, 4, 160), "held-out views rendered and their truth") +
         "\n";
}

}  // namespace netspec::viz
