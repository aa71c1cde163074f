// `netspec run FILE.mlir`: parses a StableHLO module, runs one function on the chosen backend
// and writes each result as DIR/result<i>.npy (or prints shapes and leading values).
// Under `netspec launch` (WORLD_SIZE > 1) every process runs one replica of the module:
// cpu / ref meet in Gloo; xla makes each process a node of the plugin's multi-node client
// (node_id = RANK, num_nodes = WORLD_SIZE, key-value store = the rendezvous store), so a GPU
// plugin's own collectives carry the all_reduce (XLA's CPU plugin refuses: it has none).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "core/file_check.h"
#include "core/npy.h"
#include "dist/process_group.h"
#include "exec/backend.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"

namespace netspec::cli {
namespace {

struct RunArgs {
  std::string file;
  std::string entry;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string backend = "cpu";
  exec::BackendOptions engine;
  int replicas = 1;
  bool split = false;
  RunLimitArgs limits;
};

// "[1, 2, 3, ... (10 values)]": the first few elements in row-major order.
std::string brief_values(const Tensor& t) {
  constexpr int64_t kShown = 8;
  std::string s = "[";
  for (int64_t i = 0; i < std::min(t.numel(), kShown); ++i) {
    if (i) s += ", ";
    if (is_float(t.dtype())) s += fmt::format("{:.6g}", t.as_double(i));
    else if (is_bool(t.dtype())) s += t.as_int64(i) ? "true" : "false";
    else if (is_unsigned_integer(t.dtype())) s += fmt::format("{}", static_cast<uint64_t>(t.as_int64(i)));
    else s += fmt::format("{}", t.as_int64(i));
  }
  if (t.numel() > kShown) s += fmt::format(", ... ({} values)", t.numel());
  return s + "]";
}

void emit_results(const std::vector<Tensor>& results, const std::string& dir, const std::string& label) {
  if (dir.empty()) {
    for (size_t i = 0; i < results.size(); ++i)
      fmt::print("{}result{}: {} = {}\n", label, i, results[i].type_str(), brief_values(results[i]));
    return;
  }
  ensure_writable_dir("run", dir, "output dir");
  for (size_t i = 0; i < results.size(); ++i)
    write_npy((std::filesystem::path(dir) / fmt::format("result{}.npy", i)).string(), results[i]);
}

void run_module(const RunArgs& a, std::shared_ptr<const hlo::Module> module, const std::string& out_dir,
                const std::string& label) {
  const hlo::Func* f = module->entry(a.entry);
  std::vector<Tensor> inputs;
  for (const auto& p : a.inputs) inputs.push_back(read_npy(p));
  exec::BackendOptions engine = a.engine;
  if (engine.devices <= 0) engine.devices = a.replicas;  // xla: one PJRT device per replica
  auto backend = exec::make_backend(a.backend, engine);
  auto exe = backend->load(module);
  if (a.replicas == 1) {
    emit_results(exe->run(f->name, inputs), out_dir, label);
    return;
  }
  // Every replica gets the same inputs unless replicas x args inputs were given (replica-major).
  std::vector<std::vector<Tensor>> per(static_cast<size_t>(a.replicas));
  size_t nargs = f->num_args();
  if (inputs.size() == nargs * static_cast<size_t>(a.replicas) && nargs > 0 && a.replicas > 1) {
    for (size_t r = 0; r < per.size(); ++r)
      per[r].assign(inputs.begin() + static_cast<long>(r * nargs), inputs.begin() + static_cast<long>((r + 1) * nargs));
  } else {
    for (auto& p : per) p = inputs;
  }
  auto results = exe->run_replicated(f->name, per);
  for (size_t r = 0; r < results.size(); ++r)
    emit_results(results[r], out_dir.empty() ? "" : (std::filesystem::path(out_dir) / fmt::format("replica{}", r)).string(),
                 fmt::format("{}replica{}.", label, r));
}

// One replica per process of the launch: rank r prints its results as "rank<r>.result<i>"
// (--output-dir: DIR/rank<r>/).
void run_as_process(const RunArgs& a, const dist::DistEnv& env) {
  if (a.replicas != 1 || a.split)
    fail("run",
         "under launch (WORLD_SIZE {}) each process runs one replica: drop --replicas / --split",
         env.world);
  std::shared_ptr<const hlo::Module> module = hlo::parse_file(a.file);
  const hlo::Func* f = module->entry(a.entry);
  std::vector<Tensor> inputs;
  for (const auto& p : a.inputs) inputs.push_back(read_npy(p));
  nlohmann::ordered_json fp;  // every rank must run the same module on the same backend
  fp["module"] = hlo::print_module(*module);
  fp["backend"] = a.backend;
  auto group = dist::ProcessGroup::join(env, fp.dump());
  exec::BackendOptions engine = a.engine;
  engine.node_id = env.rank;
  engine.num_nodes = env.world;
  engine.kv = &group->kv();
  auto backend = exec::make_backend(a.backend, engine);
  auto exe = backend->load(module);
  std::vector<Tensor> out = exe->run_as_replica(f->name, inputs, group->comm(), env.rank);
  const std::string dir =
      a.output_dir.empty()
          ? ""
          : (std::filesystem::path(a.output_dir) / fmt::format("rank{}", env.rank)).string();
  emit_results(out, dir, fmt::format("rank{}.", env.rank));
}

void run_command(const RunArgs& a) {
  if (a.replicas < 1 || a.replicas > exec::kMaxReplicas)
    fail("run", "--replicas must be in 1..{} (got {})", exec::kMaxReplicas, a.replicas);
  apply_run_limits("run", a.limits);
  if (const auto env = dist::dist_env_from_environment(); env && env->world > 1)
    return run_as_process(a, *env);
  if (!a.split) {
    std::shared_ptr<const hlo::Module> m = hlo::parse_file(a.file);
    run_module(a, m, a.output_dir, "");
    return;
  }
  require_regular_file("run", a.file);
  std::ifstream in(a.file);
  if (!in) fail("run", "cannot open '{}'", a.file);
  std::stringstream ss;
  ss << in.rdbuf();
  auto modules = hlo::parse_split_modules(ss.str(), a.file);
  for (size_t k = 0; k < modules.size(); ++k) {
    std::shared_ptr<const hlo::Module> m = std::move(modules[k]);
    std::string dir = a.output_dir.empty() ? "" : (std::filesystem::path(a.output_dir) / fmt::format("part{}", k)).string();
    run_module(a, m, dir, fmt::format("part{}.", k));
  }
}

}  // namespace

void register_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run a function of a StableHLO module on an executor (cpu, ref, xla, iree)");
  cmd->add_option("file", args->file, "StableHLO text file (.mlir), pretty or generic form")->required();
  cmd->add_option("--entry", args->entry, "Function to run (default: main, else the only public function)");
  cmd->add_option("--input", args->inputs, "Input .npy file, one per argument in order (repeatable)");
  cmd->add_option("--output-dir", args->output_dir,
                  "Write results as DIR/result<i>.npy (replicas: DIR/replica<r>/..., --split: DIR/part<k>/...); "
                  "default: print shapes and leading values");
  add_backend_options(cmd, args->backend, args->engine);
  cmd->add_option("--replicas", args->replicas,
                  "Run N replicas on N threads (all_reduce combines them); inputs are shared, or give N x args inputs")
      ->capture_default_str();
  cmd->add_flag("--split", args->split, "Run every module of a file split by '// -----' (default: the first)");
  add_run_limit_flags(cmd, args->limits);
  cmd->callback([args] { run_command(*args); });
}

}  // namespace netspec::cli
