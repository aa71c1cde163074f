// `netspec gradcheck FILE.mlir`: checks the VJP of a function against central finite differences
// in f64 (autodiff::gradcheck). Exit status: 0 when every checked input is within the tolerance,
// 1 when one is not (the report is printed first, then std::exit(1): main() maps exceptions to 2
// and 3, so a failed check leaves through exit), 2 for bad input (a netspec::Error).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "gradcheck/gradcheck.h"
#include "hlo/text/parser.h"

namespace netspec::cli {
namespace {

// Coordinates checked per input (two runs each) before sampling takes over.
constexpr int64_t kDefaultMaxCoords = 1000;

struct GradcheckArgs {
  std::string file;
  std::string entry;
  uint64_t seed = 0;
  std::vector<std::string> wrt;
  std::string backend = "ref";
  double tolerance = autodiff::kGradcheckTolerance;
  bool positive = false;
  int64_t max_coords = kDefaultMaxCoords;
  RunLimitArgs limits;
};

// "3", "arg3" or "%arg3" -> 3.
size_t parse_input_name(const std::string& s, size_t num_args) {
  std::string t = s;
  if (!t.empty() && t[0] == '%') t = t.substr(1);
  if (t.rfind("arg", 0) == 0) t = t.substr(3);
  size_t idx = 0;
  bool ok = !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
  if (ok) idx = static_cast<size_t>(std::stoull(t));
  if (!ok || idx >= num_args)
    fail("gradcheck", "--wrt {}: no such input (expected an index or %argN below {})", s, num_args);
  return idx;
}

void gradcheck_command(const GradcheckArgs& a) {
  apply_run_limits("gradcheck", a.limits);
  if (!std::isfinite(a.tolerance) || a.tolerance < 0)
    fail("gradcheck", "--tolerance must be a finite number >= 0 (got {})", a.tolerance);
  auto module = hlo::parse_file(a.file);
  const hlo::Func* f = module->entry(a.entry);
  autodiff::GradcheckOptions o;
  o.entry = f->name;
  o.seed = a.seed;
  o.backend = a.backend;
  o.tolerance = a.tolerance;
  o.positive = a.positive;
  if (a.max_coords < 1) fail("gradcheck", "--max-coords must be >= 1 (got {})", a.max_coords);
  o.max_coords = a.max_coords;
  for (const auto& w : a.wrt) o.wrt.push_back(parse_input_name(w, f->num_args()));
  // Progress on stderr, at most once a second, once the check has run for a second.
  auto start = std::chrono::steady_clock::now();
  auto last = start;
  o.progress = [&](size_t input, int64_t done, int64_t total) {
    auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::seconds(1) && done < total) return;
    if (now - start < std::chrono::seconds(1)) return;
    last = now;
    fmt::print(stderr, "[gradcheck] input {}: {} of {} coordinates ({:.1f} s)\n", input, done,
               total, std::chrono::duration<double>(now - start).count());
  };
  autodiff::GradcheckReport r = autodiff::gradcheck(*module, o);
  for (const auto& in : r.inputs)
    fmt::print(
        "input {} (%arg{}: {}, {} elements{}): max abs error {:.3e}, max rel error {:.3e}  {}\n",
        in.index, in.index, f->arg(in.index)->type.str(), in.numel,
        in.checked < in.numel ? fmt::format(", {} checked at random", in.checked) : "", in.max_abs,
        in.max_rel, in.ok ? "ok" : "FAILED");
  fmt::print("@{}: {} (tolerance {:.1e} on the relative error, backend {}, seed {})\n", f->name,
             r.ok ? "gradients match" : "gradient MISMATCH", r.tolerance, a.backend, a.seed);
  if (!r.ok) {
    std::fflush(stdout);
    std::exit(1);
  }
}

}  // namespace

void register_gradcheck_command(CLI::App& app) {
  auto args = std::make_shared<GradcheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "gradcheck",
      "Check a function's reverse-mode gradient (VJP) against central finite differences in f64.\n"
      "The function is converted to f64, float inputs are drawn as +-[0.25, 1] with distinct\n"
      "magnitudes (no zeros, no ties: away from relu/max kinks), integer inputs in [0, 3), and a\n"
      "random output cotangent ybar in [-1, 1]. Per input it prints the max absolute error and "
      "the\n"
      "max relative error = max|vjp - fd| / max(|vjp|, |fd|). Exits 1 when a relative error is "
      "above\n"
      "the tolerance (default 1e-6), 2 on bad input.");
  cmd->add_option("file", args->file, "StableHLO module (.mlir)")->required();
  cmd->add_option("--entry", args->entry,
                  "function to check (default: main, else the only public one)");
  cmd->add_option("--seed", args->seed, "random seed for inputs and cotangent")
      ->capture_default_str();
  cmd->add_option("--wrt", args->wrt,
                  "inputs to check, by index or %argN (default: every float input)");
  cmd->add_option("--backend", args->backend, "executor: ref or cpu")->capture_default_str();
  cmd->add_option("--tolerance", args->tolerance, "maximum relative error")->capture_default_str();
  cmd->add_option("--max-coords", args->max_coords,
                  "check at most this many coordinates per input (distinct, drawn with the seed; "
                  "an input with more elements is sampled)")
      ->capture_default_str();
  cmd->add_flag("--positive", args->positive, "draw positive float inputs only (log, sqrt, ...)");
  add_run_limit_flags(cmd, args->limits);
  cmd->callback([args] { gradcheck_command(*args); });
}

}  // namespace netspec::cli
