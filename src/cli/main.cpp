// netspec command line entry point: builds the CLI11 app from the registered subcommands and
// maps failures to exit codes (0 ok, 1 a check failed, 2 bad input or usage).
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <map>
#include <string>

#include "cli/commands.h"
#include "cli/help_format.h"
#include "cli/train_flags.h"
#include "core/error.h"
#include "core/nearest_name.h"
#include "core/process_env.h"
#include "train/run_dir.h"

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

namespace {
std::string& command_line_text() {
  static std::string s;
  return s;
}
}  // namespace

const std::string& command_line() { return command_line_text(); }

void set_command_line(int argc, char** argv) {
  std::string& s = command_line_text();
  s = "netspec";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                                         "OPQRSTUVWXYZ0123456789-_=.,/:+@%") == std::string::npos;
    if (!plain) {  // single-quoted, ' as '\''
      std::string q = "'";
      for (char ch : a) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      a = q + "'";
    }
    s += " " + a;
  }
}

namespace {
// "netspec 0.1.0 (git 041563c)": the version and the commit run records carry (train/run_dir.h).
std::string version_text() {
  const std::string git = train::netspec_version();
  return git.rfind("0.1.0", 0) == 0 ? "netspec " + git : "netspec 0.1.0 (git " + git + ")";
}

// `netspec trian`: names the nearest command instead of CLI11's "A subcommand is required".
void check_command_name(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return;
  std::vector<std::string> names;
  for (const CLI::App* c : app.get_subcommands([](CLI::App*) { return true; })) {
    if (c->check_name(argv[1])) return;
    names.push_back(c->get_name());
  }
  fail("netspec", "unknown command '{}'{} (commands: {})", argv[1], did_you_mean(argv[1], names),
       fmt::join(names, ", "));
}
}  // namespace
}  // namespace netspec::cli

int main(int argc, char** argv) {
  netspec::ensure_library_environment(argv);
  CLI::App app{"netspec: neural network specs -> StableHLO modules -> CPU executors"};
  app.require_subcommand(1);
  app.set_version_flag("--version", netspec::cli::version_text());
  netspec::cli::register_run_command(app);
  netspec::cli::register_summary_command(app);
  netspec::cli::register_list_command(app);
  netspec::cli::register_gradcheck_command(app);
  netspec::cli::register_emit_command(app);
  netspec::cli::register_compile_command(app);
  netspec::cli::register_train_command(app);
  netspec::cli::register_self_registered_commands(app);
  netspec::cli::finish_help(app);
  netspec::cli::set_command_line(argc, argv);
  try {
    netspec::cli::check_command_name(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Extras or a missing required flag: a mistyped flag explains both best.
    const bool typo_likely = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr ||
                             dynamic_cast<const CLI::RequiredError*>(&e) != nullptr;
    try {
      if (typo_likely) netspec::cli::explain_unknown_flags(app, argc, argv);
    } catch (const netspec::Error& u) {
      fmt::print(stderr, "{}\n", u.what());
      return 2;
    }
    app.exit(e);
    return 2;
  } catch (const netspec::Error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {  // an allocation outside the named tensor/arena ones
    fmt::print(stderr,
               "netspec {}: out of memory (lower --batch or --limit, or use a smaller net)\n",
               argc > 1 ? argv[1] : "");
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "netspec: internal error: {}\n", e.what());
    return 3;
  }
  return 0;
}
