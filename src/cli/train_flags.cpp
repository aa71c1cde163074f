// The command-line value validator (see train_flags.h).
#include "cli/train_flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/error.h"
#include "data/datasets.h"
#include "train/config.h"

namespace netspec::cli {
namespace {

// "[train] learningRate must be > 0 (got -1)" -> "learningRate must be > 0 (got -1)".
std::string strip_where(const std::string& msg) {
  if (!msg.empty() && msg[0] == '[')
    if (auto p = msg.find("] "); p != std::string::npos) return msg.substr(p + 2);
  return msg;
}

std::string set_message(const Error& e) {
  std::string m = strip_where(e.what());
  if (m.rfind("--set ", 0) == 0) m = strip_where(m.substr(m.find(": ") + 2));  // apply_set's
  return m;
}

// Applies one assignment and validates the result; errors are re-thrown naming `label`. With
// `pending`, a failed validation of a value that parsed is remembered there (the first one) and
// decided by check_applied once every assignment is in.
void apply_checked(TrainConfig& c, const std::string& assignment, std::string_view where,
                   const std::string& label, PendingCheck* pending) {
  try {
    train::apply_set(c, assignment);
  } catch (const Error& e) {
    fail(where, "{}: {}", label, set_message(e));
  }
  try {
    validate(c);
  } catch (const Error& e) {
    if (!pending) fail(where, "{}: {}", label, set_message(e));
    if (pending->label.empty()) *pending = {label, set_message(e)};
  }
}

}  // namespace

void ConfigFlags::add(CLI::App* cmd, const std::string& flag, const std::string& field,
                      const std::string& help) {
  auto v = std::make_shared<std::string>();
  CLI::Option* opt = cmd->add_option(flag, *v, help);
  flags_.push_back({flag, field, v, opt});
}

void ConfigFlags::add_dataset(CLI::App* cmd, std::string& dir, const std::string& dir_help) {
  add(cmd, "--dataset", "dataset", data::loadable_dataset_names(" | ") + " (default: the spec's)");
  cmd->add_option("--data", dir, dir_help);
}

bool ConfigFlags::given(const std::string& flag) const {
  for (const auto& f : flags_)
    if (f.flag == flag) return f.opt->count() > 0;
  return false;
}

void ConfigFlags::apply(TrainConfig& c, std::string_view where, PendingCheck* pending) const {
  for (const auto& f : flags_) {
    if (f.opt->count() == 0) continue;
    const std::string label = f.flag + " " + *f.value;
    if (f.field == "dataset") {
      DatasetKind k;
      try {
        k = train::parse_dataset(*f.value);
      } catch (const Error& e) {
        fail(where, "{}: {}", label, strip_where(e.what()));
      }
      apply_checked(c, "dataset=" + std::string(enum_name(k)), where, label, pending);
    } else if (f.field == "optimizer") {
      apply_optimizer_name(c, *f.value, where);
      apply_checked(c, "optimizer=" + std::string(enum_name(c.optimizer)), where, label, pending);
    } else {
      apply_checked(c, f.field + "=" + *f.value, where, label, pending);
    }
  }
}

void apply_sets(TrainConfig& c, const std::vector<std::string>& sets, std::string_view where,
                PendingCheck* pending) {
  for (const auto& s : sets) apply_checked(c, s, where, "--set " + s, pending);
}

void check_applied(const TrainConfig& c, std::string_view where, const PendingCheck& pending) {
  if (pending.label.empty()) return;
  try {
    validate(c);
  } catch (const Error& e) {
    const std::string m = set_message(e);
    if (m == pending.message) fail(where, "{}: {}", pending.label, m);
    fail(where, "the flags and --set values together: {}", m);
  }
}

void apply_optimizer_name(TrainConfig& c, const std::string& name, std::string_view where) {
  std::string n = name;
  if (n == "adamw" || n == "adamW") {
    n = "adam";
    if (c.weightDecay == 0) c.weightDecay = 0.01;  // torch.optim.AdamW's default
  }
  auto k = parse_enum<OptimizerKind>(n);
  if (!k)
    fail(where, "unknown --optimizer '{}' (expected adamw, {})", name,
         enum_choices<OptimizerKind>());
  c.optimizer = *k;
}

double number_flag(std::string_view where, std::string_view flag, const std::string& text,
                   double lo, double hi, bool integer) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v))
    fail(where, "{} {}: expected a finite number", flag, text);
  if (integer && v != std::floor(v)) fail(where, "{} {}: expected an integer", flag, text);
  if (v < lo) fail(where, "{} {}: must be >= {} (got {})", flag, text, lo, text);
  if (v > hi) fail(where, "{} {}: must be <= {} (got {})", flag, text, hi, text);
  return v;
}

}  // namespace netspec::cli
