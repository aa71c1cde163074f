// The --max-iterations / --timeout flags shared by `run` and `gradcheck` (see commands.h).
#include <cmath>

#include "cli/commands.h"
#include "core/error.h"
#include "exec/limits.h"

namespace netspec::cli {

void add_run_limit_flags(CLI::App* cmd, RunLimitArgs& a) {
  cmd->add_option("--max-iterations", a.max_iterations,
                  "Stop with an error when one while loop runs more iterations than this")
      ->capture_default_str();
  cmd->add_option("--timeout", a.timeout_s,
                  "Stop with an error after this many seconds of wall-clock time (0: no limit)")
      ->capture_default_str();
}

void apply_run_limits(std::string_view where, const RunLimitArgs& a) {
  if (a.max_iterations < 1) fail(where, "--max-iterations must be >= 1 (got {})", a.max_iterations);
  if (!std::isfinite(a.timeout_s) || a.timeout_s < 0)
    fail(where, "--timeout must be a finite number of seconds >= 0 (got {})", a.timeout_s);
  exec::set_run_limits(a.max_iterations, a.timeout_s);
}

}  // namespace netspec::cli
