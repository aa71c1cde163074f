// netspec command line entry point: builds the CLI11 app from the registered subcommands and
// maps failures to exit codes (0 ok, 1 a check failed, 2 bad input or usage).
#include <fmt/core.h>

#include <cstdio>
#include <exception>
#include <map>
#include <string>

#include "cli/commands.h"
#include "core/error.h"
#include "core/process_env.h"

namespace netspec::cli {
namespace {
std::map<std::string, CommandFn>& command_table() {
  static std::map<std::string, CommandFn> t;
  return t;
}
}  // namespace

CommandRegistrar::CommandRegistrar(const char* name, CommandFn fn) { command_table()[name] = fn; }

void register_self_registered_commands(CLI::App& app) {
  for (const auto& [name, fn] : command_table()) fn(app);
}
}  // namespace netspec::cli

int main(int argc, char** argv) {
  netspec::ensure_library_environment(argv);
  CLI::App app{"netspec: neural network specs -> StableHLO modules -> CPU executors"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "netspec 0.1.0");
  netspec::cli::register_run_command(app);
  netspec::cli::register_summary_command(app);
  netspec::cli::register_list_command(app);
  netspec::cli::register_gradcheck_command(app);
  netspec::cli::register_emit_command(app);
  netspec::cli::register_compile_command(app);
  netspec::cli::register_train_command(app);
  netspec::cli::register_self_registered_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const netspec::Error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "netspec: out of memory\n");
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "netspec: internal error: {}\n", e.what());
    return 3;
  }
  return 0;
}
