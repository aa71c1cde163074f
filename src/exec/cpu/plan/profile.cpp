// NETSPEC_PROFILE=1: wall time per step summed over a plan's runs, merged into one process-wide
// profile when the plan dies and printed to stderr at exit (per function, op kind and step;
// NETSPEC_PROFILE_TOP=N lists N steps, default 40). A plan's first run is left out where it ran
// again: its page faults on fresh arenas would skew the shares.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "exec/cpu/plan/plan.h"

namespace netspec::exec::cpu {
namespace {

// Process-wide profile: per op kind and per distinct step label, printed at exit.
struct Profile {
  std::mutex mu;
  std::map<std::string, std::pair<double, int64_t>> by_kind, by_step;  // ms, calls
  std::map<std::string, std::pair<double, int64_t>> by_func;           // ms, runs
  int64_t first_runs_left_out = 0;  // plans that ran more than once
  ~Profile() {
    if (by_kind.empty()) return;
    auto top = [](const std::map<std::string, std::pair<double, int64_t>>& m, size_t n) {
      std::vector<std::pair<std::string, std::pair<double, int64_t>>> v(m.begin(), m.end());
      std::sort(v.begin(), v.end(),
                [](auto& a, auto& b) { return a.second.first > b.second.first; });
      if (v.size() > n) v.resize(n);
      return v;
    };
    double total = 0;
    for (auto& [k, v] : by_kind) total += v.first;
    std::fprintf(stderr, "NETSPEC_PROFILE (cpu executor, wall ms summed over runs%s)\n",
                 first_runs_left_out ? "; each plan's first run left out where it ran again" : "");
    for (auto& [k, v] : by_func)
      std::fprintf(stderr, "  function %s: %lld runs, %.3f ms/run\n", k.c_str(),
                   static_cast<long long>(v.second),
                   v.first / static_cast<double>(std::max<int64_t>(v.second, 1)));
    std::fprintf(stderr, "  by op kind:\n");
    for (auto& [k, v] : top(by_kind, 40))
      std::fprintf(stderr, "  %10.2f ms %5.1f%% %8lld calls  %s\n", v.first, 100 * v.first / total,
                   static_cast<long long>(v.second), k.c_str());
    std::fprintf(stderr, "  top steps:\n");
    const char* top_env = std::getenv("NETSPEC_PROFILE_TOP");  // steps listed (default 40)
    const size_t top_steps = top_env ? std::strtoul(top_env, nullptr, 10) : 40;
    for (auto& [k, v] : top(by_step, top_steps))
      std::fprintf(stderr, "  %10.2f ms %5.1f%% %8lld calls  %s\n", v.first, 100 * v.first / total,
                   static_cast<long long>(v.second), k.c_str());
  }
};
Profile& global_profile() {
  static Profile p;
  return p;
}

}  // namespace

Plan::~Plan() {
  if (!profile || prof_runs == 0) return;
  Profile& pr = global_profile();
  std::lock_guard<std::mutex> lk(pr.mu);
  // Warm runs only, where there were any (the first run's page faults skew the shares).
  const int64_t runs = prof_runs > 1 ? prof_runs - 1 : 1;
  const std::vector<double>& ms = prof_runs > 1 ? prof_ms : prof_first_ms;
  if (prof_runs > 1) ++pr.first_runs_left_out;
  double sum = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    std::string kind = st.reorder      ? std::string("layout reorder")
                       : st.fused_conv ? std::string("convolution +post-ops")
                       : st.fused      ? std::string("fusion")
                                       : std::string(op_mnemonic(st.op->kind)) +
                                        (st.kind == StepKind::kRef    ? " [ref]"
                                         : st.kind == StepKind::kView ? " [view]"
                                                                      : "");
    auto& s = pr.by_step[st.label];
    s.first += ms[i];
    s.second += runs;
    sum += ms[i];
    if (st.kind == StepKind::kRegion) continue;  // its regions' steps are counted themselves
    auto& k = pr.by_kind[kind];
    k.first += ms[i];
    k.second += runs;
  }
  if (!func) return;  // a region's sub-plan: its time is part of the enclosing function's
  auto& f = pr.by_func[func->name];
  f.first += sum;
  f.second += runs;
}

std::string step_label(const hlo::Op& op, StepKind kind) {
  std::string label =
      std::string(op_mnemonic(op.kind)) + (kind == StepKind::kRef      ? " [ref] "
                                           : kind == StepKind::kView   ? " [view] "
                                           : kind == StepKind::kRegion ? " [regions, total] "
                                                                       : " ");
  for (size_t i = 0; i < op.operands.size(); ++i)
    label += (i ? ", " : "") + op.operand(i)->type.str();
  label += " -> " + op.result(0)->type.str();
  if (op.kind == hlo::OpKind::kConvolution)
    label += fmt::format(" bgc={} fgc={} lhs_dil={}", op.attrs.get_int_or("batch_group_count", 1),
                         op.attrs.get_int_or("feature_group_count", 1),
                         fmt::join(i64s_attr(op, "lhs_dilation"), "x"));
  return label;
}

std::string fused_label(const FusedGroup& g, const hlo::Op& last) {
  std::string label = fmt::format("fusion[{} ops:", g.ops.size());
  for (const hlo::Op* m : g.ops) label += " " + std::string(op_mnemonic(m->kind));
  return label + "] -> " + last.result(0)->type.str();
}

}  // namespace netspec::exec::cpu
