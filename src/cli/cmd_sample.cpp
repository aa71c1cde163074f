// `netspec sample RUN_DIR [--n 64] [--steps T] [--seed S] [--ddim K] [--checkpoint best|last|ema]
// [--chunk B] [--grid G] [--scale N] [--npy F] [--judge CLF_RUN [--judge-p P]] -o grid.png`: draws
// DDPM samples from a run of a ddpm net (RUN_DIR/config.json + its checkpoint) through the eval
// module, ancestral over T steps or DDIM over K, B at a time (chunk j uses seed S + j), and writes
// the first G as a PNG grid (ceil(sqrt(G)) columns, [-1, 1] mapped to 0..255, first channels as
// gray or RGB; --scale N draws each pixel as an N x N block).
// --judge classifies every sample with a classifier run (sample_judge.h) and prints the result.
// --chunk-dir keeps each finished chunk, so a long sampling stopped part way continues.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/run_target.h"
#include "core/error.h"
#include "core/npy.h"
#include "data/datasets.h"
#include "data/image_write.h"
#include "data/loader.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "tasks/diffusion/ddpm.h"
#include "tasks/diffusion/sample_judge.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace netspec::cli {
namespace {

namespace fs = std::filesystem;

// the first n of samples [N, C, H, W] in [-1, 1] -> one ui8 [3, H', W'] image, 1-pixel dark gaps,
// each sample pixel drawn as a scale x scale block (nearest neighbour: no blur).
Tensor grid(const Tensor& x, int64_t n, int64_t scale) {
  const Shape& s = x.shape();
  const int64_t c = s[1], h = s[2], w = s[3], sh = h * scale, sw = w * scale;
  const auto cols = static_cast<int64_t>(std::ceil(std::sqrt(double(n))));
  const int64_t rows = (n + cols - 1) / cols, gh = rows * (sh + 1) + 1, gw = cols * (sw + 1) + 1;
  Tensor img(DType::kUI8, {3, gh, gw});
  std::fill_n(img.data<uint8_t>(), img.numel(), uint8_t{40});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t y = 0; y < sh; ++y)
        for (int64_t xx = 0; xx < sw; ++xx) {
          const float v =
              x.data<float>()[((i * c + (c >= 3 ? k : 0)) * h + y / scale) * w + xx / scale];
          const int64_t gy = 1 + (i / cols) * (sh + 1) + y, gx = 1 + (i % cols) * (sw + 1) + xx;
          img.data<uint8_t>()[(k * gh + gy) * gw + gx] =
              uint8_t(std::lround(std::clamp((v + 1) * 127.5f, 0.f, 255.f)));
        }
  return img;
}

// FNV-1a over the parameters' bytes: which weights drew a kept chunk.
std::string params_digest(const std::vector<Tensor>& params) {
  uint64_t h = 1469598103934665603ull;
  for (const Tensor& t : params) {
    const auto* b = static_cast<const uint8_t*>(t.raw());
    for (size_t i = 0; i < t.nbytes(); ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

// --chunk-dir DIR: chunk j (seed S + j) is kept as DIR/chunk-j.npy beside DIR/sampling.json, the
// settings that drew it. A directory of other settings is refused, naming the first that differs.
struct ChunkDir {
  fs::path dir;
  bool on() const { return !dir.empty(); }
  void open(const nlohmann::json& settings) {
    if (!on()) return;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) fail("sample", "--chunk-dir {}: {}", dir.string(), ec.message());
    const fs::path meta = dir / "sampling.json";
    if (fs::exists(meta)) {
      nlohmann::json kept;
      try {
        kept = nlohmann::json::parse(std::ifstream(meta));
      } catch (const nlohmann::json::exception& e) {
        fail("sample", "{}: {}", meta.string(), e.what());
      }
      for (const auto& [key, value] : settings.items())
        if (kept.value(key, nlohmann::json()) != value)
          fail("sample",
               "--chunk-dir {} holds chunks drawn with {} = {}, not {}: use another directory",
               dir.string(), key, kept.value(key, nlohmann::json()).dump(), value.dump());
      return;
    }
    std::ofstream(meta) << settings.dump(2) << "\n";
  }
  fs::path chunk(int64_t j) const { return dir / fmt::format("chunk-{}.npy", j); }
  // The kept chunk j, if any; a kept chunk of another shape is an error.
  std::optional<Tensor> load(int64_t j, int64_t rows) const {
    if (!on() || !fs::exists(chunk(j))) return std::nullopt;
    Tensor t = read_npy(chunk(j).string());
    if (t.dtype() != DType::kF32 || t.rank() != 4 || t.shape()[0] != rows)
      fail("sample", "{}: {} is not a chunk of {} samples", chunk(j).string(), t.type_str(), rows);
    return t;
  }
  void keep(int64_t j, const Tensor& x) const {
    if (!on()) return;
    const fs::path tmp = chunk(j).string() + ".tmp";
    write_npy(tmp.string(), x);
    fs::rename(tmp, chunk(j));  // whole chunks only, even if stopped while writing
  }
};

void register_sample_command(CLI::App& app) {
  struct Opts {
    std::string run_dir, out, checkpoint = "best", backend = "cpu", npy, judge, chunk_dir;
    exec::BackendOptions engine;
    int n = 64, steps = 0, ddim = 0, chunk = 0, grid = 0, from_test = -1, scale = 1;
    double judge_p = 0.9;
    uint64_t seed = 0;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd =
      app.add_subcommand("sample", "Draw DDPM samples from a trained run as a PNG grid");
  cmd->add_option("run_dir", o->run_dir, "a run directory of a ddpm net (config.json, checkpoints)")
      ->required();
  cmd->add_option("--n", o->n, "samples")->capture_default_str();
  cmd->add_option("--steps", o->steps, "diffusion steps T (default: the run's ddpmSteps)");
  cmd->add_option("--seed", o->seed, "noise seed")->capture_default_str();
  cmd->add_option("--ddim", o->ddim, "DDIM (eta 0) with K steps instead of ancestral sampling");
  cmd->add_option("--checkpoint", o->checkpoint, "best | last | ema (useEMA runs)")
      ->type_name("NAME")
      ->capture_default_str();
  cmd->add_option("--chunk", o->chunk, "samples drawn at once (default: all n)");
  cmd->add_option("--grid", o->grid, "samples in the PNG grid, the first ones (default: all n)");
  cmd->add_option("--scale", o->scale,
                  "draw each sample pixel as an N x N block in the grid (1..16; 16 samples of "
                  "28 x 28 at --scale 4 make a 453 px square)")
      ->capture_default_str();
  cmd->add_option("--npy", o->npy, "also write all samples [n, C, H, W] in [-1, 1] as .npy");
  cmd->add_option("--chunk-dir", o->chunk_dir,
                  "keep each finished chunk in this directory and reuse the kept ones: a sampling "
                  "stopped part way continues (the same run, checkpoint and settings)")
      ->type_name("DIR");
  cmd->add_option("--from-test", o->from_test,
                  "start from the first n test images noised to this t, not from x_T (a check)");
  cmd->add_option("--judge", o->judge, "a classifier's run dir: classify every sample (its best)");
  cmd->add_option("--judge-p", o->judge_p, "top probability a confident sample reaches")
      ->capture_default_str();
  cmd->add_option("-o,--output", o->out, "output .png")->required();
  add_backend_options(cmd, o->backend, o->engine);
  cmd->callback([o] {
    const fs::path dir(o->run_dir);
    std::ifstream f(dir / "config.json");
    if (!f) fail("sample", "{}: no config.json (not a run directory)", o->run_dir);
    const auto cfg = nlohmann::json::parse(f);
    SpecFile spec = parse_spec(cfg.at("spec").dump(), (dir / "config.json").string());
    TrainConfig c = spec.train.value_or(TrainConfig{});
    if (!c.ddpm) fail("sample", "{}: the run is not a DDPM run (ddpm false)", o->run_dir);
    if (o->steps > 0) c.ddpmSteps = o->steps;
    if (o->n < 1) fail("sample", "--n must be >= 1 (got {})", o->n);
    if (o->chunk < 0 || o->grid < 0 || o->grid > o->n)
      fail("sample", "--chunk >= 0 and 0 <= --grid <= --n (got {}, {})", o->chunk, o->grid);
    if (o->scale < 1 || o->scale > 16)
      fail("sample", "--scale must be in 1..16 (got {})", o->scale);
    const int64_t chunk = o->chunk > 0 ? std::min(o->chunk, o->n) : o->n;
    const std::string ckpt = (dir / (o->checkpoint + ".safetensors")).string();
    ParamTable table = build_param_table(spec.net);
    auto backend = exec::make_backend(o->backend, o->engine);
    train::Evaluator ev(spec.net, chunk, *backend, &table);
    train::TrainState s =
        train::make_state(train::init_params(table, c.init, 0), {}, ev.manifest());
    train::load_checkpoint(ckpt, table, s, false);
    train::DdpmSchedule sched(c);
    Tensor x, test;  // test: the first n test images, normalised f32 (--from-test)
    if (o->from_test >= 0) {
      data::LoadOptions lo;
      lo.dir = cfg.value("data", std::string());
      const data::Dataset split = data::load_dataset(c.dataset, lo).test;
      if (split.x.rank() != 4 || split.size() < o->n)
        fail("sample", "--from-test needs {} test images (got {})", o->n, split.x.type_str());
      // Through the evaluation loader: image sets are held as bytes and normalised per batch.
      data::Loader ld(split, chunk, false, 0);
      ld.start_epoch(0);
      const Shape& xs = split.x.shape();
      test = Tensor(DType::kF32, {o->n, xs[1], xs[2], xs[3]});
      const int64_t per = xs[1] * xs[2] * xs[3];
      for (int64_t i0 = 0, b = 0; i0 < o->n; i0 += chunk, ++b) {
        Tensor xb, yb;
        ld.batch(b, xb, yb);
        std::copy_n(xb.data<float>(), std::min(chunk, o->n - i0) * per,
                    test.data<float>() + i0 * per);
      }
    }
    ChunkDir kept{o->chunk_dir};
    kept.open({{"run_dir", fs::absolute(dir).lexically_normal().string()},
               {"checkpoint", o->checkpoint},
               {"params", params_digest(s.params)},
               {"steps", c.ddpmSteps},
               {"ddim", o->ddim},
               {"seed", o->seed},
               {"chunk", chunk},
               {"from_test", o->from_test}});
    int64_t reused = 0;
    for (int64_t i0 = 0, j = 0; i0 < o->n; i0 += chunk, ++j) {
      if (std::optional<Tensor> k = kept.load(j, chunk)) {
        const Tensor& xj = *k;
        if (j == 0) x = Tensor(DType::kF32, {o->n, xj.shape()[1], xj.shape()[2], xj.shape()[3]});
        const int64_t per = xj.numel() / chunk, m = std::min(chunk, o->n - i0);
        std::copy_n(xj.data<float>(), m * per, x.data<float>() + i0 * per);
        ++reused;
        continue;
      }
      Tensor start;
      if (o->from_test >= 0) {
        Tensor xb(DType::kF32, {chunk, test.shape()[1], test.shape()[2], test.shape()[3]});
        const int64_t per = xb.numel() / chunk, m = std::min(chunk, o->n - i0);
        std::copy_n(test.data<float>() + i0 * per, m * per, xb.data<float>());
        start = train::ddpm_noised(sched, c.dataset, xb, o->from_test, o->seed + uint64_t(j));
      }
      Tensor xj = train::ddpm_sample(sched, ev, s.params, s.running, o->seed + uint64_t(j), o->ddim,
                                     o->from_test >= 0 ? &start : nullptr, o->from_test);
      kept.keep(j, xj);
      if (j == 0) x = Tensor(DType::kF32, {o->n, xj.shape()[1], xj.shape()[2], xj.shape()[3]});
      const int64_t per = xj.numel() / chunk, m = std::min(chunk, o->n - i0);
      std::copy_n(xj.data<float>(), m * per, x.data<float>() + i0 * per);
    }
    if (reused > 0)
      std::cout << fmt::format("{} of {} chunks reused from {}\n", reused, (o->n + chunk - 1) / chunk,
                               o->chunk_dir);
    data::write_png_rgb(o->out, grid(x, o->grid > 0 ? o->grid : o->n, o->scale));
    if (!o->npy.empty()) write_npy(o->npy, x);
    if (o->from_test >= 0) {  // mean squared distance to the test images in [-1, 1]
      const data::Normalization nm = data::dataset_normalization(c.dataset);
      const int64_t hw = x.shape()[2] * x.shape()[3], ch = x.shape()[1];
      double se = 0;
      for (int64_t i = 0; i < x.numel(); ++i) {
        const size_t k = static_cast<size_t>((i / hw) % ch);
        const double x0 = 2 * (test.data<float>()[i] * nm.std[k] + nm.mean[k]) - 1;
        se += (x.data<float>()[i] - x0) * (x.data<float>()[i] - x0);
      }
      std::cout << fmt::format("from test images noised to t = {}: mean squared error {:.4f}\n",
                               o->from_test, se / double(x.numel()));
    }
    std::cout << fmt::format("wrote {} ({} samples, {} after {} epochs, {})\n", o->out, o->n,
                             o->checkpoint, s.epoch,
                             o->ddim > 0 ? fmt::format("DDIM {} steps", o->ddim)
                                         : fmt::format("ancestral {} steps", c.ddpmSteps));
    if (!o->judge.empty()) {
      RunTarget jt = resolve_run_target("sample", o->judge, "");
      ParamTable jtable = build_param_table(jt.spec.net);
      train::Evaluator clf(jt.spec.net, std::min<int64_t>(o->n, 100), *backend, &jtable);
      train::TrainState js =
          train::make_state(train::init_params(jtable, jt.spec.train->init, 0), {}, clf.manifest());
      train::load_checkpoint(jt.checkpoint, jtable, js, false);
      const train::JudgeResult r =
          train::judge_samples(clf, js.params, js.running, x, jt.spec.train->dataset, o->judge_p);
      std::cout << fmt::format("judge {} ({}): {}\n", jt.spec.net.name, jt.checkpoint, r.summary());
    }
  });
}

}  // namespace

NETSPEC_REGISTER_COMMAND(sample, register_sample_command)

}  // namespace netspec::cli
