// Run directory records and the resume check (see run_dir.h).
#include "train/run_dir.h"

#include <fcntl.h>
#include <fmt/ranges.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/error.h"
#include "core/file_check.h"
#include "core/json_strict.h"
#include "core/safetensors.h"
#include "exec/replicas.h"
#include "netspec_version.h"  // generated at build time: NETSPEC_GIT_DESCRIBE

namespace netspec::train {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// Every TrainConfig field as JSON (enums by name), defaults included.
ojson train_json(const TrainConfig& c) {
  ojson t = ojson::object();
  c.visit([&](const char* n, const auto& f, const char*) {
    if constexpr (std::is_enum_v<std::decay_t<decltype(f)>>)
      t[n] = std::string(enum_name(f));
    else
      t[n] = f;
  });
  return t;
}

// Run-dir files are read only when regular (a FIFO planted there would block the open forever).
std::string read_text(const std::string& path) { return read_regular_file("run-dir", path); }

ojson parse_json(const std::string& text, const std::string& path) {
  try {
    return ojson::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("run-dir", "{}: not valid JSON ({})", path, e.what());
  }
}

// "a -> b" of two JSON values, shortened.
std::string change(const ojson& a, const ojson& b) {
  auto s = [](const ojson& v) {
    std::string t = v.dump();
    return t.size() > 40 ? t.substr(0, 37) + "..." : t;
  };
  return s(a) + " -> " + s(b);
}

}  // namespace

std::string netspec_version() { return NETSPEC_GIT_DESCRIBE; }

// A spec's name as one path component: letters, digits, '-', '_' and inner '.' kept, anything
// else (a '/', a leading '.', a control character) '_', at most 64 characters. `"name":
// "../../x"` or "/abs" can then never lead a default run dir out of runs/.
std::string run_dir_component(const std::string& name) {
  std::string out;
  for (char ch : name.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(ch);
    const bool ok = std::isalnum(u) || ch == '-' || ch == '_' || (ch == '.' && !out.empty());
    out += ok ? ch : '_';
  }
  return out.empty() ? "net" : out;
}

std::string default_run_dir(const std::string& net, const std::string& tag) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  std::string tg;  // the spec's buildTag, sanitised: lower-case, other characters '_'
  for (char ch : tag)
    tg += std::isalnum(static_cast<unsigned char>(ch))
              ? static_cast<char>(std::tolower(static_cast<unsigned char>(ch)))
              : '_';
  const std::string leaf = run_dir_component(net) + (tg.empty() ? "" : "-" + tg) + "-" + buf;
  std::string base = (fs::path("runs") / leaf).string();
  std::string d = base;
  for (int i = 2; fs::exists(d); ++i) d = base + "-" + std::to_string(i);  // same second
  return d;
}

std::string run_record_json(const RunRecord& r) {
  ojson j;
  j["netspec_version"] = r.version;
  j["command"] = r.command;
  j["net"] = r.spec.net.name;
  const TrainConfig c = r.spec.train.value_or(TrainConfig{});
  j["dataset"] = std::string(enum_name(c.dataset));
  j["data"] = r.data;
  j["limit"] = r.limit;
  j["seed"] = c.seed;
  j["val_split"] = r.val_split;
  j["init_from"] = r.init_from;
  j["classes"] = r.classes;
  j["backend"] = r.backend;
  j["replicas"] = r.replicas;
  SpecFile s = r.spec;
  s.train.reset();
  ojson spec = ojson::parse(dump_spec(s));
  spec["train"] = train_json(c);
  j["spec"] = spec;
  return j.dump(2) + "\n";
}

bool is_run_record(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  try {
    ojson j = ojson::parse(read_text(path));
    return j.is_object() && j.contains("spec") && j["spec"].is_object();
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

namespace {

// A number of the record, checked as its flag is: finite, integral when `integer`, in [lo, hi].
double record_number(const ojson& j, const char* key, double lo, double hi, bool integer,
                     const std::string& path) {
  const ojson& v = j.at(key);
  const double x = v.is_number() ? v.get<double>() : std::nan("");
  if (!v.is_number() || !std::isfinite(x) || (integer && x != std::floor(x)) || x < lo || x > hi)
    fail("run-dir", "{}: \"{}\" must be {} in {}..{} (got {})", path, key,
         integer ? "an integer" : "a number", lo, hi, v.dump());
  return x;
}

std::string record_string(const ojson& j, const char* key, const std::string& fallback,
                          const std::string& path) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_string())
    fail("run-dir", "{}: \"{}\" must be a string (got {})", path, key, j[key].dump());
  return j[key].get<std::string>();
}

}  // namespace

RunRecord parse_run_record(std::string_view text, const std::string& path) {
  // Strict: duplicate keys and deep nesting are refused with line:col, as in spec files.
  const ojson j = parse_json_strict<ojson>(text, path);
  if (!j.is_object() || !j.contains("spec") || !j["spec"].is_object())
    fail("run-dir", "{}: not a run's config.json (expected an object with a \"spec\" object)",
         path);
  // The keys run_record_json writes (derived from it, so a field added there is known here).
  static const std::vector<std::string> known = [] {
    const ojson blank = ojson::parse(run_record_json(RunRecord{}));
    std::vector<std::string> k;
    for (auto it = blank.begin(); it != blank.end(); ++it) k.push_back(it.key());
    return k;
  }();
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end())
      fail("run-dir", "{}: unknown field '{}' (expected one of {})", path, it.key(),
           fmt::join(known, ", "));
  RunRecord r;
  r.spec = parse_spec(j["spec"].dump(2), path + " (\"spec\")");
  if (!r.spec.train) r.spec.train = TrainConfig{};
  try {
    validate(*r.spec.train);  // what --set and the flags check
  } catch (const Error& e) {
    fail("run-dir", "{}: spec.train: {}", path, e.what());
  }
  // The bounds of the flags these fields record (--limit N >= 1, 0 here: every sample;
  // --val-split in (0, 1), 0: none; --classes N >= 1, 0: the spec's; --replicas).
  constexpr double kMaxExact = 9007199254740992.0;  // 2^53: integers a double holds exactly
  if (j.contains("limit"))
    r.limit = static_cast<int64_t>(record_number(j, "limit", 0, kMaxExact, true, path));
  if (j.contains("val_split")) {
    r.val_split = record_number(j, "val_split", 0, 1, false, path);
    if (r.val_split >= 1)
      fail("run-dir", "{}: \"val_split\" must be 0 or in (0, 1) (got {})", path, r.val_split);
  }
  if (j.contains("classes"))
    r.classes = static_cast<int>(record_number(j, "classes", 0, 1e9, true, path));
  if (j.contains("replicas"))
    r.replicas = static_cast<int>(record_number(j, "replicas", 1, exec::kMaxReplicas, true, path));
  r.data = record_string(j, "data", "", path);
  r.init_from = record_string(j, "init_from", "", path);
  r.backend = record_string(j, "backend", "cpu", path);
  r.command = record_string(j, "command", "", path);
  r.version = record_string(j, "netspec_version", "", path);
  // The copies kept at the top for people must agree with the spec they copy.
  const TrainConfig& c = *r.spec.train;
  auto agree = [&](const char* key, const ojson& want, const char* source) {
    if (j.contains(key) && j[key] != want)
      fail("run-dir", "{}: \"{}\" is {} but {} is {} (edit {}: the top-level copy is not read)",
           path, key, j[key].dump(), source, want.dump(), source);
  };
  agree("net", r.spec.net.name, "spec.name");
  agree("dataset", std::string(enum_name(c.dataset)), "spec.train.dataset");
  agree("seed", c.seed, "spec.train.seed");
  return r;
}

RunRecord load_run_record(const std::string& path) {
  return parse_run_record(read_text(path), path);
}

std::vector<std::string> run_record_diff(const RunRecord& stored, const RunRecord& now) {
  std::vector<std::string> out;
  // The net: top-level fields, then layer by layer.
  auto net_json = [](const SpecFile& s) {
    SpecFile n = s;
    n.train.reset();
    return ojson::parse(dump_spec(n));
  };
  ojson a = net_json(stored.spec), b = net_json(now.spec);
  for (auto it = b.begin(); it != b.end(); ++it) {
    if (it.key() == "layers") continue;
    const ojson old = a.contains(it.key()) ? a[it.key()] : ojson();
    if (old != it.value()) out.push_back(fmt::format("net.{}: {}", it.key(), change(old, *it)));
  }
  const ojson &la = a["layers"], &lb = b["layers"];
  if (la.size() != lb.size())
    out.push_back(fmt::format("net.layers: {} -> {} layers", la.size(), lb.size()));
  else
    for (size_t i = 0; i < la.size(); ++i)
      if (la[i] != lb[i]) out.push_back(fmt::format("net.layers[{}]: {}", i, change(la[i], lb[i])));
  ojson ta = train_json(stored.spec.train.value_or(TrainConfig{}));
  ojson tb = train_json(now.spec.train.value_or(TrainConfig{}));
  for (auto it = tb.begin(); it != tb.end(); ++it) {
    if (ta[it.key()] == it.value()) continue;
    if (it.key() == "epochs" && it.value().get<int>() > ta["epochs"].get<int>()) continue;
    out.push_back(fmt::format("{}: {}{}", it.key(), change(ta[it.key()], *it),
                              it.key() == "epochs" ? " (epochs may only grow)" : ""));
  }
  auto cmp = [&](const char* name, const ojson& x, const ojson& y) {
    if (x != y) out.push_back(fmt::format("{}: {}", name, change(x, y)));
  };
  cmp("data", stored.data, now.data);
  cmp("limit", stored.limit, now.limit);
  cmp("val_split", stored.val_split, now.val_split);
  cmp("init_from", stored.init_from, now.init_from);
  cmp("classes", stored.classes, now.classes);
  return out;
}

const std::vector<std::string>& run_dir_files() {
  static const std::vector<std::string> files = {
      "config.json",     "last.safetensors",     "best.safetensors",
      "best.json",       "metrics.csv",          "metrics.jsonl",
      "steps.csv",       "steps.jsonl",          "loss.png",
      "loss.svg",        "vocab.json",           "classes.json",
      "ema.safetensors", "swa.safetensors",      "swag.safetensors",
      "report.html",     "averages.safetensors", "train.log"};
  return files;
}

int remove_policy_files(const std::string& run_dir) {
  const fs::path dir = fs::path(run_dir) / kCheckpointsDir;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return 0;
  int removed = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    const bool ours = f.rfind("epoch=", 0) == 0 && f.size() > 12 &&
                      f.compare(f.size() - 12, 12, ".safetensors") == 0;
    if (ours && fs::is_regular_file(e.symlink_status(ec)) && fs::remove(e.path(), ec)) ++removed;
  }
  if (fs::is_empty(dir, ec)) fs::remove(dir, ec);
  return removed;
}

namespace {

// Temp files of netspec's own run-dir files left by a killed writer (write_file_atomic names
// them NAME.<pid>.<n>.tmp; NAME.tmp before): removed unless their writer is still alive.
void remove_stale_temps(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    for (const auto& name : run_dir_files()) {
      if (!is_atomic_temp_of(f, name)) continue;
      const std::string mid = f.substr(name.size() + 1);  // "<pid>.<n>.tmp" or "tmp"
      const long pid = mid == "tmp" ? 0 : std::strtol(mid.c_str(), nullptr, 10);
      if (pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) break;
      fs::remove(e.path(), ec);
      break;
    }
  }
}

}  // namespace

RunRecord prepare_run_dir(const std::string& dir, const RunRecord& now, RunDirMode mode,
                          bool epochs_given, std::ostream* log) {
  const fs::path d = dir;
  std::error_code ec;
  // Made (or checked) here, before anything is written: a file, an unwritable or uncreatable
  // path is named with exit 2, not met later as an internal filesystem error.
  ensure_writable_dir("train", dir, "run dir");
  remove_stale_temps(dir);
  const bool has_cfg = fs::exists(d / "config.json", ec);
  const bool has_ck = fs::exists(d / "last.safetensors", ec);
  if (mode != RunDirMode::kOverwrite)
    for (const auto& f : run_dir_files()) {  // the trainer reads them back (best.json, metrics)
      struct stat st;
      const std::string p = (d / f).string();
      if (::lstat(p.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        require_regular_file("run-dir", p);  // a symlink to a regular file passes, else refused
    }
  if (mode == RunDirMode::kOverwrite) {
    int removed = 0;
    for (const auto& f : run_dir_files())
      if (fs::remove(d / f, ec)) ++removed;
    // TensorBoard's events.out.tfevents.* (report/tb_events.h): names vary per file.
    std::vector<fs::path> events;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().filename().string().starts_with("events.out.tfevents.")) events.push_back(e);
    for (const auto& p : events) removed += fs::remove(p, ec) ? 1 : 0;
    removed += remove_policy_files(dir);  // checkpoints/epoch=*.safetensors
    if (log && removed > 0)
      *log << fmt::format("--overwrite: removed netspec's {} files from {} (other files kept)\n",
                          removed, dir);
    return now;
  }
  if (!has_ck) return now;  // nothing trained there yet: a new run (config.json is rewritten)
  if (!has_cfg) {
    if (mode == RunDirMode::kResume) return now;
    fail("run-dir",
         "{} holds a checkpoint but no config.json, so its settings cannot be checked: pass "
         "--resume to continue it with this command's settings, or --overwrite to start over",
         dir);
  }
  RunRecord stored = load_run_record((d / "config.json").string());
  if (mode == RunDirMode::kResume) {
    RunRecord r = stored;
    const int want = now.spec.train.value_or(TrainConfig{}).epochs;
    if (epochs_given) r.spec.train->epochs = want;  // asked for explicitly: more or fewer
    r.backend = now.backend;
    r.replicas = now.replicas;
    r.command = now.command;
    r.version = now.version;
    if (log) *log << fmt::format("--resume: continuing {} with its stored config\n", dir);
    return r;
  }
  auto diff = run_record_diff(stored, now);
  if (!diff.empty()) {
    std::string list;
    for (const auto& s : diff) list += "\n  " + s;
    fail("run-dir",
         "{} holds a run with other settings (stored -> this command):{}\npass --resume to "
         "continue it with its stored settings, --overwrite to start over there, or choose "
         "another --run-dir",
         dir, list);
  }
  return now;
}

RunDirLock::RunDirLock(const std::string& dir, bool remove_when_unused)
    : dir_(dir), path_((fs::path(dir) / kRunDirLockFile).string()), remove_(remove_when_unused) {
  ensure_writable_dir("train", dir, "run dir");
  // O_NOFOLLOW: a symlink planted at the lock's name is refused, not followed.
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  struct stat st;
  if (fd_ < 0 || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int e = errno;
    if (fd_ >= 0) ::close(fd_);
    fail("train", "cannot open the run dir's lock file '{}' ({})", path_,
         e == ELOOP ? "it is a symbolic link"
         : fd_ >= 0 ? "not a regular file"
                    : std::strerror(e));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    while (!pid.empty() && std::isspace(static_cast<unsigned char>(pid.back()))) pid.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (e != EWOULDBLOCK) fail("train", "cannot lock '{}' ({})", path_, std::strerror(e));
    fail("train",
         "run dir '{}' is in use by another netspec process (pid {}, holding {}); wait for it "
         "to end or stop it, or choose another --run-dir",
         dir, pid.empty() ? "unknown" : pid, path_);
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    fail("train", "cannot write the pid to '{}' ({})", path_, std::strerror(e));
  }
}

RunDirLock::~RunDirLock() {
  if (fd_ < 0) return;
  std::error_code ec;
  // A refused new run leaves no lock file: removed while still held, so no other process can
  // hold a lock on the removed file while a third locks a new one.
  if (remove_ && !fs::exists(fs::path(dir_) / "config.json", ec)) ::unlink(path_.c_str());
  ::close(fd_);
}

NewRunDirCleanup::NewRunDirCleanup(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fresh_ = !dir_.empty() && !fs::exists(dir_, ec) && !ec;
}

NewRunDirCleanup::~NewRunDirCleanup() {
  std::error_code ec;
  const fs::path d = dir_;
  if (!fresh_ || fs::exists(d / "config.json", ec)) return;  // training started: keep all
  for (const auto& f : run_dir_files()) fs::remove(d / f, ec);
  if (fs::is_directory(d, ec) && fs::is_empty(d, ec)) fs::remove(d, ec);
}

void save_class_names(const std::string& dir, const std::vector<std::string>& names) {
  if (names.empty()) return;
  fs::create_directories(dir);
  write_file_atomic((fs::path(dir) / "classes.json").string(), ojson(names).dump(1) + "\n");
}

std::vector<std::string> load_class_names(const std::string& dir) {
  const fs::path p = fs::path(dir) / "classes.json";
  if (!fs::exists(p)) return {};
  ojson j = parse_json(read_text(p.string()), p.string());
  if (!j.is_array()) fail("run-dir", "{}: expected an array of class names", p.string());
  std::vector<std::string> out;
  for (const auto& v : j) {
    if (!v.is_string()) fail("run-dir", "{}: expected class names as strings", p.string());
    out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace netspec::train
