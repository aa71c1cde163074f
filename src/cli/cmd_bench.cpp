// `netspec bench NET|FILE.json [--batch B] [--optimizer NAME] [--input CxHxW] [--steps N]
// [--warmup N] [--replicas R] [--set field=value] [--backend cpu|ref|xla|iree]`: emits the fused
// train step (for R data-parallel replicas, each on batch/R samples: threads on cpu, devices on
// xla), feeds it synthetic data (random inputs, random labels of the manifest's dtype and shape),
// runs warm-up steps, then times N steps (the executor call only, parameters and optimizer state
// fed back as in training, through a Session: on xla they stay in device buffers) and prints median
// / min / max ms per step, samples/s and peak memory (max RSS; the cpu plan's arena). iree:
// iree-benchmark-module times N calls of the step on the same inputs (each a step from the same
// state). `--module eval` times the eval module (inference: BN on running stats, no update) on
// one fixed random batch instead. Every run also prints the first-step latency (from reading the
// spec to the first finished call: emit, plan, oneDNN primitive creation) and the achieved
// GFLOP/s (the ParamTable's forward FLOPs per sample x batch, x3 for a train step).
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "cli/train_flags.h"
#include "core/error.h"
#include "emit/emit.h"
#include "exec/backend.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/iree/iree_backend.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/zoo.h"
#include "train/trainer.h"

namespace netspec::cli {
namespace {

using Clock = std::chrono::steady_clock;

// "CxHxW" -> {C, H, W}; "C" -> {C, 0, 0} (a vector input).
std::array<int, 3> parse_input(const std::string& s) {
  std::vector<int64_t> v;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t x = s.find('x', pos);
    std::string part = s.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    int n = 0;
    try {
      size_t used = 0;
      n = std::stoi(part, &used);
      if (used != part.size()) n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
    if (n <= 0) fail("bench", "--input '{}' is not CxHxW or C with positive sizes", s);
    v.push_back(n);
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  if (v.size() != 1 && v.size() != 3)
    fail("bench", "--input '{}' has {} sizes (expected CxHxW or C)", s, v.size());
  if (v.size() == 1) return {static_cast<int>(v[0]), 0, 0};
  return {static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2])};
}

// Uniform random tensor: integer labels in [0, classes), floats in [lo, hi).
Tensor random_tensor(DType t, const Shape& shape, int64_t classes, float lo, float hi,
                     std::mt19937& rng) {
  Tensor x(t, shape);
  if (t == DType::kF32) {
    std::uniform_real_distribution<float> d(lo, hi);
    for (float& v : x.span<float>()) v = d(rng);
  } else if (t == DType::kI32) {
    std::uniform_int_distribution<int32_t> d(
        0, static_cast<int32_t>(std::max<int64_t>(classes, 1) - 1));
    for (int32_t& v : x.span<int32_t>()) v = d(rng);
  } else if (t == DType::kI64) {
    std::uniform_int_distribution<int64_t> d(0, std::max<int64_t>(classes, 1) - 1);
    for (int64_t& v : x.span<int64_t>()) v = d(rng);
  } else {
    fail("bench", "cannot make synthetic data of type {} (expected f32, i32 or i64)",
         dtype_name(t));
  }
  return x;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct BenchOpts {
  std::string net, optimizer, input, backend = "cpu";
  std::vector<std::string> sets;
  exec::BackendOptions engine;
  std::string module = "train";  // train | eval
  int batch = 0, steps = 20, warmup = 3, replicas = 1;
  double lr = 0;
  Clock::time_point start;  // when the command began: the first-step latency counts from here
  int64_t step_flops = 0;   // FLOPs of one call (forward x batch, x3 for a train step)
};

// "first step ...; GFLOP/s ..." after the timing line: the latency from the command's start to
// the first finished call, and the FLOPs the median call did per second.
// `what median M  min m  max x  (n=N, warmup W)  unit/s R  max RSS S MiB` for the timed calls
// `ms` (after `warmup` untimed ones) of `batch` samples each.
std::string timing_line(std::string_view what, const std::vector<double>& ms, int warmup,
                        int64_t batch, std::string_view unit) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double med = median(ms);
  return fmt::format(
      "{} median {:.2f}  min {:.2f}  max {:.2f}  (n={}, warmup {})  "
      "{}/s {:.0f}  max RSS {:.1f} MiB",
      what, med, *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
      ms.size(), warmup, unit, static_cast<double>(batch) * 1000.0 / med,
      static_cast<double>(ru.ru_maxrss) / 1024.0);
}

void print_latency_and_rate(const BenchOpts& o, double first_s, double median_ms) {
  std::cout << fmt::format("first step {:.3f} s (spec to the first finished call)  GFLOP/s {:.1f} "
                           "({:.6g} GFLOP per call)\n",
                           first_s, static_cast<double>(o.step_flops) / (median_ms * 1e6),
                           static_cast<double>(o.step_flops) / 1e9);
}

// The spec's TrainConfig with the command's flags applied (and the net's input resized).
TrainConfig bench_config(const BenchOpts& o, SpecFile& spec) {
  if (o.steps < 1) fail("bench", "--steps must be >= 1 (got {})", o.steps);
  if (o.warmup < 0) fail("bench", "--warmup must be >= 0 (got {})", o.warmup);
  if (o.batch < 0) fail("bench", "--batch must be >= 1 (got {})", o.batch);
  TrainConfig c = spec.train.value_or(TrainConfig{});
  if (o.batch > 0) c.batchSize = o.batch;
  if (o.lr > 0) c.learningRate = o.lr;
  if (!o.optimizer.empty()) apply_optimizer_name(c, o.optimizer, "bench");
  if (!o.input.empty()) {
    std::array<int, 3> in = parse_input(o.input);
    spec.net.inputChannels = in[0];
    spec.net.inputHeight = in[1];
    spec.net.inputWidth = in[2];
  }
  validate(c);
  // Judged once every --set is in, as train does: `--set bf16=false --set bf16Conv=false` is a
  // valid end state even though its first assignment alone is not.
  PendingCheck pending;
  apply_sets(c, o.sets, "bench", &pending);
  check_applied(c, "bench", pending);
  return c;
}

// ", cpu plan: arena ..." for the cpu backend's plan of the step (the session donates the
// parameters and optimizer state, fed back each step).
std::string cpu_plan_summary(const hlo::Module& mod, const emit::Manifest& m) {
  std::vector<bool> donated;
  for (const auto& ti : m.inputs)
    donated.push_back(ti.role == "param" || ti.role == "optimizer_state");
  exec::cpu::PlanStats ps = exec::cpu::plan_stats(*mod.entry("main"), donated);
  return fmt::format(
      ", cpu plan: arena {:.1f} MiB ({:.1f} MiB without reuse), {} steps, "
      "{} on ref{}{}, {} of {} state results in place, {} op pairs chained and {} broadcasts "
      "read in place in fused groups, {} fused instructions generated{}",
      static_cast<double>(ps.arena_bytes) / (1 << 20),
      static_cast<double>(ps.value_bytes) / (1 << 20), ps.steps, ps.ref_steps,
      ps.fallback_ops.empty() ? "" : " (", ps.fallback_ops.empty() ? "" : ps.fallback_ops + ")",
      ps.donated, std::count(donated.begin(), donated.end(), true), ps.fused_chains,
      ps.fused_bcasts, ps.fused_generated,
      ps.bf16_convolutions_widened == 0
          ? std::string()
          : fmt::format(", {} bf16 convolutions run in f32 (no bf16 kernels on this CPU)",
                        ps.bf16_convolutions_widened));
}

// The train step's inputs by the manifest's roles: initial parameters, zero optimizer state,
// random inputs and labels, lr and step; with the slots of the state and the step counter.
struct StepInputs {
  std::vector<Tensor> in;
  std::vector<size_t> param_slot, opt_slot;  // input index of each param / optimizer state
  int step_slot = -1;
};
StepInputs step_inputs(const emit::Manifest& m, const std::vector<Tensor>& params,
                       const TrainConfig& c, int64_t classes, std::mt19937& rng) {
  StepInputs s;
  size_t pi = 0;
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    const auto& ti = m.inputs[k];
    if (ti.role == "param") {
      if (pi >= params.size()) fail("bench", "manifest has more params than the ParamTable");
      s.in.push_back(params[pi++]);
      s.param_slot.push_back(k);
    } else if (ti.role == "optimizer_state") {
      s.in.emplace_back(ti.dtype, ti.shape);
      s.opt_slot.push_back(k);
    } else if (ti.role == "input") {
      s.in.push_back(random_tensor(ti.dtype, ti.shape, classes, -1.f, 1.f, rng));
    } else if (ti.role == "label") {
      s.in.push_back(random_tensor(ti.dtype, ti.shape, classes, 0.f, 1.f, rng));
    } else if (ti.name == "lr") {
      s.in.push_back(Tensor::scalar_f32(static_cast<float>(c.learningRate)));
    } else if (ti.name == "step") {
      s.step_slot = static_cast<int>(k);
      s.in.push_back(Tensor::from<int32_t>(DType::kI32, {}, {1}));
    } else {
      fail("bench", "train_step input '{}' has unknown role {}", ti.name, ti.role);
    }
  }
  return s;
}

// Runs warmup + steps updates in a session whose state is the parameters and optimizer state
// (output k feeds input slot k) and prints the timings.
void time_session(const BenchOpts& o, exec::Backend& backend,
                  const std::shared_ptr<const hlo::Module>& mod, const emit::Manifest& m,
                  const StepInputs& si, std::vector<std::vector<Tensor>>& per, int64_t batch) {
  auto exe = backend.load(mod);
  std::vector<exec::Feedback> fb;
  size_t p = 0, q = 0;
  size_t loss_out = m.outputs.size();
  for (size_t k = 0; k < m.outputs.size(); ++k) {
    const auto& ti = m.outputs[k];
    if (ti.role == "loss") loss_out = k;
    if (ti.role == "param" && p < si.param_slot.size())
      fb.push_back({si.param_slot[p++], k});
    else if (ti.role == "optimizer_state" && q < si.opt_slot.size())
      fb.push_back({si.opt_slot[q++], k});
  }
  auto session = exe->open_session("main", fb, o.replicas);
  for (const exec::Feedback& f : fb) session->set_state(f.input, si.in[f.input]);
  std::vector<double> ms;
  double loss = 0, first_loss = 0, first_s = 0;
  for (int s = 0; s < o.warmup + o.steps; ++s) {
    if (si.step_slot >= 0)
      for (auto& r : per)
        r[static_cast<size_t>(si.step_slot)] = Tensor::from<int32_t>(DType::kI32, {}, {s + 1});
    auto t0 = Clock::now();
    std::vector<Tensor> out = std::move(session->step_replicated(per).at(0));
    double dt = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (s >= o.warmup) ms.push_back(dt);
    if (loss_out < out.size()) loss = out[loss_out].as_double(0);
    if (s == 0) {
      first_loss = loss;
      first_s = std::chrono::duration<double>(Clock::now() - o.start).count();
    }
  }
  std::cout << timing_line("ms/step", ms, o.warmup, batch, "samples")
            << fmt::format("  loss {:.4f} -> {:.4g}\n", first_loss, loss);
  print_latency_and_rate(o, first_s, median(ms));
}

// --module eval: the eval module on one random batch, called warmup + steps times through a
// session (parameters as initialised, BN running means 0 and variances 1); prints latency,
// images/s and max RSS.
void time_eval(const BenchOpts& o, const SpecFile& spec, const ParamTable& table,
               const TrainConfig& c, exec::Backend& backend, std::mt19937& rng) {
  const int64_t rows = c.batchSize * losses::rows_per_sample(c);  // net rows (nerf: points)
  emit::EmitOptions eo = emit::EmitOptions::from_train(c, rows);
  emit::Emitted ev = emit::emit_module(spec.net, table, ModuleKind::eval, eo);
  std::shared_ptr<const hlo::Module> mod(std::move(ev.module));
  std::vector<Tensor> params = train::init_params(table, c.init, static_cast<uint64_t>(c.seed));
  std::vector<Tensor> in;
  size_t pi = 0;
  for (const auto& ti : ev.manifest.inputs) {
    if (ti.role == "param") {
      if (pi >= params.size()) fail("bench", "manifest has more params than the ParamTable");
      in.push_back(params[pi++]);
    } else if (ti.role == "input") {
      in.push_back(random_tensor(ti.dtype, ti.shape, 2, -1.f, 1.f, rng));
    } else if (ti.role == "bn_running_stat") {
      Tensor t(ti.dtype, ti.shape);
      if (ti.name.find("var") != std::string::npos)
        for (float& v : t.span<float>()) v = 1.f;
      in.push_back(std::move(t));
    } else {
      fail("bench", "eval input '{}' has unknown role {}", ti.name, ti.role);
    }
  }
  // As the Evaluator runs it: parameters and running statistics are session state set once
  // (kept: the cpu executor reorders convolution weights once), only the batch goes in.
  auto exe = backend.load(mod);
  std::vector<exec::Feedback> keep;
  for (size_t k = 0; k < ev.manifest.inputs.size(); ++k)
    if (ev.manifest.inputs[k].role != "input") keep.push_back({k, exec::Feedback::kKeep});
  auto session = exe->open_session("main", keep);
  for (const exec::Feedback& f : keep) {
    session->set_state(f.input, in[f.input]);
    in[f.input] = Tensor();
  }
  std::vector<double> ms;
  double first_s = 0;
  for (int s = 0; s < o.warmup + o.steps; ++s) {
    auto t0 = Clock::now();
    std::vector<Tensor> out = session->step(in);
    double dt = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (s == 0) first_s = std::chrono::duration<double>(Clock::now() - o.start).count();
    if (s >= o.warmup) ms.push_back(dt);
  }
  std::cout << timing_line("eval ms/call", ms, o.warmup, rows, "images") << "\n";
  print_latency_and_rate(o, first_s, median(ms));
}

void run_bench(BenchOpts& o) {
  o.start = Clock::now();
  if (o.module != "train" && o.module != "eval")
    fail("bench", "--module must be train or eval (got '{}')", o.module);
  SpecFile spec = resolve_net(o.net);
  const TrainConfig c = bench_config(o, spec);
  const ParamTable table = build_param_table(spec.net);
  const int64_t batch = c.batchSize * losses::rows_per_sample(c);  // net rows (nerf: points)
  o.step_flops = table.total_flops() * batch * (o.module == "train" ? 3 : 1);
  if (o.module == "eval") {
    if (o.replicas != 1 || o.backend == "iree")
      fail("bench", "--module eval runs one replica on cpu, ref or xla");
    std::unique_ptr<exec::Backend> backend = exec::make_backend(o.backend, o.engine);
    std::mt19937 rng(static_cast<uint32_t>(c.seed));
    std::cout << fmt::format("bench {} eval batch {} on {}: {} params\n", spec.net.name, batch,
                             o.backend, table.total_params())
              << std::flush;
    time_eval(o, spec, table, c, *backend, rng);
    return;
  }
  const int reps = o.replicas;
  if (reps < 1 || reps > exec::kMaxReplicas || batch % reps != 0)
    fail("bench", "--replicas must be in 1..{} and divide the batch {} (got {})",
         exec::kMaxReplicas, batch, reps);
  if (reps > 1 && o.backend == "iree") fail("bench", "--backend iree runs one replica");
  o.engine.devices = std::max(o.engine.devices, reps);  // xla's CPU plugin: a device each

  auto te = Clock::now();
  emit::EmitOptions eo = emit::EmitOptions::from_train(c, batch / reps);
  eo.replicas = reps;
  emit::Emitted step = emit::emit_module(spec.net, table, ModuleKind::train_step, eo);
  const double emit_s = std::chrono::duration<double>(Clock::now() - te).count();
  const emit::Manifest m = step.manifest;
  std::shared_ptr<const hlo::Module> mod(std::move(step.module));
  const std::string arena = o.backend == "cpu" ? cpu_plan_summary(*mod, m) : "";
  std::unique_ptr<exec::Backend> backend = exec::make_backend(o.backend, o.engine);

  std::mt19937 rng(static_cast<uint32_t>(c.seed));
  std::vector<Tensor> params = train::init_params(table, c.init, static_cast<uint64_t>(c.seed));
  const int64_t classes = table.output.empty() ? 2 : table.output[0];
  const StepInputs si = step_inputs(m, params, c, classes, rng);
  // Replica r > 0: its own random shard of the batch (the parameters are shared).
  std::vector<std::vector<Tensor>> per(static_cast<size_t>(reps), si.in);
  for (size_t r = 1; r < per.size(); ++r)
    for (size_t k = 0; k < m.inputs.size(); ++k) {
      const auto& ti = m.inputs[k];
      if (ti.role == "input" || ti.role == "label")
        per[r][k] =
            random_tensor(ti.dtype, ti.shape, classes, ti.role == "input" ? -1.f : 0.f, 1.f, rng);
    }
  std::cout << fmt::format("bench {} batch {} {} on {}{}: {} params, {} inputs; emit {:.2f} s{}\n",
                           spec.net.name, batch, enum_name(c.optimizer), o.backend,
                           reps > 1 ? fmt::format(" x {} replicas", reps) : "",
                           table.total_params(), m.inputs.size(), emit_s, arena)
            << std::flush;
  if (o.backend == "iree") {
    // One process times the calls: each starts from the initial state (no feedback).
    const double t = exec::iree::benchmark_ms(mod, "main", si.in, o.steps);
    std::cout << fmt::format(
        "ms/step median {:.2f} (iree-benchmark-module, {} repetitions)  "
        "samples/s {:.0f}\n",
        t, o.steps, static_cast<double>(batch) * 1000.0 / t);
    return;
  }
  time_session(o, *backend, mod, m, si, per, batch);
}

}  // namespace

void register_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOpts>();
  CLI::App* cmd = app.add_subcommand("bench", "Time the train step on synthetic data");
  cmd->add_option("net", o->net, "zoo net name or a spec .json file")->required();
  cmd->add_option("--batch", o->batch, "batch size (default: the spec's)");
  cmd->add_option("--lr", o->lr, "learning rate fed to the step (default: the spec's)");
  cmd->add_option("--optimizer", o->optimizer,
                  "sgd | adam | adamw | rmsprop | lamb (default: the spec's; adamw = adam with "
                  "weightDecay 0.01 unless the spec sets one)");
  cmd->add_option("--input", o->input, "per-sample input CxHxW (or C) instead of the spec's")
      ->type_name("CxHxW");
  cmd->add_option("--set", o->sets,
                  "field=value for any TrainConfig field (repeatable; bf16=true)");
  cmd->add_option("--steps", o->steps, "timed steps")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "untimed steps first")->capture_default_str();
  cmd->add_option("--module", o->module,
                  "train (the fused train step) | eval (inference: the eval module, no update)")
      ->capture_default_str();
  cmd->add_option("--replicas", o->replicas,
                  "data-parallel replicas (cpu: threads, xla: devices), batch/R samples each");
  add_backend_options(cmd, o->backend, o->engine);
  cmd->callback([o] { run_bench(*o); });
}

NETSPEC_REGISTER_COMMAND(bench, register_bench_command)

}  // namespace netspec::cli
