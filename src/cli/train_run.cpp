// Validation hold-out, fine-tuning options and label checks for `train` (see train_run.h).
#include "cli/train_run.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <random>

#include "cli/train_flags.h"
#include "core/error.h"
#include "data/sample_source.h"
#include "exec/cpu/cpu_backend.h"
#include "layers/param_table.h"
#include "optim/optimizer.h"
#include "spec/summary.h"
#include "tasks/task.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/evaluate.h"
#include "train/trainer.h"

namespace netspec::cli {
namespace {

namespace fs = std::filesystem;

// Class-index labels must lie in [0, classes) (a 12-class folder for a 10-class net fails here,
// before an epoch is trained).
void check_labels(const data::Dataset& ds, int64_t classes, const std::string& split,
                  const train::RunRecord& rec) {
  if (ds.y.dtype() != DType::kI32 || ds.y.shape().size() != 1 || classes <= 0) return;
  const int32_t* y = ds.y.data<int32_t>();
  for (int64_t i = 0; i < ds.size(); ++i)
    if (y[i] < 0 || y[i] >= classes)
      fail("data",
           "{} split of {}{}: sample {} has label {}, outside the net's {} classes (use "
           "--classes N to resize the head)",
           split, enum_name(rec.spec.train->dataset), rec.data.empty() ? "" : " in " + rec.data, i,
           y[i], classes);
}

}  // namespace

void add_train_run_options(CLI::App* cmd, TrainRunArgs& a) {
  cmd->add_option("--val-split", a.val_split,
                  "hold out this fraction (0 < F < 1) of the training set, seeded: best is chosen "
                  "on it, the test split is reported once at the end");
  cmd->add_option("--init-from", a.init_from,
                  "start from weights: a .safetensors file (netspec names: a checkpoint, `netspec "
                  "convert` output) or a run dir (its best); a head of another shape is "
                  "re-initialised");
  cmd->add_option("--classes", a.classes, "resize the classifier head to N classes");
  cmd->add_option("--freeze", a.freeze,
                  "parameter-name prefixes kept fixed (e.g. layers.0 layers.1.); sets the "
                  "TrainConfig field freeze")
      ->expected(1, -1);
}

void apply_train_run_args(CLI::App* cmd, const TrainRunArgs& a, train::RunRecord& rec) {
  if (cmd->count("--val-split")) {
    rec.val_split = number_flag("train", "--val-split", a.val_split, 0, 1, false);
    if (rec.val_split <= 0 || rec.val_split >= 1)
      fail("train", "--val-split {}: must be in (0, 1) (got {})", a.val_split, rec.val_split);
  }
  if (cmd->count("--init-from")) {
    if (a.init_from.empty()) fail("train", "--init-from: empty path");
    rec.init_from = fs::absolute(init_from_file(a.init_from)).string();
  }
  if (cmd->count("--classes")) {
    rec.classes = static_cast<int>(number_flag("train", "--classes", a.classes, 1, 1e9));
    set_num_classes(rec.spec.net, rec.classes);
  }
  if (cmd->count("--freeze")) {
    std::string joined;
    for (const auto& p : a.freeze) {
      if (p.empty() || p.find(',') != std::string::npos)
        fail("train", "--freeze '{}': a prefix must be non-empty and hold no comma", p);
      joined += (joined.empty() ? "" : ",") + p;
    }
    rec.spec.train->freeze = joined;
  }
}

void report_held_out_test(const std::string& run_dir, const train::RunRecord& rec,
                          const ParamTable& table, const data::Splits& held_out,
                          const std::string& backend, const exec::BackendOptions& engine,
                          std::ostream& out) {
  const fs::path best = fs::path(run_dir) / "best.safetensors";
  if (!fs::exists(best) || held_out.test.size() == 0) return;
  const TrainConfig& c = *rec.spec.train;
  auto be = exec::make_backend(backend, engine);
  train::Evaluator ev(rec.spec.net, c.batchSize, *be, &table);
  train::TrainState s = train::make_state(train::init_params(table, c.init, 0), {}, ev.manifest());
  train::load_checkpoint(best.string(), table, s, false);
  // The run's task scores it and words the line (accuracy, mIoU over pixels, MSE, ...).
  auto task =
      tasks::make_task(tasks::task_kind(rec.spec.net, c),
                       tasks::TaskEnv{rec.spec.net, table, c, held_out, {}, nullptr, nullptr});
  task->attach(ev);
  train::EpochMetrics m;
  task->init_metrics(m);
  task->evaluate(s, {}, m);
  m.evaluated = true;
  out << task->final_text(m, "test")
      << fmt::format(" (best checkpoint, epoch {}, chosen on validation)\n", s.epoch);
}

std::string init_from_file(const std::string& p) {
  if (!fs::exists(p)) fail("train", "--init-from {}: no such file or run dir", p);
  if (!fs::is_directory(p)) return p;
  for (const char* f : {"best.safetensors", "last.safetensors"})
    if (fs::exists(fs::path(p) / f)) return (fs::path(p) / f).string();
  fail("train", "--init-from {}: the run dir has no best.safetensors or last.safetensors", p);
}

namespace {
// DIR/<class>/x.{jpg,png} or DIR/train/<class>/x.{jpg,png}: the `folder` dataset's layout.
bool looks_like_class_folders(const std::string& dir) {
  std::error_code ec;
  for (const fs::path& root : {fs::path(dir), fs::path(dir) / "train"}) {
    if (!fs::is_directory(root, ec)) continue;
    for (const auto& sub : fs::directory_iterator(root, ec)) {
      if (!sub.is_directory(ec)) continue;
      for (const auto& f : fs::directory_iterator(sub.path(), ec)) {
        std::string ext = f.path().extension().string();
        for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (ext == ".png" || ext == ".jpg" || ext == ".jpeg") return true;
      }
    }
  }
  return false;
}
}  // namespace

void size_head_from_data(train::RunRecord& rec, std::ostream& log) {
  const TrainConfig& c = *rec.spec.train;
  if (rec.classes > 0 || rec.data.empty() ||
      (c.dataset != DatasetKind::folder && c.dataset != DatasetKind::csv) ||
      tasks::task_kind(rec.spec.net, c) != tasks::TaskKind::classification)
    return;
  const int head = num_classes(rec.spec.net);
  // A folder's class names are its folder names: one sample is enough. A table's label column is
  // read as training reads it (--limit): names, or class indices counting max label + 1.
  const bool folder = c.dataset == DatasetKind::folder;
  // A folder is only listed (both splits streamed: nothing decoded, so neither a large val split
  // is read into RAM nor a bad image in it stops the run before --skip-bad-images applies).
  struct Restore {
    data::PipelineOptions saved = data::pipeline_options();
    ~Restore() { data::pipeline_options() = saved; }
  } restore;
  if (folder) {
    data::pipeline_options().stream_allowed = true;
    data::pipeline_options().memory_mb = 0;
  }
  const data::Splits s =
      train::load_for_net(c, build_param_table(rec.spec.net), rec.data, folder ? 1 : rec.limit);
  auto n = static_cast<int>(s.class_names.size());
  std::string which = fmt::format("{}", fmt::join(s.class_names, ", "));
  if (!folder && s.class_names.empty()) {
    int32_t top = -1;
    for (const data::Dataset* d : {&s.train, &s.test})
      for (int64_t i = 0; i < d->y.numel(); ++i) top = std::max(top, d->y.data<int32_t>()[i]);
    n = top + 1;
    which = fmt::format("labels 0..{}", top);
  }
  if (head < 0 || n < 2 || n == head) return;
  set_num_classes(rec.spec.net, n);
  rec.classes = n;
  log << fmt::format(
      "{} has {} classes ({}): the {}-way head of {} is resized to {} (--classes {})\n", rec.data,
      n, which, head, rec.spec.net.name, n, n);
}

std::string trainable_line(const ParamTable& table, const TrainConfig& c) {
  const std::vector<std::string> prefixes = optim::freeze_prefixes(c.freeze);
  int64_t trainable = 0, frozen = 0;
  for (const auto& p : table.params)
    (optim::is_frozen(p.name, prefixes) ? frozen : trainable) += p.numel();
  return fmt::format(
      "params: {} trainable, {} frozen{}\n", group_digits(trainable), group_digits(frozen),
      prefixes.empty() ? "" : fmt::format(" (--freeze {})", fmt::join(prefixes, " ")));
}

std::string bf16_line(const TrainConfig& c, const std::string& backend) {
  if (!c.bf16 || backend != "cpu" || !exec::cpu::bf16_products_in_f32()) return "";
  return "bf16: this CPU has no bf16 kernels (AVX-512 BF16 or AMX): the cpu backend runs the bf16\n"
         "      products in f32 on the bf16-rounded operands (the same rounding; bf16=false is a\n"
         "      little faster here)\n";
}

data::Splits load_train_data(const train::RunRecord& rec, const ParamTable& table,
                             data::Dataset* test_out) {
  const TrainConfig& c = *rec.spec.train;
  data::Splits s;
  try {
    s = train::load_for_net(c, table, rec.data, rec.limit);
  } catch (const Error& e) {
    if (c.dataset == DatasetKind::folder || !looks_like_class_folders(rec.data)) throw;
    fail("train", "{}\n{} holds image class folders: add --dataset folder to train on them",
         e.what(), rec.data);
  }
  const int64_t classes = num_classes(rec.spec.net);
  // Class indices are labels of classification only (DDPM's target is the noise, a
  // regression's the input itself, text and detection have their own).
  if (tasks::task_kind(rec.spec.net, c) == tasks::TaskKind::classification) {
    check_labels(s.train, classes, "train", rec);
    check_labels(s.test, classes, "test", rec);
  }
  *test_out = data::Dataset{};
  if (rec.val_split <= 0) {
    if (s.test.size() == 0)
      fail("train",
           "{} has no validation or test split (an image folder needs DIR/val/ or "
           "DIR/test/ beside DIR/train/): pass --val-split F to hold out a fraction",
           rec.data.empty() ? std::string(enum_name(c.dataset)) : rec.data);
    return s;
  }
  *test_out = hold_out_validation(s, rec.val_split, c.seed, "train");
  return s;
}

data::Dataset hold_out_validation(data::Splits& s, double fraction, int64_t seed,
                                  const std::string& where) {
  if (s.text) fail(where, "--val-split: text data already has its validation split");
  if (s.views) fail(where, "--val-split: radiance-field data already has its held-out views");
  // A seeded permutation: its first round(F·N) samples validate, the rest train.
  const int64_t n = s.train.size();
  const auto nv = static_cast<int64_t>(std::llround(fraction * static_cast<double>(n)));
  if (nv < 1 || nv >= n)
    fail(where,
         "--val-split {} of {} training samples leaves {} for validation and {} for "
         "training (each needs >= 1)",
         fraction, n, nv, n - nv);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(static_cast<uint64_t>(seed) ^ 0x76616c73706c6974ull);  // "valsplit"
  std::shuffle(idx.begin(), idx.end(), rng);
  std::vector<int64_t> va(idx.begin(), idx.begin() + nv), tr(idx.begin() + nv, idx.end());
  std::sort(va.begin(), va.end());
  std::sort(tr.begin(), tr.end());
  data::Dataset test = std::move(s.test);
  s.test = data::take_rows(s.train, va);
  s.train = data::take_rows(s.train, tr);
  return test;
}

}  // namespace netspec::cli
