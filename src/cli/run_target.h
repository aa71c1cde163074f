// What `eval`, `predict` and `report` read from a run: `NET` may be a run dir or its config.json,
// which gives the net (with its resized head), dataset, data, limit, validation split, class names
// and vocabulary; the checkpoint defaults to the run's best.safetensors (else last). Flags given
// still override.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "data/datasets.h"
#include "spec/param_table.h"
#include "train/run_dir.h"

namespace netspec::cli {

struct RunTarget {
  SpecFile spec;                         // spec.train set
  std::optional<train::RunRecord> run;   // when NET named a run
  std::string run_dir;                   // "" when NET is a net
  std::string checkpoint;                // --checkpoint, else the run's best (or last)
  std::vector<std::string> class_names;  // the run's classes.json (empty: the dataset's)
};

// net_arg: zoo name, spec .json, run dir or run config.json. checkpoint: "" for the run's.
RunTarget resolve_run_target(const std::string& where, const std::string& net_arg,
                             const std::string& checkpoint);

// The samples `eval` and `report` score (split "" picks the run's: "val" for a run trained with
// --val-split F, else "test"). "val": the run's held-out validation split, drawn by the same
// seeded permutation (hold_out_validation) from the same training samples (the run's --data and
// --limit). data_flag overrides the run's --data; c is the run's TrainConfig (its seed).
struct EvalSplit {
  data::Splits data;  // data.test: the samples scored
  std::string what;   // "the validation split held out by --val-split 0.25 (15 samples)"
};
EvalSplit load_eval_split(const std::string& where, const RunTarget& t, const TrainConfig& c,
                          const ParamTable& table, const std::string& data_flag,
                          const std::string& split = "");

// Text data evaluated with a run's vocabulary (RUN/vocab.json): the corpus re-encoded so ids mean
// what they meant in training; a character the run never saw fails naming it.
void remap_to_run_vocab(data::Splits& s, const std::string& run_dir, int seq_len);

}  // namespace netspec::cli
