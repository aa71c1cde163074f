// Gradient checking: converts a function to f64, draws random inputs (away from kinks) and a
// random output cotangent, builds its VJP, and compares xbar with central finite differences of
// <ybar, f(x)> on an executor (`ref` by default). Used by `netspec gradcheck` and by the tests
// of every VJP rule, layer and loss.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "hlo/ir.h"

namespace netspec::autodiff {

// Default tolerance on the relative error (see InputReport::max_rel).
constexpr double kGradcheckTolerance = 1e-6;

struct GradcheckOptions {
  std::string entry;  // function name ("" = module entry)
  uint64_t seed = 0;
  std::vector<size_t> wrt;      // inputs to check; empty = every float input
  std::string backend = "ref";  // executor: "ref" or "cpu"
  double tolerance = kGradcheckTolerance;
  double step = 1e-5;  // finite-difference step h (in f64)
  // Float inputs are drawn as ±[lo, hi] with distinct magnitudes (gaps > 2h·count apart), so no
  // element sits at 0 and no two tie; `positive` drops the sign (for log, sqrt, ...).
  double lo = 0.25, hi = 1.0;
  bool positive = false;
  std::map<size_t, bool> positive_inputs;  // per-input override of `positive`
  std::map<size_t, Tensor> fixed_inputs;   // inputs given verbatim (indices, masks, ...)
  int64_t int_max = 3;  // integer inputs without a fixed value: uniform in [0, int_max)
  // An input also passes when max |vjp - fd| <= zero_abs: for parameters whose exact gradient is
  // 0 (a bias or BN β feeding conv + BN, which cancels any per-channel shift), the relative error
  // of two rounding-noise numbers means nothing. 0: off (relative check only).
  double zero_abs = 0;
  // Finite differences cost two runs per coordinate: an input with more than max_coords elements
  // is checked on max_coords distinct coordinates drawn with the seed (0: every coordinate).
  int64_t max_coords = 0;
  // Called after each checked coordinate (input index, coordinates done, coordinates to check).
  std::function<void(size_t input, int64_t done, int64_t total)> progress;
  // > 1: the function runs replicated (run_replicated; all_reduce meets across the replicas).
  // Each replica gets its own inputs and cotangent; replica r's input gradient is compared with
  // finite differences of Σ_s <ybar_s, f_s> when only replica r's copy of the input moves.
  int replicas = 1;
};

struct InputReport {
  size_t index = 0;
  int64_t numel = 0;
  int64_t checked = 0;  // coordinates compared (numel unless sampled, see max_coords)
  double max_abs = 0;  // max_j |vjp_j - fd_j|
  double max_rel = 0;  // max_abs / max_j max(|vjp_j|, |fd_j|) (0 when both are all zero)
  bool ok = true;
};

struct GradcheckReport {
  std::string func;
  std::vector<InputReport> inputs;
  bool ok = true;
  double tolerance = kGradcheckTolerance;
  std::string str() const;  // one line per input
};

// Checks `func` of `m` (m itself is not modified: the check runs on an f64 copy).
GradcheckReport gradcheck(const hlo::Module& m, const GradcheckOptions& opts = {});

// The sampler, exposed for tests: a tensor of `t`'s type per the options above.
Tensor sample_input(const hlo::Type& t, size_t index, const GradcheckOptions& opts,
                    uint64_t& state);

}  // namespace netspec::autodiff
