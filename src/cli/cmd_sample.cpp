// `netspec sample RUN_DIR [--n 64] [--steps T] [--seed S] [--ddim K] [--checkpoint best|last]
// -o grid.png`: draws DDPM samples from a run of a ddpm net (RUN_DIR/config.json + its
// checkpoint) through the eval module, ancestral over T steps or DDIM over K, and writes them as
// a PNG grid (ceil(sqrt(n)) columns, [-1, 1] mapped to 0..255, first channels as gray or RGB).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "data/image_write.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "train/checkpoint.h"
#include "train/ddpm.h"
#include "train/trainer.h"

namespace netspec::cli {
namespace {

namespace fs = std::filesystem;

// samples [n, C, H, W] in [-1, 1] -> one ui8 [3, H', W'] image, 1-pixel dark gaps.
Tensor grid(const Tensor& x) {
  const Shape& s = x.shape();
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  const auto cols = static_cast<int64_t>(std::ceil(std::sqrt(double(n))));
  const int64_t rows = (n + cols - 1) / cols, gh = rows * (h + 1) + 1, gw = cols * (w + 1) + 1;
  Tensor img(DType::kUI8, {3, gh, gw});
  std::fill_n(img.data<uint8_t>(), img.numel(), uint8_t{40});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t xx = 0; xx < w; ++xx) {
          const float v = x.data<float>()[((i * c + (c >= 3 ? k : 0)) * h + y) * w + xx];
          const int64_t gy = 1 + (i / cols) * (h + 1) + y, gx = 1 + (i % cols) * (w + 1) + xx;
          img.data<uint8_t>()[(k * gh + gy) * gw + gx] =
              uint8_t(std::lround(std::clamp((v + 1) * 127.5f, 0.f, 255.f)));
        }
  return img;
}

void register_sample_command(CLI::App& app) {
  struct Opts {
    std::string run_dir, out, checkpoint = "best", backend = "cpu";
    exec::BackendOptions engine;
    int n = 64, steps = 0, ddim = 0;
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
  cmd->add_option("--checkpoint", o->checkpoint, "best | last")->capture_default_str();
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
    const std::string ckpt = (dir / (o->checkpoint + ".safetensors")).string();
    ParamTable table = build_param_table(spec.net);
    auto backend = exec::make_backend(o->backend, o->engine);
    train::Evaluator ev(spec.net, o->n, *backend, &table);
    train::TrainState s =
        train::make_state(train::init_params(table, c.init, 0), {}, ev.manifest());
    train::load_checkpoint(ckpt, table, s, false);
    train::DdpmSchedule sched(c);
    Tensor x = train::ddpm_sample(sched, ev, s.params, s.running, o->seed, o->ddim);
    data::write_png_rgb(o->out, grid(x));
    std::cout << fmt::format("wrote {} ({} samples, {} after {} epochs, {})\n", o->out, o->n,
                             o->checkpoint, s.epoch,
                             o->ddim > 0 ? fmt::format("DDIM {} steps", o->ddim)
                                         : fmt::format("ancestral {} steps", c.ddpmSteps));
  });
}

}  // namespace

NETSPEC_REGISTER_COMMAND(sample, register_sample_command)

}  // namespace netspec::cli
