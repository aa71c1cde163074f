// The `train` options that shape a run beyond TrainConfig: a seeded validation hold-out
// (--val-split), fine-tuning (--init-from FILE|RUN_DIR, --classes N, --freeze PREFIX...), and
// loading the run's data with labels checked against the net's classes at load time.
#pragma once
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "data/datasets.h"
#include "exec/backend.h"
#include "spec/param_table.h"
#include "train/run_dir.h"

namespace netspec::cli {

struct TrainRunArgs {
  std::string val_split, init_from, classes;
  std::vector<std::string> freeze;
};
void add_train_run_options(CLI::App* cmd, TrainRunArgs& a);
// Validates the given options (number_flag) and records them in `rec` (--classes resizes the
// head of rec.spec.net, --freeze sets TrainConfig::freeze).
void apply_train_run_args(CLI::App* cmd, const TrainRunArgs& a, train::RunRecord& rec);

// A classifier trained on a user's own data (--dataset folder, or csv: named labels, or class
// indices counting max label + 1) without --classes: when the data's class count differs from the
// net's head, the head is resized to it (recorded as --classes N, so a resume, which takes the
// stored config, keeps it) and one line says so on `log`.
void size_head_from_data(train::RunRecord& rec, std::ostream& log);

// A note when a bf16 run on the cpu backend gets no bf16 kernels on this CPU ("" otherwise).
std::string bf16_line(const TrainConfig& c, const std::string& backend);
// Trainable and frozen (--freeze) parameter counts: "params: 669,706 trainable, 0 frozen".
std::string trainable_line(const ParamTable& table, const TrainConfig& c);

// The run's data (--data, --limit); with val_split > 0 a seeded fraction of the training set
// becomes the validation split (`test` of the result; the held-out test split goes to
// `*test_out`). Labels outside the net's classes fail here, naming the split and the label.
data::Splits load_train_data(const train::RunRecord& rec, const ParamTable& table,
                             data::Dataset* test_out);

// --val-split F: a permutation of the N training samples seeded by `seed` (TrainConfig::seed);
// its first round(F·N) become the validation split (s.test), the rest stay in s.train (both in
// index order). Returns the test split it replaces. train, eval and report all split through
// this one function, so they see the same samples. Fails (naming `where`) when a part is empty.
data::Dataset hold_out_validation(data::Splits& s, double fraction, int64_t seed,
                                  const std::string& where);

// --val-split: evaluates RUN/best.safetensors (chosen on validation) on the held-out test split
// (held_out.test, with the run's class names) and prints the task's line, e.g. `test accuracy X%
// on N samples (best checkpoint, epoch E, chosen on validation)`.
void report_held_out_test(const std::string& run_dir, const train::RunRecord& rec,
                          const ParamTable& table, const data::Splits& held_out,
                          const std::string& backend, const exec::BackendOptions& engine,
                          std::ostream& out);

// --init-from: a weights file, or a run dir (its best.safetensors, else last).
std::string init_from_file(const std::string& file_or_run);

}  // namespace netspec::cli
