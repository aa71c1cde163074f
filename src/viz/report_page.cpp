// The run report page (see report_page.h).
#include "viz/report_page.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/safetensors.h"
#include "data/loader.h"
#include "data/sample_source.h"
#include "exec/backend.h"
#include "report/canvas.h"
#include "report/loss_plot.h"
#include "report/metrics_log.h"
#include "report/pictures.h"
#include "report/progress.h"
#include "spec/summary.h"
#include "tasks/task.h"
#include "train/config.h"
#include "train/evaluate.h"
#include "viz/cam.h"
#include "viz/det_view.h"
#include "viz/fold_view.h"
#include "viz/gen_view.h"
#include "viz/model.h"
#include "viz/nerf_view.h"
#include "viz/seg_view.h"

namespace netspec::viz {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", sans-serif; margin: 24px auto; max-width: 1100px; color: #222; }
h1 { font-size: 26px; } h2 { font-size: 20px; border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 32px; }
pre { background: #f6f6f6; padding: 10px; overflow-x: auto; font-size: 12px; max-height: 420px; }
table { border-collapse: collapse; font-size: 13px; } td, th { border: 1px solid #ddd; padding: 3px 7px; text-align: right; }
th { background: #f0f0f0; } td.name, th.name { text-align: left; }
img { max-width: 100%; } .note { color: #777; } .big { font-size: 18px; }
table.cm td { min-width: 34px; text-align: center; }
)";

// Evaluation of every sample scored: softmax probabilities and labels.
struct Scored {
  std::vector<std::vector<double>> probs;
  std::vector<int32_t> labels;
  std::vector<int64_t> samples;   // the split index of each (--skip-bad-images leaves some out)
  data::Loader::Skipped skipped;  // the samples left out as unreadable
  double seconds = 0;
};

// With o.log: "evaluating N samples ..." first, then a bar (terminal) or a line every 10 s with
// the running accuracy, then the time taken (report::EvalProgress).
Scored score(const Model& m, const data::Dataset& ds, exec::Backend& be, const ReportOptions& o) {
  const int64_t batch = std::min<int64_t>(m.train.batchSize, std::max<int64_t>(1, ds.size()));
  train::Evaluator ev(m.spec.net, batch, be, &m.table);
  data::Loader ld(ds, batch, false, 0);
  ld.set_skip_bad(ds.streamed() && data::pipeline_options().skip_bad);  // left out, counted
  ld.start_epoch(0);
  Scored s;
  report::EvalProgress bar({o.log, o.tty}, ds.size(), ld.num_batches(), batch, "samples",
                           "accuracy");
  auto t0 = Clock::now();
  int64_t right = 0;
  for (int64_t b = 0; b < ld.num_batches(); ++b) {
    Tensor x, y;
    std::vector<int64_t> rows;
    const int64_t n = ld.batch(b, x, y, &rows);
    auto p = train::softmax_rows(ev.logits(m.params, m.running, x), n);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t label = y.data<int32_t>()[i];
      right += std::max_element(p[i].begin(), p[i].end()) - p[i].begin() == label ? 1 : 0;
      s.probs.push_back(std::move(p[i]));
      s.labels.push_back(label);
      s.samples.push_back(rows[static_cast<size_t>(i)]);
    }
    bar.batch_done(static_cast<double>(right) /
                   static_cast<double>(std::max<size_t>(1, s.labels.size())));
  }
  bar.finish();
  s.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  s.skipped = ld.skipped();
  if (s.skipped.count > 0 && o.log)
    *o.log << train::skipped_eval_line("report", s.skipped.count, s.skipped.first,
                                       static_cast<int64_t>(s.labels.size()))
           << "\n";
  return s;
}

size_t argmax(const std::vector<double>& p) {
  return static_cast<size_t>(std::max_element(p.begin(), p.end()) - p.begin());
}

std::string evaluation_sections(const Model& m, const data::Dataset& ds, const std::string& what,
                                const Scored& s, const ReportOptions& o, exec::Backend& be) {
  const size_t n = s.labels.size(), k = m.table.output.at(0);
  std::vector<std::vector<int64_t>> cm(k, std::vector<int64_t>(k, 0));
  size_t right = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t p = argmax(s.probs[i]);
    cm.at(static_cast<size_t>(s.labels[i])).at(p)++;
    right += p == static_cast<size_t>(s.labels[i]);
  }
  std::string h = "<h2 id=\"evaluation\">Evaluation</h2>\n";
  h += fmt::format("<p class=\"big\">top-1 <b>{:.2f}%</b> on {} of {} ({:.2f} s)</p>\n",
                   100.0 * right / std::max<size_t>(n, 1), html_escape(what),
                   enum_name(m.train.dataset), s.seconds);
  if (s.skipped.count > 0)
    h += fmt::format("<p class=\"note\">{}</p>\n",
                     html_escape(train::skipped_eval_line("evaluation", s.skipped.count,
                                                          s.skipped.first, int64_t(n))));
  // Confusion matrix: rows = label, columns = prediction; cells shaded by row share.
  h += "<h2 id=\"confusion\">Confusion matrix</h2>\n<p class=\"note\">rows: label, columns: "
       "prediction; shading: share of the row</p>\n<table class=\"cm\"><tr><th></th>";
  for (size_t j = 0; j < k; ++j)
    h += fmt::format("<th title=\"{0}\">{1}</th>", html_escape(m.class_name(j)), j);
  h += "</tr>\n";
  for (size_t i = 0; i < k; ++i) {
    const int64_t row = std::accumulate(cm[i].begin(), cm[i].end(), int64_t{0});
    h += fmt::format("<tr><th class=\"name\">{} {}</th>", i, html_escape(m.class_name(i)));
    for (size_t j = 0; j < k; ++j) {
      const double f = row ? static_cast<double>(cm[i][j]) / row : 0;
      const int g = static_cast<int>(255 - 200 * f);
      h += fmt::format("<td style=\"background: rgb({},{},255); color: {}\">{}</td>", g, g,
                       f > 0.5 ? "#fff" : "#222", cm[i][j]);
    }
    h += "</tr>\n";
  }
  h += "</table>\n<h2 id=\"per-class\">Per-class accuracy</h2>\n<table><tr><th class=\"name\">"
       "class</th><th>samples</th><th>correct</th><th>accuracy</th></tr>\n";
  for (size_t i = 0; i < k; ++i) {
    const int64_t row = std::accumulate(cm[i].begin(), cm[i].end(), int64_t{0});
    h += fmt::format("<tr><td class=\"name\">{} {}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", i,
                     html_escape(m.class_name(i)), row, cm[i][i],
                     row ? fmt::format("{:.1f}%", 100.0 * cm[i][i] / row) : "-");
  }
  h += "</table>\n";

  const bool images = ds.x.shape().size() == 4;
  h += "<h2 id=\"wrong\">Most confidently wrong</h2>\n";
  std::vector<size_t> wrong;
  for (size_t i = 0; i < n; ++i)
    if (argmax(s.probs[i]) != static_cast<size_t>(s.labels[i])) wrong.push_back(i);
  std::stable_sort(wrong.begin(), wrong.end(), [&](size_t a, size_t b) {
    return s.probs[a][argmax(s.probs[a])] > s.probs[b][argmax(s.probs[b])];
  });
  wrong.resize(std::min<size_t>(wrong.size(), static_cast<size_t>(std::max(0, o.wrong))));
  if (!images) {
    h += "<p class=\"note\">the samples are not images</p>\n";
  } else if (wrong.empty()) {
    h += "<p class=\"note\">no sample is misclassified</p>\n";
  } else {
    std::vector<report::Tile> tiles;
    for (size_t i : wrong)
      tiles.push_back({sample_picture(ds, s.samples[i], m.train.dataset),
                       fmt::format("sample {}", s.samples[i]), top_k(m, s.probs[i], 3),
                       m.class_name(s.labels[i])});
    h += img_tag(report::grid_png(tiles, 6, 140), "most confidently wrong images") + "\n";
  }

  h += "<h2 id=\"gradcam\">Grad-CAM</h2>\n";
  if (!images) return h + "<p class=\"note\">the samples are not images</p>\n";
  // A few samples: the most confidently wrong ones first, then the first correct ones.
  std::vector<size_t> pick(wrong.begin(),
                           wrong.begin() + std::min<size_t>(wrong.size(), o.cam / 2));
  for (size_t i = 0; i < n && pick.size() < static_cast<size_t>(o.cam); ++i)
    if (argmax(s.probs[i]) == static_cast<size_t>(s.labels[i])) pick.push_back(i);
  try {
    const int64_t b = static_cast<int64_t>(pick.size());
    GradCam gc(m, b, be);
    Shape xs = ds.x.shape();
    xs[0] = b;
    Tensor x(DType::kF32, xs);
    if (b == 0) return h + "<p class=\"note\">no samples</p>\n";
    data::Loader ld(ds, 1, false, 0);  // batch i of size 1 is sample i, normalised
    ld.start_epoch(0);
    for (int64_t j = 0; j < b; ++j) {
      Tensor one, y;
      ld.batch(s.samples[pick[j]], one, y);
      std::memcpy(static_cast<uint8_t*>(x.raw()) + j * one.nbytes(), one.raw(), one.nbytes());
    }
    std::vector<CamOut> cams = gc.run(x, b);
    for (int64_t j = 0; j < b; ++j) {
      const size_t i = pick[j];
      const int64_t si = s.samples[i];  // the split's index
      h += img_tag(cam_panel(m, sample_picture(ds, si, m.train.dataset), cams[j],
                             fmt::format("sample {} (label {})", si, m.class_name(s.labels[i]))),
                   fmt::format("Grad-CAM of sample {}", si)) +
           "\n";
    }
  } catch (const Error& e) {
    h += fmt::format("<p class=\"note\">not available: {}</p>\n", html_escape(e.what()));
  }
  return h;
}

// The epoch table; its score column is the task's (segmentation: pixel accuracy and mIoU;
// detection: mAP@0.5; else top-1).
std::string timings_section(const std::vector<report::Row>& epochs, double eval_s,
                            tasks::TaskKind task) {
  using tasks::TaskKind;
  const bool seg = task == TaskKind::segmentation, det = task == TaskKind::detection;
  const bool text = task == TaskKind::text, fold = task == TaskKind::fold;
  const bool nerf = task == TaskKind::nerf;
  const bool none = task == TaskKind::diffusion || task == TaskKind::regression;
  std::string h = fmt::format(
      "<h2 id=\"timings\">Timings</h2>\n<table><tr><th>epoch</th><th>seconds</th><th>ms/step</th>"
      "<th>samples/s</th><th>train loss</th><th>val loss</th>{}</tr>\n",
      seg    ? "<th>val pixel acc</th><th>val mIoU</th>"
      : det  ? "<th>val mAP@0.5</th><th>val mAP@[.5:.95]</th>"
      : text ? "<th>val bits/char</th>"
      : nerf ? "<th>val PSNR (dB)</th>"
      : fold ? "<th>val lDDT-Cα</th><th>val FAPE (Å)</th><th>val distogram CE</th>"
      : none ? ""
             : "<th>val top-1</th>");
  double total = 0;
  auto cell = [](std::optional<double> v, const char* f) {
    return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");
  };
  for (const report::Row& r : epochs) {
    total += report::get(r, "seconds").value_or(0);
    auto top1 = report::get(r, "val_top1");
    std::string score = "<td>" + (top1 ? fmt::format("{:.2f}%", 100 * *top1) : "-") + "</td>";
    if (seg) score += "<td>" + cell(report::get(r, "val_miou"), "{:.4f}") + "</td>";
    if (det)
      score = "<td>" + cell(report::get(r, "val_map50"), "{:.4f}") + "</td><td>" +
              cell(report::get(r, "val_map"), "{:.4f}") + "</td>";
    if (text) score = "<td>" + cell(report::get(r, "val_bpc"), "{:.4f}") + "</td>";
    if (nerf) score = "<td>" + cell(report::get(r, "val_psnr"), "{:.2f}") + "</td>";
    if (fold)
      score = "<td>" + cell(report::get(r, "val_lddt_ca"), "{:.2f}") + "</td><td>" +
              cell(report::get(r, "val_fape"), "{:.3f}") + "</td><td>" +
              cell(report::get(r, "val_dist_ce"), "{:.4f}") + "</td>";
    if (none) score.clear();
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}</tr>\n",
        cell(report::get(r, "epoch"), "{:.0f}"), cell(report::get(r, "seconds"), "{:.1f}"),
        cell(report::get(r, "ms_per_step"), "{:.2f}"),
        cell(report::get(r, "samples_per_s"), "{:.0f}"),
        cell(report::get(r, "train_loss"), "{:.4f}"), cell(report::get(r, "val_loss"), "{:.4f}"),
        score);
  }
  h += "</table>\n";
  h += fmt::format("<p>training {:.1f} s over {} epochs; this report's evaluation {:.2f} s</p>\n",
                   total, epochs.size(), eval_s);
  return h;
}

// The evaluation sections of the run's task; eval_s gets their evaluation time.
std::string task_sections(const Model& m, tasks::TaskKind task, const ReportOptions& o,
                          const ReportData& d, exec::Backend& be, double& eval_s) {
  const report::EvalLog log{o.log, o.tty};  // every task prints its evaluation's progress
  // Classification, regression and DDPM read the split through the Loader (and its source for
  // their pictures); the other tasks' sections read its tensors whole.
  if (task != tasks::TaskKind::classification && task != tasks::TaskKind::regression &&
      task != tasks::TaskKind::diffusion)
    data::require_in_ram(d.splits.test, "report",
                         fmt::format("the {} task's report", tasks::task_name(task)));
  if (task == tasks::TaskKind::segmentation) {
    const SegScored s = score_segmentation(m, d.splits.test, be, log);
    eval_s = s.seconds;
    return seg_report_sections(m, d.splits.test, d.what, s, o.panels);
  }
  if (task == tasks::TaskKind::detection)
    return det_report_sections(m, d.splits, d.what, be, o.panels, eval_s, log);
  if (task == tasks::TaskKind::text || d.splits.text)
    return text_report_sections(m, d.splits, o.run_dir, o.backend, be, o.tokens, eval_s, log);
  if (task == tasks::TaskKind::fold)
    return fold_report_sections(m, d.splits.test, d.what, be, o.panels, eval_s, log);
  if (task == tasks::TaskKind::regression)
    return regression_report_sections(m, d.splits.test, d.what, be, o.panels, eval_s, log);
  if (task == tasks::TaskKind::nerf)
    return nerf_report_sections(m, d.splits, d.what, be, o.panels, eval_s, log);
  if (task == tasks::TaskKind::diffusion)
    return ddpm_report_sections(m, d.splits.test, d.what, be, 4 * o.panels, 20, eval_s, log);
  Scored s = score(m, d.splits.test, be, o);
  eval_s = s.seconds;
  return evaluation_sections(m, d.splits.test, d.what, s, o, be);
}

}  // namespace

std::string img_tag(const std::string& png, const std::string& alt) {
  return fmt::format("<img alt=\"{}\" src=\"data:image/png;base64,{}\">", html_escape(alt),
                     report::base64(png));
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string write_report(const ReportOptions& o, const ReportData& d) {
  const fs::path dir(o.run_dir);
  Model m = load_model(o.run_dir, "", "");
  const tasks::TaskKind task = tasks::task_kind(m.spec.net, m.train);
  auto be = exec::make_backend(o.backend);
  const std::vector<report::Row> epochs = report::read_jsonl((dir / "metrics.jsonl").string());
  const std::vector<report::Row> steps =
      report::read_jsonl((dir / "steps.jsonl").string(), report::kPlotRows);  // thinned

  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += fmt::format("<title>netspec run {}</title>\n<style>{}</style></head><body>\n",
                   html_escape(m.spec.net.name), kStyle);
  h += fmt::format(
      "<h1>Run report: {}</h1>\n<p>{} run, directory <code>{}</code>, checkpoint "
      "<code>{}</code></p>\n",
      html_escape(m.spec.net.name), tasks::task_name(task), html_escape(fs::absolute(dir).string()),
      html_escape(fs::path(m.checkpoint).filename().string()));
  h += "<h2 id=\"config\">Configuration</h2>\n<pre>" + html_escape(slurp(dir / "config.json")) +
       "</pre>\n";
  h += "<h2 id=\"net\">Net</h2>\n<pre>" + html_escape(format_summary(m.spec.net, m.table)) +
       "</pre>\n";
  h += "<h2 id=\"curves\">Curves</h2>\n";
  if (epochs.empty() && steps.empty()) {
    h += "<p class=\"note\">no metrics.jsonl / steps.jsonl yet</p>\n";
  } else {
    report::PlotSpec ps = report::loss_plot_spec(epochs, steps);
    if (task == tasks::TaskKind::diffusion || task == tasks::TaskKind::regression ||
        task == tasks::TaskKind::nerf) {
      // their val_top1 column is 0: the loss is their score (no right axis)
      std::erase_if(ps.series, [](const report::Series& s) { return s.right_axis; });
      ps.right_label.clear();
    }
    report::Canvas c(ps.width, ps.height);
    report::Plot p(ps, c);
    h += img_tag(c.png_bytes(), "training curves") + "\n";
  }
  double eval_s = 0;
  if (!d.error.empty()) {
    h += fmt::format(
        "<h2 id=\"evaluation\">Evaluation</h2>\n<p class=\"note\">the evaluation split "
        "could not be loaded: {}</p>\n",
        html_escape(d.error));
  } else {
    try {
      h += task_sections(m, task, o, d, *be, eval_s);
    } catch (const Error& e) {
      h += fmt::format(
          "<h2 id=\"evaluation\">Evaluation</h2>\n<p class=\"note\">not available: {}</p>\n",
          html_escape(e.what()));
      if (o.log) *o.log << "report: the evaluation is not available: " << e.what() << "\n";
    }
  }
  h += timings_section(epochs, eval_s, task);
  h += "</body></html>\n";
  const std::string out = o.out.empty() ? (dir / "report.html").string() : o.out;
  write_file_atomic(out, h);
  return out;
}

}  // namespace netspec::viz
