// The `netspec` subcommands. Each cmd_<name>.cpp defines register_<name>_command, which adds a
// CLI11 subcommand and its callback. Callbacks throw netspec::Error for bad input; main() prints
// the message and exits with status 2.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "exec/backend.h"

namespace netspec::cli {

// Adds --backend (a registered backend: ref, cpu, xla, iree) and the xla backend's
// --pjrt-plugin PATH / --pjrt-devices N to a command (backend_options.cpp).
void add_backend_options(CLI::App* cmd, std::string& backend, exec::BackendOptions& opts);
// Throws "[where] --backend xla across processes ... is not supported" with the reason (XLA's CPU
// plugin has no cross-process collectives; docs/distributed.md).
[[noreturn]] void refuse_xla_across_processes(const char* where, int world);
// The command line netspec was started with, shell-quoted where needed (set by main).
const std::string& command_line();
void set_command_line(int argc, char** argv);

void register_run_command(CLI::App& app);
void register_summary_command(CLI::App& app);
void register_list_command(CLI::App& app);
void register_gradcheck_command(CLI::App& app);
void register_emit_command(CLI::App& app);
void register_compile_command(CLI::App& app);
void register_train_command(CLI::App& app);

// --max-iterations and --timeout of `run` and `gradcheck` (exec/limits.h): each while op stops
// with an error after that many iterations, every run after that many seconds.
inline constexpr int64_t kDefaultMaxIterations = 10'000'000;
struct RunLimitArgs {
  int64_t max_iterations = kDefaultMaxIterations;
  double timeout_s = 0;  // 0: no limit
};
void add_run_limit_flags(CLI::App* cmd, RunLimitArgs& a);
void apply_run_limits(std::string_view where, const RunLimitArgs& a);  // validates, then sets

// Later commands register themselves (no shared list to edit): cmd_<name>.cpp ends with
//   NETSPEC_REGISTER_COMMAND(bench, register_bench_command)
// and main() adds them after the ones above, in name order.
using CommandFn = void (*)(CLI::App&);
struct CommandRegistrar {
  CommandRegistrar(const char* name, CommandFn fn);
};
void register_self_registered_commands(CLI::App& app);
#define NETSPEC_REGISTER_COMMAND(name, fn) \
  static const ::netspec::cli::CommandRegistrar command_registrar_##name{#name, fn};

}  // namespace netspec::cli
