// Generative runs' report sections (see gen_view.h).
#include "viz/gen_view.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "data/loader.h"
#include "data/text.h"
#include "report/pictures.h"
#include "tasks/diffusion/ddpm.h"
#include "tasks/text/generate.h"
#include "train/trainer.h"
#include "viz/report_page.h"

namespace netspec::viz {
namespace {

// Sample i of x [n, C, H, W] in [-1, 1] as a picture (one channel: gray).
report::RgbImage sample_rgb(const Tensor& x, int64_t i) {
  const int64_t c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  report::RgbImage img(static_cast<int>(w), static_cast<int>(h));
  const float* p = x.data<float>() + i * c * h * w;
  for (int64_t q = 0; q < h * w; ++q)
    for (int64_t ch = 0; ch < 3; ++ch) {
      const double v = p[std::min(ch, c - 1) * h * w + q];
      img.rgb[size_t(q * 3 + ch)] =
          static_cast<uint8_t>(std::lround(std::clamp((v + 1) / 2, 0.0, 1.0) * 255));
    }
  return img;
}

// Batches of b that cover n samples (the loader's count: the last one padded).
int64_t batches(int64_t n, int64_t b) { return (n + b - 1) / b; }

}  // namespace

std::string ddpm_report_sections(const Model& m, const data::Dataset& test, const std::string& what,
                                 exec::Backend& be, int samples, int ddim, double& seconds,
                                 const report::EvalLog& log) {
  const auto t0 = std::chrono::steady_clock::now();
  const train::DdpmSchedule sched(m.train);
  // The validation batch size: ddpm_evaluate draws t and ε per batch, so training's batches give
  // training's numbers.
  train::Evaluator ev(m.spec.net, m.train.batchSize, be, &m.table);
  const int64_t scored = std::min<int64_t>(test.size(), 1024);
  report::EvalProgress bar(log, scored, batches(scored, ev.batch()), ev.batch(), "images");
  ev.on_batch([&bar] { bar.batch_done(); });
  const train::EvalMetrics e =
      train::ddpm_evaluate(sched, m.train.dataset, ev, m.params, m.running, test, 1024);
  bar.finish();
  std::string h = "<h2 id=\"evaluation\">Evaluation</h2>\n";
  h += fmt::format(
      "<p class=\"big\">noise-prediction MSE <b>{:.4f}</b> on the first {} images of {} (T = {}, "
      "the timesteps and noise training's validation draws)</p>\n",
      e.loss, scored, html_escape(what), sched.steps());
  h += "<h2 id=\"samples\">Samples</h2>\n";
  if (samples <= 0) return h + "<p class=\"note\">no samples asked for</p>\n";
  const train::Evaluator sev(m.spec.net, samples, be, &m.table);
  const Tensor x = train::ddpm_sample(sched, sev, m.params, m.running, 0, ddim);
  std::vector<report::Tile> tiles;
  for (int64_t i = 0; i < samples; ++i) tiles.push_back({sample_rgb(x, i), "", {}, {}});
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  h += fmt::format(
      "<p class=\"note\">{} samples by DDIM (eta 0) in {} steps from seed 0, the run's {} "
      "checkpoint (`netspec sample RUN --ddim {} --n {}` draws the same)</p>\n",
      samples, ddim, m.checkpoint.find("best") != std::string::npos ? "best" : "last", ddim,
      samples);
  return h + img_tag(report::grid_png(tiles, 8, 96), "DDPM samples") + "\n";
}

std::string text_report_sections(const Model& m, const data::Splits& sp, const std::string& run_dir,
                                 const std::string& backend, exec::Backend& be, int tokens,
                                 double& seconds, const report::EvalLog& log) {
  const auto t0 = std::chrono::steady_clock::now();
  train::Evaluator ev(m.spec.net, m.train.batchSize, be, &m.table);
  report::EvalProgress bar(log, sp.test.size(), batches(sp.test.size(), ev.batch()), ev.batch(),
                           "windows");
  ev.on_batch([&bar] { bar.batch_done(); });
  const train::EvalMetrics e = ev.run(m.params, m.running, sp.test);
  bar.finish();
  std::string h = "<h2 id=\"evaluation\">Evaluation</h2>\n";
  h += fmt::format(
      "<p class=\"big\">validation loss <b>{:.4f}</b>, <b>{:.4f}</b> bits per character "
      "(unigram {:.4f}) on {} tokens of {}</p>\n",
      e.loss, train::bits_per_char(e.loss), data::unigram_bits_per_char(*sp.text), e.count,
      enum_name(m.train.dataset));
  // The prompt: the start of the first window's second line (its first may be cut), so that it
  // reads as the corpus does.
  const data::Vocab vocab =
      data::load_vocab((std::filesystem::path(run_dir) / "vocab.json").string());
  const int64_t t = sp.test.x.rank() == 2 && sp.test.size() > 0 ? sp.test.x.shape()[1] : 0;
  const int32_t* w = t ? sp.test.x.data<int32_t>() : nullptr;
  const int32_t nl = vocab.id(U'\n');
  int64_t from = 0;
  while (from < t && w[from] != nl) ++from;
  from = from < t ? from + 1 : 0;  // no newline: the window's start
  std::vector<int32_t> ids;
  for (int64_t i = from; i < t && w[i] != nl && ids.size() < 12; ++i) ids.push_back(w[i]);
  h += "<h2 id=\"generated\">Generated text</h2>\n";
  if (ids.empty()) return h + "<p class=\"note\">no prompt: the validation split is empty</p>\n";
  tasks::GenerateOptions g;
  g.run_dir = run_dir;
  g.prompt = vocab.decode(ids);
  g.backend = backend;
  g.tokens = tokens;
  h += fmt::format(
      "<p class=\"note\">{} characters after the prompt <code>{}</code> from the last "
      "checkpoint, as <code>netspec generate RUN --prompt P --tokens {} --temperature T</code> "
      "writes them</p>\n",
      tokens, html_escape(g.prompt), tokens);
  for (const double temp : {0.0, 0.8}) {
    g.temperature = temp;
    const std::string out = tasks::generate_text(g);
    h += fmt::format("<p>{}:</p>\n<pre id=\"generated-t{}\"><b>{}</b>{}</pre>\n",
                     temp == 0 ? "greedy (temperature 0)" : "temperature 0.8, seed 0",
                     temp == 0 ? "0" : "08", html_escape(g.prompt), html_escape(out));
  }
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return h;
}

std::string regression_report_sections(const Model& m, const data::Dataset& test,
                                       const std::string& what, exec::Backend& be, int shown,
                                       double& seconds, const report::EvalLog& log) {
  const auto t0 = std::chrono::steady_clock::now();
  train::Evaluator ev(m.spec.net, m.train.batchSize, be, &m.table);
  data::Loader ld(test, ev.batch(), false, 0);
  ld.start_epoch(0);
  report::EvalProgress bar(log, test.size(), ld.num_batches(), ev.batch());
  ev.on_batch([&bar] { bar.batch_done(); });
  double sum = 0;
  int64_t count = 0;
  const bool images = test.x.rank() == 4;
  std::vector<report::Tile> tiles;
  for (int64_t b = 0; b < ld.num_batches(); ++b) {
    Tensor x, y;
    const int64_t n = ld.batch(b, x, y);
    const Tensor out = ev.logits(m.params, m.running, x);
    const int64_t per = out.numel() / out.shape().at(0);
    double batch = 0;  // summed per batch, then in batch order: training's validation bits
    for (int64_t i = 0; i < n * per; ++i) {
      const double d = double(out.data<float>()[i]) - x.data<float>()[i];
      batch += d * d;
    }
    sum += batch;
    count += n * per;
    const Shape chw(x.shape().begin() + 1, x.shape().end());
    for (int64_t i = 0; images && i < n && int(tiles.size()) < 2 * shown; ++i) {
      const int64_t k = b * ev.batch() + i;
      tiles.push_back({tensor_picture(x.data<float>() + i * per, chw, m.train.dataset),
                       fmt::format("input {}", k),
                       {},
                       {}});
      tiles.push_back({tensor_picture(out.data<float>() + i * per, chw, m.train.dataset),
                       fmt::format("output {}", k),
                       {},
                       {}});
    }
  }
  bar.finish();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string h = "<h2 id=\"evaluation\">Evaluation</h2>\n";
  h += fmt::format(
      "<p class=\"big\">reconstruction MSE <b>{:.4f}</b> over {} values of {} (the net is "
      "trained to reproduce its input)</p>\n",
      count ? sum / double(count) : 0.0, count, html_escape(what));
  h += "<h2 id=\"reconstructions\">Reconstructions</h2>\n";
  if (tiles.empty()) return h + "<p class=\"note\">the samples are not images</p>\n";
  return h + img_tag(report::grid_png(tiles, 8, 96), "inputs and their reconstructions") + "\n";
}

}  // namespace netspec::viz
