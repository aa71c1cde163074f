// Protein-fold report sections (fold_view.h).
#include "viz/fold_view.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "data/loader.h"
#include "report/pictures.h"
#include "tasks/fold/fold_metrics.h"
#include "tasks/fold/fold_task.h"
#include "train/evaluate.h"
#include "viz/report_page.h"

namespace netspec::viz {
namespace {

// Cα distance map of a chain's masked residues: grey level 255·min(d, 25)/25.
report::RgbImage distance_map(const std::vector<tasks::fold::Frame>& f, const Tensor& y,
                              int64_t i) {
  const int n = static_cast<int>(f.size());
  report::RgbImage img(n, n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      const float* ya = y.data<float>() + (i * n + a) * 13;
      const float* yb = y.data<float>() + (i * n + b) * 13;
      double d2 = 0;
      for (int k = 9; k < 12; ++k)
        d2 += std::pow(f[size_t(a)][size_t(k)] - f[size_t(b)][size_t(k)], 2);
      const bool on = ya[12] > 0 && yb[12] > 0;
      const auto g = static_cast<uint8_t>(on ? 255 * std::min(std::sqrt(d2), 25.0) / 25 : 255);
      const size_t p = size_t(3 * (a * n + b));
      img.rgb[p] = img.rgb[p + 1] = img.rgb[p + 2] = g;
    }
  return img;
}

}  // namespace

std::string fold_report_sections(const Model& m, const data::Dataset& test, const std::string& what,
                                 exec::Backend& be, int shown, double& seconds,
                                 const report::EvalLog& log) {
  const auto t0 = std::chrono::steady_clock::now();
  train::Evaluator ev(m.spec.net, m.train.batchSize, be, &m.table);
  report::EvalProgress bar(log, test.size(), (test.size() + ev.batch() - 1) / ev.batch(),
                           ev.batch(), "chains");
  ev.on_batch([&bar] { bar.batch_done(); });  // after finish(): the pictures' batches, quiet
  const train::EvalMetrics v = tasks::fold_evaluate(ev, m.params, m.running, test, {});
  bar.finish();
  // the first `shown` chains drawn: the first batches again
  data::Loader ld(test, ev.batch(), false, 0);
  ld.start_epoch(0);
  std::vector<report::Tile> tiles;
  for (int64_t b = 0; b < ld.num_batches() && int(tiles.size()) < 2 * shown; ++b) {
    Tensor x, y;
    const int64_t n = ld.batch(b, x, y);
    const Tensor out = ev.logits(m.params, m.running, x);
    for (int64_t i = 0; i < n && int(tiles.size()) < 2 * shown; ++i) {
      const int64_t k = b * ev.batch() + i;
      tiles.push_back({distance_map(tasks::fold::frames_at(y, i), y, i),
                       fmt::format("chain {}: true", k),
                       {},
                       {}});
      tiles.push_back(
          {distance_map(tasks::fold::frames_at(out, i), y, i),
           fmt::format("predicted (lDDT {:.1f})", tasks::fold::score_chain(out, y, i).lddt),
           {},
           {}});
    }
  }
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string h = "<h2 id=\"evaluation\">Evaluation</h2>\n";
  h += fmt::format(
      "<p class=\"big\">lDDT-Cα <b>{:.2f}</b>, FAPE <b>{:.3f} Å</b>, distogram cross-entropy "
      "<b>{:.4f}</b> (loss {:.4f}) over {} chains of {}</p>\n<p class=\"note\">AlphaFold 2's "
      "metrics: lDDT-Cα over Cα pairs within 15 Å (thresholds 0.5, 1, 2, 4 Å; 0-100), FAPE of "
      "the Cα atoms in every residue's backbone frame (clamped at 10 Å), the distogram head's "
      "cross-entropy against the true Cα distance bins (nats)</p>\n",
      v.lddt, v.fape, v.dist_ce, v.loss, v.count, html_escape(what));
  h += "<h2 id=\"distance-maps\">Distance maps</h2>\n";
  if (tiles.empty()) return h + "<p class=\"note\">no chains to draw</p>\n";
  return h + img_tag(report::grid_png(tiles, 4, 160), "true and predicted Cα distance maps") + "\n";
}

}  // namespace netspec::viz
