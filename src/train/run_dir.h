// The run directory: what a run was started with (RunRecord, saved as RUN/config.json with every
// resolved TrainConfig field, the data, limit, seed, netspec version and command line), the
// default location runs/<net>-<YYYYmmdd-HHMMSS>, and the resume check: rerunning into a run dir
// resumes only when the resolved record matches the stored one (epochs may grow); otherwise it
// stops naming the differing fields, unless --resume (keep the stored record) or --overwrite
// (remove netspec's own files there, nothing else).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "spec/spec_json.h"

namespace netspec::train {

struct RunRecord {
  SpecFile spec;                // the net and the resolved TrainConfig (spec.train set)
  std::string data;             // --data ("": the dataset's default location)
  int64_t limit = 0;            // --limit (0: every training sample)
  double val_split = 0;         // --val-split fraction held out of the training set
  std::string init_from;        // --init-from FILE|RUN_DIR ("": none)
  int classes = 0;              // --classes (0: as in the spec; --freeze is TrainConfig's)
  std::string backend = "cpu";  // not compared on resume
  int replicas = 1;             // not compared on resume
  std::string command;          // the command line (not compared)
  std::string version;          // netspec version that wrote it (not compared)
};

// netspec's version: `git describe --always --dirty` of the source tree at configure time.
std::string netspec_version();
// runs/<net>[-<buildTag>]-<YYYYmmdd-HHMMSS> (local time) under the working directory; the spec's
// buildTag (lower-cased, other characters '_') namespaces the run.
std::string default_run_dir(const std::string& net, const std::string& tag = "");

// config.json text: every field written, TrainConfig fields under "spec"."train".
std::string run_record_json(const RunRecord& r);
// Reads a config.json (also the older {"spec", "backend"} ones: missing fields take defaults).
RunRecord load_run_record(const std::string& path);
// True when the file is a run's config.json (an object with a "spec" object).
bool is_run_record(const std::string& path);

// Names of the fields of `now` that differ from `stored` ("train.learningRate", "limit",
// "net"); epochs may grow.
std::vector<std::string> run_record_diff(const RunRecord& stored, const RunRecord& now);

enum class RunDirMode { kCheck, kResume, kOverwrite };
// Decides what to train in `dir` and returns the record to use: `now` for a new or matching run
// dir, the stored one for --resume (epochs from `now` when epochs_given). kCheck on a
// differing record, or a run dir with a checkpoint but no config.json, fails (exit 2) naming the
// fields. kOverwrite removes netspec's own files from dir first. Prints what it does to `log`.
RunRecord prepare_run_dir(const std::string& dir, const RunRecord& now, RunDirMode mode,
                          bool epochs_given, std::ostream* log);

// Made before prepare_run_dir: when `dir` did not exist and the run is refused before training
// starts (no config.json yet, e.g. a field the trainer refuses after the data load), the
// destructor removes netspec's files there and the directory if that leaves it empty, so a
// refused command leaves no half-made run dir behind. Anything else in it is kept.
class NewRunDirCleanup {
 public:
  explicit NewRunDirCleanup(std::string dir);
  ~NewRunDirCleanup();
  NewRunDirCleanup(const NewRunDirCleanup&) = delete;
  NewRunDirCleanup& operator=(const NewRunDirCleanup&) = delete;

 private:
  std::string dir_;
  bool fresh_ = false;
};

// The files netspec writes in a run dir (what --overwrite removes).
const std::vector<std::string>& run_dir_files();

// classes.json: class names by label, written once per run dir; read back by eval/predict.
void save_class_names(const std::string& dir, const std::vector<std::string>& names);
std::vector<std::string> load_class_names(const std::string& dir);  // empty when absent

}  // namespace netspec::train
