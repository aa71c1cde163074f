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
#include <string_view>
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
// buildTag (lower-cased, other characters '_') namespaces the run. The net's name is made one
// safe path component first (run_dir_component), so a spec's name never leads out of runs/.
std::string default_run_dir(const std::string& net, const std::string& tag = "");
// `name` as one path component: [A-Za-z0-9_-] and inner '.', others '_', at most 64 characters.
std::string run_dir_component(const std::string& name);

// config.json text: every field written, TrainConfig fields under "spec"."train".
std::string run_record_json(const RunRecord& r);
// Reads a config.json (also the older {"spec", "backend"} ones: missing fields take defaults),
// a regular file only. Every field is checked as its flag is (limit, val_split, classes,
// replicas, spec.train through validate()); duplicate or unknown keys and top-level copies that
// disagree with the spec (net, dataset, seed) are refused naming the file and field.
RunRecord load_run_record(const std::string& path);
// The same from the text of a config.json (`path` names it in errors).
RunRecord parse_run_record(std::string_view text, const std::string& path);
// True when the file is a run's config.json (an object with a "spec" object).
bool is_run_record(const std::string& path);

// Names of the fields of `now` that differ from `stored` ("train.learningRate", "limit",
// "net"); epochs may grow.
std::vector<std::string> run_record_diff(const RunRecord& stored, const RunRecord& now);

enum class RunDirMode { kCheck, kResume, kOverwrite };
// Decides what to train in `dir` and returns the record to use: `now` for a new or matching run
// dir, the stored one for --resume (epochs from `now` when epochs_given). kCheck on a
// differing record, or a run dir with a checkpoint but no config.json, fails (exit 2) naming the
// fields. kOverwrite removes netspec's own files from dir first. netspec's files there must be
// regular files (a FIFO is refused by name); temp files of killed writers are removed. Call it
// holding the dir's RunDirLock. Prints what it does to `log`.
RunRecord prepare_run_dir(const std::string& dir, const RunRecord& now, RunDirMode mode,
                          bool epochs_given, std::ostream* log);

// The file RunDirLock holds in a run dir.
inline constexpr const char* kRunDirLockFile = ".netspec.lock";

// One trainer per run dir: creates `dir` if needed and takes an exclusive flock on
// DIR/.netspec.lock (opened O_NOFOLLOW), writing this process's pid there; held until
// destruction (or exit). A run dir another process holds fails (exit 2) naming that pid.
// remove_when_unused: the run dir is new; the lock file goes too if no run started there.
class RunDirLock {
 public:
  RunDirLock(const std::string& dir, bool remove_when_unused);
  ~RunDirLock();
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;

 private:
  std::string dir_, path_;
  int fd_ = -1;
  bool remove_ = false;
};

// Made before prepare_run_dir: when `dir` did not exist and the run is refused before training
// starts (no config.json yet, e.g. a field the trainer refuses after the data load), the
// destructor removes netspec's files there and the directory if that leaves it empty, so a
// refused command leaves no half-made run dir behind. Anything else in it is kept.
class NewRunDirCleanup {
 public:
  explicit NewRunDirCleanup(std::string dir);
  ~NewRunDirCleanup();
  bool fresh() const { return fresh_; }  // the dir did not exist
  void disarm() { fresh_ = false; }      // another process holds the dir: touch nothing
  NewRunDirCleanup(const NewRunDirCleanup&) = delete;
  NewRunDirCleanup& operator=(const NewRunDirCleanup&) = delete;

 private:
  std::string dir_;
  bool fresh_ = false;
};

// The files netspec writes in a run dir (what --overwrite removes, with the TensorBoard event
// files events.out.tfevents.*).
const std::vector<std::string>& run_dir_files();
// The checkpoint policy's folder in a run dir (top-k and snapshots, checkpoint_policy.h).
inline constexpr const char* kCheckpointsDir = "checkpoints";
// --overwrite: removes RUN/checkpoints/epoch=*.safetensors (regular files; the folder too when
// that empties it). Returns how many files were removed.
int remove_policy_files(const std::string& run_dir);

// classes.json: class names by label, written once per run dir; read back by eval/predict.
void save_class_names(const std::string& dir, const std::vector<std::string>& names);
std::vector<std::string> load_class_names(const std::string& dir);  // empty when absent

}  // namespace netspec::train
