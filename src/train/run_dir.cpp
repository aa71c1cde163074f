// Run directory records and the resume check (see run_dir.h).
#include "train/run_dir.h"

#include <cctype>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "core/error.h"
#include "core/file_check.h"
#include "core/safetensors.h"
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

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  if (!f) fail("run-dir", "cannot open '{}'", path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

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
  std::string base = (fs::path("runs") / (net + (tg.empty() ? "" : "-" + tg) + "-" + buf)).string();
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
  if (!fs::is_regular_file(path)) return false;
  try {
    std::ifstream f(path);
    ojson j = ojson::parse(f);
    return j.is_object() && j.contains("spec") && j["spec"].is_object();
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

RunRecord load_run_record(const std::string& path) {
  ojson j = parse_json(read_text(path), path);
  if (!j.is_object() || !j.contains("spec") || !j["spec"].is_object())
    fail("run-dir", "{}: not a run's config.json (expected an object with a \"spec\" object)",
         path);
  RunRecord r;
  r.spec = parse_spec(j["spec"].dump(2), path + " (\"spec\")");
  if (!r.spec.train) r.spec.train = TrainConfig{};
  try {
    r.data = j.value("data", std::string());
    r.limit = j.value("limit", int64_t{0});
    r.val_split = j.value("val_split", 0.0);
    r.init_from = j.value("init_from", std::string());
    r.classes = j.value("classes", 0);
    r.backend = j.value("backend", std::string("cpu"));
    r.replicas = j.value("replicas", 1);
    r.command = j.value("command", std::string());
    r.version = j.value("netspec_version", std::string());
  } catch (const nlohmann::json::exception& e) {
    fail("run-dir", "{}: a field has the wrong type ({})", path, e.what());
  }
  return r;
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
      "config.json",     "last.safetensors",    "best.safetensors",
      "best.json",       "metrics.csv",         "metrics.jsonl",
      "steps.csv",       "steps.jsonl",         "loss.png",
      "loss.svg",        "vocab.json",          "classes.json",
      "ema.safetensors", "swa.safetensors",     "swag.safetensors",
      "report.html",     "averages.safetensors"};
  return files;
}

RunRecord prepare_run_dir(const std::string& dir, const RunRecord& now, RunDirMode mode,
                          bool epochs_given, std::ostream* log) {
  const fs::path d = dir;
  std::error_code ec;
  // Made (or checked) here, before anything is written: a file, an unwritable or uncreatable
  // path is named with exit 2, not met later as an internal filesystem error.
  ensure_writable_dir("train", dir, "run dir");
  const bool has_cfg = fs::exists(d / "config.json", ec);
  const bool has_ck = fs::exists(d / "last.safetensors", ec);
  if (mode == RunDirMode::kOverwrite) {
    int removed = 0;
    for (const auto& f : run_dir_files())
      if (fs::remove(d / f, ec)) ++removed;
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
