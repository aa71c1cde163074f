// What `eval` and `predict` read from a run: `NET` may be a run dir or its config.json, which
// gives the net (with its resized head), dataset, data, class names and vocabulary; the
// checkpoint defaults to the run's best.safetensors (else last). Flags given still override.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "data/datasets.h"
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

// Text data evaluated with a run's vocabulary (RUN/vocab.json): the corpus re-encoded so ids mean
// what they meant in training; a character the run never saw fails naming it.
void remap_to_run_vocab(data::Splits& s, const std::string& run_dir, int seq_len);

}  // namespace netspec::cli
