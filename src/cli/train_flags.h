// One validator for command-line values (issue 25 item 11). A flag backed by a TrainConfig field
// (--lr, --epochs, --batch, --seed, --optimizer, --schedule, --dataset) is applied exactly as
// `--set field=value` is and the whole config validated after it, the error naming the flag; a
// flag given is never replaced by a default. Flags outside TrainConfig (--limit, --top,
// --classes, --val-split) are parsed by number_flag with their stated bounds.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spec/train_config.h"

namespace netspec::cli {

// A validation that failed after one assignment but may hold after a later one: a cross-field
// check (warmupEpochs < epochs) between `--epochs 1` and `--set warmupEpochs=0`. With one given,
// apply / apply_sets remember the first such failure instead of failing, and check_applied then
// validates the final config, naming that assignment when its error still stands.
struct PendingCheck {
  std::string label, message;  // "--epochs 1", "warmupEpochs must be < epochs (got 5, epochs 1)"
};

class ConfigFlags {
 public:
  // Adds `flag` (a string option: the value reaches the config's own reader) for `field`.
  void add(CLI::App* cmd, const std::string& flag, const std::string& field,
           const std::string& help);
  // --dataset (the `dataset` field: any loadable dataset) and --data DIR into `dir`.
  void add_dataset(CLI::App* cmd, std::string& dir, const std::string& dir_help);
  bool given(const std::string& flag) const;
  // Applies the given flags to c, validating after each (`[where] --lr -1: learningRate must be
  // > 0 (got -1)`). `c` must be valid before (validate it first, naming its source).
  void apply(TrainConfig& c, std::string_view where, PendingCheck* pending = nullptr) const;

 private:
  struct Flag {
    std::string flag, field;
    std::shared_ptr<std::string> value;
    CLI::Option* opt;
  };
  std::vector<Flag> flags_;
};

// `--set field=value` items applied in order, each validated like a flag.
void apply_sets(TrainConfig& c, const std::vector<std::string>& sets, std::string_view where,
                PendingCheck* pending = nullptr);
// Validates c after deferred assignments: `[where] --epochs 1: warmupEpochs must be < epochs ...`
// when the remembered error still stands, the final error otherwise.
void check_applied(const TrainConfig& c, std::string_view where, const PendingCheck& pending);

// "adamw" (adam with weightDecay 0.01 unless set, torch.optim.AdamW's default) or an
// OptimizerKind name; train and bench share it.
void apply_optimizer_name(TrainConfig& c, const std::string& name, std::string_view where);

// A numeric flag outside TrainConfig: the whole text must be a finite number in [lo, hi]
// (integer when `integer`), else `[where] --top -3: must be >= 1 (got -3)`.
double number_flag(std::string_view where, std::string_view flag, const std::string& text,
                   double lo, double hi = std::numeric_limits<double>::max(), bool integer = true);

}  // namespace netspec::cli
