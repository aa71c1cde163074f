// TensorBoard logging (hooks.h): RUN/events.out.tfevents.* (report/tb_events.h) beside
// metrics.csv. Per update "step/train_loss", "step/lr" and "step/samples_per_s" (steps.csv's
// values); per epoch every metrics.csv column under its own name (epoch, lr, train_loss, val_loss,
// val_top1, the task's metric columns, ...) at the epoch's last step; at the start the run's
// config.json as the text summary "config" and its net name and TrainConfig fields as hparams
// (numbers, strings, booleans; lists are left to the text). A resume writes a new file, as
// TensorBoard's own writers do, after dropping the steps past the checkpoint from the earlier files
// (trained again now), so each step is logged once, as metrics.csv keeps each epoch once.
// (TensorBoard would otherwise purge or show the later duplicate; PyTorch Lightning users expect
// one curve.)
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/file_check.h"
#include "report/tb_events.h"
#include "train/hooks.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Markdown shows text indented by four spaces as it is (TensorBoard's text tab renders Markdown).
std::string as_code_block(const std::string& text) {
  std::string out = "    ";
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size()) out += "    ";
  }
  return out;
}

// The HParams dashboard's columns: the net's name and the scalar TrainConfig fields of config.json.
report::HParams hparams_of(const std::string& config_json) {
  report::HParams hp;
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(config_json);
  } catch (const nlohmann::json::exception&) {
    return hp;  // config.json was written by this run: unreadable only if edited meanwhile
  }
  if (!j.contains("spec") || !j["spec"].is_object()) return hp;
  const auto& spec = j["spec"];
  if (spec.contains("name") && spec["name"].is_string())
    hp.emplace_back("net", spec["name"].get<std::string>());
  if (!spec.contains("train") || !spec["train"].is_object()) return hp;
  for (const auto& [k, v] : spec["train"].items()) {
    if (v.is_number()) hp.emplace_back(k, v.get<double>());
    if (v.is_string()) hp.emplace_back(k, v.get<std::string>());
    if (v.is_boolean()) hp.emplace_back(k, v.get<bool>());
  }
  return hp;
}

// The run dir, its event files cut back to the checkpoint's step first.
const std::string& truncated_run_dir(const LoopContext& ctx) {
  report::truncate_event_files(ctx.o.run_dir, ctx.s.step);
  return ctx.o.run_dir;
}

class TensorBoardHook final : public Hook {
 public:
  explicit TensorBoardHook(const LoopContext& ctx)
      : writer_(truncated_run_dir(ctx)), flushed_(Clock::now()) {
    const fs::path cfg = fs::path(ctx.o.run_dir) / "config.json";
    std::error_code ec;
    if (fs::is_regular_file(cfg, ec)) {
      const std::string text = read_regular_file("tensorboard", cfg);
      writer_.text(ctx.s.step, "config", as_code_block(text));
      writer_.hparams(ctx.s.step, hparams_of(text));
    }
    writer_.flush();
  }
  void after_step(LoopContext& ctx, const StepEnd& e) override {
    const report::Row r = step_row(ctx.s.step, 0, e);
    report::Scalars v;
    for (const char* k : {"train_loss", "lr", "samples_per_s"})
      if (auto x = report::get(r, k)) v.emplace_back(std::string("step/") + k, *x);
    writer_.scalars(ctx.s.step, v);
    // A live view: the file is appended every few seconds, not only per epoch.
    if (Clock::now() - flushed_ > std::chrono::seconds(5)) flush();
  }
  void after_epoch(LoopContext& ctx, const EpochMetrics& m) override {
    report::Scalars v;
    for (const auto& [name, x] : metrics_row(m, ctx.task))
      if (x && name != "step") v.emplace_back(name, *x);
    writer_.scalars(m.step, v);
    flush();
  }
  void on_stop(LoopContext&) override { flush(); }
  void on_checkpoint(LoopContext&) override { flush(); }

 private:
  void flush() {
    writer_.flush();
    flushed_ = Clock::now();
  }
  report::EventWriter writer_;
  Clock::time_point flushed_;
};

}  // namespace

std::unique_ptr<Hook> make_tensorboard_hook(const LoopContext& ctx) {
  if (ctx.o.run_dir.empty()) return nullptr;
  return std::make_unique<TensorBoardHook>(ctx);
}

}  // namespace netspec::train
