// Help text and unknown-flag answers for the whole command tree: value types in place of
// CLI11's TEXT (`--epochs INT`, `--data PATH`), `netspec --help` grouped with an example per group,
// and "unknown flag --epoch; did you mean '--epochs'?" instead of CLI11's list of extras.
#pragma once
#include <CLI/CLI.hpp>

namespace netspec::cli {

// Run once every command is registered.
void finish_help(CLI::App& app);

// After CLI11 found arguments it did not expect: throws "[netspec train] unknown flag --epoch;
// did you mean '--epochs'? ..." for the first flag the named command lacks; returns when every
// flag is known (the extras are positionals: CLI11's own message stands).
void explain_unknown_flags(CLI::App& app, int argc, char** argv);

}  // namespace netspec::cli
