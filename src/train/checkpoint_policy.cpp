// The checkpoint policy: monitor, best, top-k, snapshots, early stop, plateau (see
// checkpoint_policy.h).
#include "train/checkpoint_policy.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/error.h"
#include "core/file_check.h"
#include "train/run_dir.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;

// Loss-like metrics fall; accuracy, IoU, mAP and the task's score rise.
bool lower_is_better(const std::string& name) {
  return name.find("loss") != std::string::npos || name.find("bpc") != std::string::npos;
}

nlohmann::json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::optional<double> opt_value(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (v.is_null()) return std::nullopt;
  return v.get<double>();
}

// The monitored value of an epoch: its metrics row's column, or the task's score.
std::optional<double> monitored_value(const LoopContext& ctx, const Monitor& mon,
                                      const EpochMetrics& m) {
  if (mon.name == "val_score")
    return m.evaluated && m.val.count > 0 ? std::optional<double>(m.val.score()) : std::nullopt;
  for (const auto& [name, v] : metrics_row(m, ctx.task))
    if (name == mon.name) return v;
  return std::nullopt;
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

class CheckpointPolicyHook final : public Hook {
 public:
  explicit CheckpointPolicyHook(CheckpointPolicy& p) : p_(p) {}
  double adjust_lr(const LoopContext&, double lr) const override { return p_.cap_lr(lr); }
  void epoch_metrics(LoopContext& ctx, EpochMetrics& m, std::string&) override {
    const double lr_before = p_.cap_lr(ctx.c.learningRate);
    step_ = p_.update(ctx.epoch, monitored_value(ctx, p_.monitor(), m));
    if (!ctx.c.monitor.empty()) m.best = step_.best;
    if (step_.lr_reduced && ctx.o.log)
      *ctx.o.log << fmt::format(
          "plateau: {} did not improve by more than {} for {} evaluations; lr {} -> {}\n",
          p_.monitor().name, number(ctx.c.plateauThreshold), ctx.c.plateauPatience + 1,
          number(lr_before), number(p_.state().plateau_lr));
  }
  void after_epoch(LoopContext& ctx, const EpochMetrics&) override {
    if (p_.active()) ctx.s.policy = p_.state().to_json();  // saved with `last`
    if (!ctx.o.run_dir.empty()) write_files(ctx);
    if (!step_.stop.empty()) ctx.stop_reason = step_.stop;
  }

 private:
  // Top-k files (weights and BN statistics, as best) and snapshots (a copy of `last`).
  void write_files(const LoopContext& ctx) {
    const TrainConfig& c = ctx.c;
    const bool snapshot = c.keepSnapshots && ctx.epoch % c.checkpointEveryNEpochs == 0;
    if (!step_.keep && step_.drop.empty() && !snapshot) return;
    const fs::path dir = fs::path(ctx.o.run_dir) / kCheckpointsDir;
    ensure_writable_dir("train", dir.string(), "checkpoints dir");
    if (step_.keep)
      save_checkpoint((dir / p_.top_k_file(*step_.keep)).string(), ctx.table, ctx.s, ctx.net.name,
                      false);
    std::error_code ec;
    for (const auto& k : step_.drop) fs::remove(dir / p_.top_k_file(k), ec);
    if (snapshot)
      save_checkpoint((dir / CheckpointPolicy::snapshot_file(ctx.epoch)).string(), ctx.table, ctx.s,
                      ctx.net.name);
  }
  CheckpointPolicy& p_;
  PolicyStep step_;
};

}  // namespace

Monitor resolve_monitor(const TrainConfig& c) {
  Monitor m;
  m.name = c.monitor.empty() ? "val_score" : c.monitor;
  m.minimize = c.monitorMode == "auto" ? lower_is_better(m.name) : c.monitorMode == "min";
  return m;
}

std::vector<std::string> monitor_choices(const tasks::Task& task) {
  // An evaluated epoch with every optional part present: the columns that then hold a value.
  EpochMetrics m;
  m.evaluated = true;
  m.val.count = 1;
  m.val.has_top5 = true;
  std::vector<std::string> out = {"train_loss", "val_score"};
  for (const auto& [name, v] : metrics_row(m, task))
    if (v && name.rfind("val_", 0) == 0 && name != "val_count") out.push_back(name);
  return out;
}

void check_monitor(const TrainConfig& c, const tasks::Task& task) {
  if (c.monitor.empty()) return;
  const std::vector<std::string> names = monitor_choices(task);
  if (std::find(names.begin(), names.end(), c.monitor) == names.end())
    fail("train", "monitor '{}' is not a metric of this run (expected one of {})", c.monitor,
         fmt::join(names, ", "));
}

std::string PolicyState::to_json() const {
  nlohmann::ordered_json j;
  j["top_k"] = nlohmann::json::array();
  for (const auto& k : top_k) j["top_k"].push_back({{"epoch", k.epoch}, {"value", k.value}});
  j["best"] = opt_json(best);
  j["stop_best"] = opt_json(stop_best);
  j["stop_best_epoch"] = stop_best_epoch;
  j["stop_wait"] = stop_wait;
  j["stopped_epoch"] = stopped_epoch;
  j["plateau_best"] = opt_json(plateau_best);
  j["plateau_bad"] = plateau_bad;
  j["plateau_cooldown"] = plateau_cooldown;
  j["reductions"] = reductions;
  j["plateau_lr"] = plateau_lr;
  return j.dump();
}

PolicyState PolicyState::from_json(const std::string& text, const std::string& where) {
  PolicyState s;
  try {
    const auto j = nlohmann::json::parse(text);
    for (const auto& k : j.at("top_k"))
      s.top_k.push_back({k.at("epoch").get<int>(), k.at("value").get<double>()});
    s.best = opt_value(j, "best");
    s.stop_best = opt_value(j, "stop_best");
    s.stop_best_epoch = j.at("stop_best_epoch").get<int>();
    s.stop_wait = j.at("stop_wait").get<int>();
    s.stopped_epoch = j.at("stopped_epoch").get<int>();
    s.plateau_best = opt_value(j, "plateau_best");
    s.plateau_bad = j.at("plateau_bad").get<int>();
    s.plateau_cooldown = j.at("plateau_cooldown").get<int>();
    s.reductions = j.at("reductions").get<int>();
    s.plateau_lr = j.at("plateau_lr").get<double>();
  } catch (const nlohmann::json::exception& e) {
    fail("train", "{}: metadata 'netspec.policy' is not a checkpoint policy state ({})", where,
         e.what());
  }
  if (!(s.plateau_lr > 0))
    fail("train", "{}: metadata 'netspec.policy' has plateau_lr {} (expected > 0)", where,
         s.plateau_lr);
  return s;
}

CheckpointPolicy::CheckpointPolicy(const TrainConfig& c) : c_(c), mon_(resolve_monitor(c)) {
  const TrainConfig d;
  active_ = c.monitor != d.monitor || c.saveTopK > 0 || c.keepSnapshots ||
            c.earlyStopPatience > 0 || c.schedule == Schedule::plateau;
  st_.plateau_lr = c.learningRate;
}

void CheckpointPolicy::restore(const std::string& saved, const std::string& where) {
  if (!saved.empty()) st_ = PolicyState::from_json(saved, where);
}

bool CheckpointPolicy::better(double a, double b, double margin) const {
  return mon_.minimize ? a < b - margin : a > b + margin;
}

double CheckpointPolicy::cap_lr(double lr) const {
  return c_.schedule == Schedule::plateau ? std::min(lr, st_.plateau_lr) : lr;
}

std::string CheckpointPolicy::top_k_file(const PolicyState::Kept& k) const {
  return fmt::format("epoch={:03d}-{}={:.4f}.safetensors", k.epoch, mon_.name, k.value);
}

std::string CheckpointPolicy::snapshot_file(int epoch) {
  return fmt::format("epoch={:03d}.safetensors", epoch);
}

PolicyStep CheckpointPolicy::update(int epoch, std::optional<double> value) {
  PolicyStep r;
  if (!value) return r;  // not evaluated this epoch: nothing counts
  const double v = *value;
  if (!c_.monitor.empty() && (!st_.best || better(v, *st_.best, 0))) {
    st_.best = v;
    r.best = true;
  }
  const auto k = static_cast<size_t>(c_.saveTopK);
  if (k > 0 && (st_.top_k.size() < k || better(v, st_.top_k.back().value, 0))) {
    // After every entry at least as good: ties keep the earlier epoch ahead.
    const auto at = std::find_if(st_.top_k.begin(), st_.top_k.end(),
                                 [&](const PolicyState::Kept& e) { return better(v, e.value, 0); });
    st_.top_k.insert(at, {epoch, v});
    r.keep = PolicyState::Kept{epoch, v};
    while (st_.top_k.size() > k) {
      r.drop.push_back(st_.top_k.back());
      st_.top_k.pop_back();
    }
  }
  if (c_.earlyStopPatience > 0) {  // Keras EarlyStopping
    if (!st_.stop_best || better(v, *st_.stop_best, c_.earlyStopMinDelta)) {
      st_.stop_best = v;
      st_.stop_best_epoch = epoch;
      st_.stop_wait = 0;
    } else if (++st_.stop_wait >= c_.earlyStopPatience) {
      st_.stopped_epoch = epoch;
      r.stop = fmt::format(
          "early stop after epoch {}: {} did not improve by more than {} for {} evaluations "
          "(best {} at epoch {})",
          epoch, mon_.name, number(c_.earlyStopMinDelta), st_.stop_wait, number(*st_.stop_best),
          st_.stop_best_epoch);
    }
  }
  if (c_.schedule == Schedule::plateau) {  // PyTorch ReduceLROnPlateau, threshold_mode abs
    if (!st_.plateau_best || better(v, *st_.plateau_best, c_.plateauThreshold)) {
      st_.plateau_best = v;
      st_.plateau_bad = 0;
    } else {
      ++st_.plateau_bad;
    }
    if (st_.plateau_cooldown > 0) {
      --st_.plateau_cooldown;
      st_.plateau_bad = 0;
    }
    if (st_.plateau_bad > c_.plateauPatience) {
      const double lower = std::max(st_.plateau_lr * c_.plateauFactor, c_.plateauMinLr);
      if (lower < st_.plateau_lr) {
        st_.plateau_lr = lower;
        ++st_.reductions;
        r.lr_reduced = true;
      }
      st_.plateau_cooldown = c_.plateauCooldown;
      st_.plateau_bad = 0;
    }
  }
  return r;
}

std::unique_ptr<Hook> make_checkpoint_policy_hook(CheckpointPolicy& policy) {
  return std::make_unique<CheckpointPolicyHook>(policy);
}

}  // namespace netspec::train
