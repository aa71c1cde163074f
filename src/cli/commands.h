// The `netspec` subcommands. Each cmd_<name>.cpp defines register_<name>_command, which adds a
// CLI11 subcommand and its callback. Callbacks throw netspec::Error for bad input; main() prints
// the message and exits with status 2.
#pragma once
#include <CLI/CLI.hpp>

namespace netspec::cli {

void register_run_command(CLI::App& app);
void register_summary_command(CLI::App& app);
void register_list_command(CLI::App& app);
void register_gradcheck_command(CLI::App& app);
void register_emit_command(CLI::App& app);
void register_compile_command(CLI::App& app);
void register_train_command(CLI::App& app);

}  // namespace netspec::cli
