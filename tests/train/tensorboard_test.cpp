// RUN/events.out.tfevents.* read back by TensorBoard's own reader (EventAccumulator, in
// BUILD_DIR/venv: scripts/install-oracles.sh): every scalar equals its metrics.jsonl /
// steps.jsonl value (as the float32 TensorBoard stores), each step once across a mid-epoch stop,
// a kill's extra records and the resume; the config text equals config.json and the HParams
// session holds the TrainConfig fields. The stop also
// writes loss.png, and the resumed progress line counts from the resume point.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/file_check.h"
#include "data/idx_fixture.h"
#include "report/metrics_log.h"
#include "report/tb_events.h"
#include "tests/train/train_test_util.h"
#include "train/signals.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;

const Splits& synthetic() {
  static Splits s = test_util::synthetic_fashion(test_util::tmpdir("tb", "data"), 320, 100, 11);
  return s;
}

SpecFile small(int epochs) { return test_util::small_mlp_spec(epochs); }

std::string run_capture(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof buf, p.get())) > 0) out.append(buf, n);
  return out;
}

std::vector<fs::path> event_files(const std::string& dir) {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(dir))
    if (report::is_event_file_name(e.path().filename().string())) v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

// Every (step, value) TensorBoard reads for a tag, in file order.
using Read = std::map<std::string, std::vector<std::pair<int64_t, double>>>;

TEST(TensorBoard, ReaderSeesEveryMetricOnceAcrossStopAndResume) {
  const std::string run = test_util::tmpdir("tb", "run");
  std::ostringstream log1;
  request_stop(true);  // what SIGINT does: one update, `last`, return
  TrainResult r1 = run_training(small(2), synthetic(), {run, "cpu", &log1});
  request_stop(false);
  ASSERT_TRUE(r1.interrupted);
  // The mid-epoch stop drew the curves so far (no epoch has ended yet).
  EXPECT_TRUE(fs::exists(run + "/loss.png")) << log1.str();
  ASSERT_EQ(event_files(run).size(), 1u);
  // A kill after the checkpoint would leave steps the resume trains again: planted here.
  append_file(event_files(run)[0].string(),
              report::tf_record(report::event_scalars(0, 3, {{"step/train_loss", 99.0}})));

  TrainOptions o{run, "cpu", nullptr};
  std::ostringstream log2;
  o.log = &log2;
  o.progress_every_s = 0;  // a plain progress line after every update
  TrainResult r2 = run_training(small(2), synthetic(), o);
  ASSERT_FALSE(r2.interrupted);
  ASSERT_EQ(r2.steps, 20);
  // Resumed at update 1 of 10: the bar counts 2/10 .. 9/10 (the last is the epoch line's).
  EXPECT_NE(log2.str().find("epoch 1/2 2/10 loss "), std::string::npos) << log2.str();
  EXPECT_EQ(log2.str().find("epoch 1/2 1/9 "), std::string::npos) << log2.str();
  EXPECT_NE(log2.str().find(" lr 0.001 "), std::string::npos) << log2.str();
  ASSERT_EQ(event_files(run).size(), 2u);  // a resume appends a new file

  const fs::path py = fs::path(NETSPEC_BINARY_DIR) / "venv/bin/python";
  if (!fs::exists(py))
    GTEST_SKIP() << "BUILD_DIR/venv is absent (scripts/install-oracles.sh installs tensorboard)";
  const std::string out = run_capture(py.string() + " " + NETSPEC_SOURCE_DIR +
                                      "/tests/train/tb_reader.py " + run + " 2>&1");
  Read scalars;
  std::vector<std::pair<int64_t, std::string>> config;
  std::map<std::string, nlohmann::json> hparams;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      FAIL() << "tb_reader.py: " << out;
    }
    if (j.contains("tag"))
      scalars[j["tag"]].emplace_back(j["step"].get<int64_t>(), j["value"].get<double>());
    else if (j.contains("hparam"))
      hparams[j["hparam"]] = j["value"];
    else
      config.emplace_back(j["step"].get<int64_t>(), j["value"].get<std::string>());
  }
  // The config text at the start of each file (steps 0 and 1), as config.json (indented).
  ASSERT_EQ(config.size(), 2u) << out;
  EXPECT_EQ(config[0].first, 0);
  EXPECT_EQ(config[1].first, 1);
  const std::string cfg = read_regular_file("test", run + "/config.json");
  EXPECT_NE(config[1].second.find("    \"spec\": {"), std::string::npos) << config[1].second;
  std::string unindented;
  std::istringstream cl(config[1].second);
  for (std::string l; std::getline(cl, l);) unindented += l.substr(4) + "\n";
  EXPECT_EQ(unindented, cfg);

  // The HParams dashboard's session: the net and the TrainConfig fields.
  EXPECT_EQ(hparams["net"], "small") << out;
  EXPECT_EQ(hparams["batchSize"], 32);
  EXPECT_EQ(hparams["seed"], 7);
  const auto train = nlohmann::json::parse(cfg)["spec"]["train"];
  size_t scalar_fields = 0;
  for (const auto& [k, v] : train.items())
    if (v.is_primitive() && !v.is_null()) {
      ++scalar_fields;
      EXPECT_EQ(hparams[k], v) << k;
    }
  EXPECT_EQ(hparams.size(), scalar_fields + 1);

  // Per step: steps.jsonl's train_loss, lr, samples_per_s at each step 1..20, once each.
  const auto steps = report::read_jsonl(run + "/steps.jsonl");
  ASSERT_EQ(steps.size(), 20u);
  for (const char* col : {"train_loss", "lr", "samples_per_s"}) {
    const auto& got = scalars[std::string("step/") + col];
    ASSERT_EQ(got.size(), steps.size()) << col << "\n" << out;
    for (size_t i = 0; i < steps.size(); ++i) {
      EXPECT_EQ(got[i].first, static_cast<int64_t>(*report::get(steps[i], "step"))) << col;
      EXPECT_EQ(got[i].second, static_cast<float>(*report::get(steps[i], col))) << col << i;
    }
  }
  EXPECT_NE(scalars["step/train_loss"][2].second, 99.0);  // the planted record is gone
  // Per epoch: every metrics.jsonl column under its own name at the epoch's last step.
  const auto epochs = report::read_jsonl(run + "/metrics.jsonl");
  ASSERT_EQ(epochs.size(), 2u);
  int columns = 0;
  for (const auto& [col, v0] : epochs[0]) {
    if (col == "step") continue;
    const auto& got = scalars[col];
    std::vector<std::pair<int64_t, double>> want;
    for (const auto& row : epochs)
      if (auto v = report::get(row, col))
        want.emplace_back(static_cast<int64_t>(*report::get(row, "step")), static_cast<float>(*v));
    EXPECT_EQ(got, want) << col;
    columns += want.empty() ? 0 : 1;
  }
  EXPECT_GE(columns, 8);  // epoch, lr, train_loss, val_loss, val_top1, val_top5, val_count, ...
  EXPECT_EQ(scalars["val_top1"].size(), 2u);
  EXPECT_EQ(scalars["val_top1"][1].first, 20);
}

}  // namespace
}  // namespace netspec::train
