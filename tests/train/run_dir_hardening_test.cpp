// Run dirs against hostile files and concurrent writers (issue 40 items 6, 7, 8, 15): a spec's
// name never leads the default run dir out of runs/; every field of a config.json goes through
// the checks of its flag (the old loader trained on all samples for "limit": -5 or 1e300 and took
// "classes": -3 and duplicate keys); FIFOs planted as config.json, classes.json, best.json,
// metrics files, COCO instances or VOC annotations/lists are refused by name instead of
// blocking; a second RunDirLock is refused naming the holder's pid; stale temp files of dead
// writers are removed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "data/det_data.h"
#include "spec/spec_json.h"
#include "tests/error_of.h"
#include "tests/support/fifo_release.h"
#include "tests/support/test_files.h"
#include "train/config.h"
#include "train/run_dir.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;
using test_util::error_of;
using test_util::error_within;

fs::path fresh_dir(const std::string& name) {
  return netspec::test_util::fresh_dir("run_dir_hard", name);
}

RunRecord small_record() {
  RunRecord r;
  r.spec = parse_spec(R"({"name": "tiny", "inputChannels": 1, "inputHeight": 2, "inputWidth": 2,
      "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 4, "out": 3}],
      "train": {"epochs": 2, "seed": 7}})",
                      "tiny.json");
  r.limit = 64;
  return r;
}

TEST(RunDirHardening, ASpecNameNeverLeadsTheDefaultRunDirOutOfRuns) {
  for (const std::string name : {"../../escaped", "/tmp/abs", "..", ".hidden", "a/../../b", ""}) {
    const fs::path d = default_run_dir(name);
    EXPECT_EQ(d.parent_path(), "runs") << name << " -> " << d;
    EXPECT_EQ(d.lexically_normal().parent_path(), "runs") << name << " -> " << d;
    EXPECT_NE(d.filename().string()[0], '.') << d;
  }
  EXPECT_EQ(run_dir_component("../../escaped"), "_._.._escaped");
  EXPECT_EQ(run_dir_component("/tmp/abs"), "_tmp_abs");
  EXPECT_EQ(run_dir_component("resnet18-cifar_v1.2"), "resnet18-cifar_v1.2");
  EXPECT_EQ(run_dir_component(std::string(300, 'n')).size(), 64u);
}

TEST(RunDirHardening, EveryRecordFieldIsCheckedAsItsFlag) {
  const std::string good = run_record_json(small_record());
  ASSERT_EQ(parse_run_record(good, "c.json").limit, 64);
  auto with = [&](const std::string& key, const std::string& value) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(good);
    j[key] = nlohmann::ordered_json::parse(value);
    return j.dump(2);
  };
  const std::pair<std::string, std::string> cases[] = {
      {with("limit", "-5"), "\"limit\" must be an integer in 0..9007199254740992 (got -5)"},
      {with("limit", "1e300"), "\"limit\" must be an integer in 0..9007199254740992 (got 1e+300)"},
      {with("limit", "2.5"), "\"limit\" must be an integer"},
      {with("limit", "\"64\""), "\"limit\" must be an integer"},
      {with("classes", "-3"), "\"classes\" must be an integer in 0..1000000000 (got -3)"},
      {with("val_split", "1.5"), "\"val_split\" must be a number in 0..1 (got 1.5)"},
      {with("val_split", "1"), "\"val_split\" must be 0 or in (0, 1) (got 1)"},
      {with("replicas", "0"), "\"replicas\" must be an integer in 1..1024 (got 0)"},
      {with("data", "5"), "\"data\" must be a string (got 5)"},
      {with("seed", "8"), "\"seed\" is 8 but spec.train.seed is 7"},
      {with("net", "\"other\""), "\"net\" is \"other\" but spec.name is \"tiny\""},
      {with("limits", "3"), "unknown field 'limits'"},
      {"{\"limit\": 1, \"limit\": 2, " + good.substr(good.find('{') + 1), "duplicate"},
  };
  for (const auto& [text, want] : cases) {
    std::string e = error_of([&] { parse_run_record(text, "RUN/config.json"); });
    EXPECT_NE(e.find(want), std::string::npos) << want << "\ngot: " << e;
    EXPECT_NE(e.find("RUN/config.json"), std::string::npos) << e;
  }
  // TrainConfig fields in spec.train: validate(), as --set checks them.
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(good);
  j["spec"]["train"]["epochs"] = -1;
  std::string e = error_of([&] { parse_run_record(j.dump(), "RUN/config.json"); });
  EXPECT_NE(e.find("spec.train: [train] epochs must be >= 1 (got -1)"), std::string::npos) << e;
}

TEST(RunDirHardening, FifosInARunDirAreRefusedWithoutBlocking) {
  const fs::path d = fresh_dir("fifo");
  auto fifo = [&](const fs::path& p) {
    fs::create_directories(p.parent_path());
    ASSERT_EQ(mkfifo(p.c_str(), 0600), 0) << p;
  };
  fifo(d / "config.json");
  std::string e =
      error_within(d / "config.json", [&] { load_run_record((d / "config.json").string()); });
  EXPECT_NE(e.find("it is a FIFO (expected a regular file)"), std::string::npos) << e;
  EXPECT_FALSE(is_run_record((d / "config.json").string()));
  TrainConfig c;
  e = error_within(d / "config.json", [&] { apply_config_file(c, (d / "config.json").string()); });
  EXPECT_NE(e.find("it is a FIFO"), std::string::npos) << e;
  fifo(d / "classes.json");
  e = error_within(d / "classes.json", [&] { load_class_names(d.string()); });
  EXPECT_NE(e.find("it is a FIFO"), std::string::npos) << e;
  // best.json (the trainer reads it at start): refused by prepare_run_dir, before training.
  const fs::path run = fresh_dir("fifo_run");
  fifo(run / "best.json");
  e = error_within(run / "best.json", [&] {
    prepare_run_dir(run.string(), small_record(), RunDirMode::kCheck, false, nullptr);
  });
  EXPECT_NE(e.find("[run-dir] cannot read '" + (run / "best.json").string() + "': it is a FIFO"),
            std::string::npos)
      << e;
  // Detection sets: COCO instances, a VOC list and a VOC annotation.
  fifo(d / "coco" / "instances_train.json");
  e = error_within(d / "coco" / "instances_train.json", [&] {
    data::read_coco((d / "coco" / "instances_train.json").string(), d.string());
  });
  EXPECT_NE(e.find("it is a FIFO"), std::string::npos) << e;
  fifo(d / "voc" / "ImageSets" / "Main" / "train.txt");
  fs::create_directories(d / "voc" / "Annotations");
  e = error_within(d / "voc" / "ImageSets" / "Main" / "train.txt",
                   [&] { data::read_voc((d / "voc").string(), "train"); });
  EXPECT_NE(e.find("it is a FIFO"), std::string::npos) << e;
  fifo(d / "voc" / "Annotations" / "a.xml");
  e = error_within(d / "voc" / "Annotations" / "a.xml",
                   [&] { data::read_voc((d / "voc").string(), ""); });
  EXPECT_NE(e.find("it is a FIFO"), std::string::npos) << e;
}

TEST(RunDirHardening, ASecondLockIsRefusedNamingTheHoldersPid) {
  const fs::path d = fresh_dir("lock");
  {
    RunDirLock first(d.string(), false);
    std::string e = error_of([&] { RunDirLock second(d.string(), false); });
    EXPECT_NE(e.find(fmt::format("[train] run dir '{}' is in use by another netspec process "
                                 "(pid {}, holding {}/.netspec.lock)",
                                 d.string(), getpid(), d.string())),
              std::string::npos)
        << e;
  }
  RunDirLock again(d.string(), false);  // released with the first
  // A symlink planted at the lock's name is refused, not followed.
  const fs::path e2 = fresh_dir("lock_link");
  fs::create_symlink(e2 / "elsewhere", e2 / ".netspec.lock");
  std::string e = error_of([&] { RunDirLock l(e2.string(), false); });
  EXPECT_NE(e.find("it is a symbolic link"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(e2 / "elsewhere"));
}

TEST(RunDirHardening, StaleTempFilesOfDeadWritersAreRemoved) {
  const fs::path d = fresh_dir("stale");
  const std::string live = fmt::format("last.safetensors.{}.7.tmp", getpid());
  for (const std::string& f : std::vector<std::string>{
           "last.safetensors.999999999.1.tmp", "config.json.tmp", live, "notes.txt.1.2.tmp"})
    std::ofstream(d / f) << "x";
  prepare_run_dir(d.string(), small_record(), RunDirMode::kCheck, false, nullptr);
  EXPECT_FALSE(fs::exists(d / "last.safetensors.999999999.1.tmp"));
  EXPECT_FALSE(fs::exists(d / "config.json.tmp"));
  EXPECT_TRUE(fs::exists(d / live));                 // its writer (this process) is alive
  EXPECT_TRUE(fs::exists(d / "notes.txt.1.2.tmp"));  // not netspec's
}

}  // namespace
}  // namespace netspec::train
