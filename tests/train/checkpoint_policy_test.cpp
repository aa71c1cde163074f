// The checkpoint policy (issue 44 items 2-3): top-k by a monitored metric, early stop, the
// plateau schedule, their state across a resume, and older run dirs without the new fields.
#include "train/checkpoint_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/safetensors.h"
#include "data/idx_fixture.h"
#include "tests/train/train_test_util.h"
#include "train/run_dir.h"
#include "train/signals.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;
using Kept = PolicyState::Kept;

const Splits& synthetic() {
  static Splits s =
      test_util::synthetic_fashion(test_util::tmpdir("ckpt_policy", "data"), 96, 64, 41);
  return s;
}

// 96 samples, batch 32: 3 updates per epoch.
SpecFile small(int epochs) { return test_util::small_mlp_spec(epochs, 5); }

std::vector<nlohmann::json> jsonl(const std::string& path) {
  std::ifstream f(path);
  std::vector<nlohmann::json> v;
  for (std::string l; std::getline(f, l);) v.push_back(nlohmann::json::parse(l));
  return v;
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> v;
  if (!fs::exists(dir)) return v;
  for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// ---- the policy on value sequences it is fed ----

TEST(CheckpointPolicy, TopKKeepsTheKBestAndDropsTheWorst) {
  TrainConfig c;
  c.monitor = "val_loss";  // auto: min
  c.saveTopK = 2;
  CheckpointPolicy p(c);
  EXPECT_TRUE(p.monitor().minimize);
  const std::vector<double> v = {5, 3, 4, 1, 2, 2, 0.5};
  std::vector<std::vector<Kept>> drops;
  std::vector<bool> kept, best;
  for (size_t e = 0; e < v.size(); ++e) {
    PolicyStep s = p.update(static_cast<int>(e) + 1, v[e]);
    drops.push_back(s.drop);
    kept.push_back(s.keep.has_value());
    best.push_back(s.best);
  }
  // 4 beats the worst kept (5); the second 2 does not beat the kept 2 (ties keep the earlier).
  EXPECT_EQ(kept, (std::vector<bool>{true, true, true, true, true, false, true}));
  EXPECT_EQ(best, (std::vector<bool>{true, true, false, true, false, false, true}));
  EXPECT_EQ(p.state().top_k, (std::vector<Kept>{{7, 0.5}, {4, 1}}));
  EXPECT_EQ(drops[2], (std::vector<Kept>{{1, 5}}));
  EXPECT_EQ(drops[3], (std::vector<Kept>{{3, 4}}));
  EXPECT_EQ(drops[4], (std::vector<Kept>{{2, 3}}));
  EXPECT_TRUE(drops[5].empty());
  EXPECT_EQ(drops[6], (std::vector<Kept>{{5, 2}}));
  EXPECT_EQ(p.top_k_file({7, 0.5}), "epoch=007-val_loss=0.5000.safetensors");
  // Not evaluated: nothing changes.
  PolicyStep none = p.update(8, std::nullopt);
  EXPECT_FALSE(none.keep || none.best || !none.drop.empty());
}

TEST(CheckpointPolicy, TopKTiesKeepTheEarlierEpochAndMaxMode) {
  TrainConfig c;
  c.monitor = "val_top1";  // auto: max
  c.saveTopK = 2;
  CheckpointPolicy p(c);
  EXPECT_FALSE(p.monitor().minimize);
  int e = 0;
  for (double v : {0.5, 0.7, 0.7, 0.6, 0.8}) p.update(++e, v);
  EXPECT_EQ(p.state().top_k, (std::vector<Kept>{{5, 0.8}, {2, 0.7}}));  // 0.7 tie: epoch 2 kept
  c.monitorMode = "min";  // explicit mode wins over auto
  EXPECT_TRUE(CheckpointPolicy(c).monitor().minimize);
  TrainConfig d;
  d.saveTopK = 3;
  CheckpointPolicy q(d);
  EXPECT_EQ(q.monitor().name, "val_score");  // what `best` follows today
  EXPECT_FALSE(q.monitor().minimize);
  for (int e = 1; e <= 4; ++e) q.update(e, e == 2 || e == 3 ? 0.9 : 0.1 * e);
  EXPECT_EQ(q.state().top_k, (std::vector<Kept>{{2, 0.9}, {3, 0.9}, {4, 0.4}}));
}

TEST(CheckpointPolicy, EarlyStopIsKerasEarlyStopping) {
  TrainConfig c;
  c.monitor = "val_loss";
  c.earlyStopPatience = 2;
  c.earlyStopMinDelta = 0.5;
  CheckpointPolicy p(c);
  // 0.8 is not better than 1.0 by more than 0.5 (wait 1); 0.3 is (reset); 0.2, 0.1: wait 1, 2.
  const std::vector<double> v = {1.0, 0.8, 0.3, 0.2, 0.1, 0.0};
  int stopped = 0;
  for (size_t e = 0; e < v.size() && !stopped; ++e)
    if (!p.update(static_cast<int>(e) + 1, v[e]).stop.empty()) stopped = static_cast<int>(e) + 1;
  EXPECT_EQ(stopped, 5);
  EXPECT_EQ(p.state().stopped_epoch, 5);
  EXPECT_EQ(p.state().stop_best_epoch, 3);
  EXPECT_EQ(*p.state().stop_best, 0.3);
}

TEST(CheckpointPolicy, PlateauIsReduceLROnPlateau) {
  TrainConfig c;
  c.schedule = Schedule::plateau;
  c.learningRate = 0.1;
  c.monitor = "train_loss";
  c.plateauPatience = 1;
  c.plateauFactor = 0.5;
  c.plateauCooldown = 1;
  c.plateauThreshold = 0;
  c.plateauMinLr = 0.02;
  CheckpointPolicy p(c);
  EXPECT_EQ(p.cap_lr(0.01), 0.01);  // warmup ramps below the cap
  EXPECT_EQ(p.cap_lr(0.1), 0.1);
  // Constant metric: e1 best; e2 bad 1; e3 bad 2 > 1: 0.05, cooldown 1; e4 cooldown (bad 0);
  // e5 bad 1; e6 bad 2: 0.025; e7 cooldown; e8 bad 1; e9: max(0.0125, 0.02) = 0.02; then no more.
  std::vector<double> lrs;
  for (int e = 1; e <= 12; ++e) {
    p.update(e, 1.0);
    lrs.push_back(p.cap_lr(0.1));
  }
  EXPECT_EQ(lrs, (std::vector<double>{0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.02, 0.02,
                                      0.02, 0.02}));
  EXPECT_EQ(p.state().reductions, 3);
  // An improving metric never reduces.
  CheckpointPolicy q(c);
  for (int e = 1; e <= 6; ++e) q.update(e, 1.0 / e);
  EXPECT_EQ(q.cap_lr(0.1), 0.1);
}

TEST(CheckpointPolicy, StateRoundTripsExactly) {
  TrainConfig c;
  c.saveTopK = 3;
  c.earlyStopPatience = 4;
  c.schedule = Schedule::plateau;
  c.plateauPatience = 0;
  c.plateauFactor = 0.3;
  c.learningRate = 0.1;
  CheckpointPolicy p(c);
  for (int e = 1; e <= 5; ++e) p.update(e, 1.0 / 3 + (e % 2) * 1e-17 + 0.1 * (e == 3));
  const PolicyState back = PolicyState::from_json(p.state().to_json(), "x");
  EXPECT_EQ(back, p.state());
  EXPECT_GT(back.reductions, 0);
  EXPECT_THROW(PolicyState::from_json("{\"top_k\": 3}", "RUN/last.safetensors"), Error);
  try {
    PolicyState::from_json("[1]", "RUN/last.safetensors");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("RUN/last.safetensors: metadata 'netspec.policy'"),
              std::string::npos)
        << e.what();
  }
}

TEST(CheckpointPolicy, BadFieldsAreRefusedByName) {
  auto why = [](auto set) {
    TrainConfig c;
    set(c);
    try {
      validate(c);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(why([](TrainConfig& c) { c.monitorMode = "foo"; }).find("monitorMode"),
            std::string::npos);
  EXPECT_NE(why([](TrainConfig& c) { c.saveTopK = -1; }).find("saveTopK must be >= 0"),
            std::string::npos);
  EXPECT_NE(why([](TrainConfig& c) { c.monitor = "accuracy"; }).find("monitor must be"),
            std::string::npos);
  EXPECT_NE(why([](TrainConfig& c) { c.plateauFactor = 1; }).find("plateauFactor"),
            std::string::npos);
  EXPECT_NE(why([](TrainConfig& c) { c.earlyStopMinDelta = -1; }).find("earlyStopMinDelta"),
            std::string::npos);
  EXPECT_EQ(why([](TrainConfig& c) { c.monitor = "val_loss"; }), "");
  // A val_* name the task has no column for is refused by the trainer, before the run dir.
  const std::string run = test_util::tmpdir("ckpt_policy", "unknown_monitor");
  fs::remove_all(run);
  SpecFile s = small(1);
  s.train->monitor = "val_miou";
  try {
    run_training(s, synthetic(), {run, "cpu"});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("monitor 'val_miou' is not a metric of this run "
                                         "(expected one of train_loss, val_score, val_loss, "
                                         "val_top1, val_top5)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(run + "/config.json"));
}

// ---- in training ----

TEST(CheckpointPolicyTrain, TopKFilesAreTheKBestByTheMonitor) {
  const std::string run = test_util::tmpdir("ckpt_policy", "topk");
  SpecFile s = small(5);
  s.train->monitor = "val_loss";
  s.train->saveTopK = 2;
  s.train->learningRate = 0.02;  // a loss that moves both ways
  s.train->optimizer = OptimizerKind::sgd;
  s.train->momentum = 0.95;
  TrainResult r = run_training(s, synthetic(), {run, "cpu"});
  ASSERT_EQ(r.epochs.size(), 5u);
  std::vector<std::pair<double, int>> by_loss;
  for (const auto& m : r.epochs) by_loss.emplace_back(m.val.loss, m.epoch);
  std::stable_sort(by_loss.begin(), by_loss.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> want;
  for (int i = 0; i < 2; ++i)
    want.push_back(fmt::format("epoch={:03d}-val_loss={:.4f}.safetensors", by_loss[i].second,
                               by_loss[i].first));
  std::sort(want.begin(), want.end());
  EXPECT_EQ(files_in(fs::path(run) / "checkpoints"), want);
  // Each holds its epoch's weights (no optimizer state); best is the lowest val_loss.
  SafeTensors top = read_safetensors(run + "/checkpoints/" + want[0]);
  EXPECT_EQ(top.metadata.at("optimizer_state"), "false");
  const auto best = nlohmann::json::parse(slurp(fs::path(run) / "best.json"));
  EXPECT_EQ(best["epoch"], by_loss[0].second);
  // --overwrite removes them with netspec's other files.
  RunRecord rec;
  rec.spec = s;
  prepare_run_dir(run, rec, RunDirMode::kOverwrite, false, nullptr);
  EXPECT_FALSE(fs::exists(fs::path(run) / "checkpoints"));
}

TEST(CheckpointPolicyTrain, EarlyStopEndsAtThePredictedEpochAndStaysStopped) {
  const std::string run = test_util::tmpdir("ckpt_policy", "early");
  SpecFile s = small(10);
  s.train->monitor = "val_loss";
  s.train->earlyStopPatience = 2;
  s.train->earlyStopMinDelta = 1e9;  // nothing after the first evaluation is an improvement
  std::ostringstream log;
  TrainResult r = run_training(s, synthetic(), {run, "cpu", &log});
  EXPECT_FALSE(r.interrupted);
  ASSERT_EQ(r.epochs.size(), 3u);  // e1 best, e2 wait 1, e3 wait 2 = patience
  EXPECT_NE(log.str().find("early stop after epoch 3: val_loss did not improve by more than 1e+09 "
                           "for 2 evaluations (best "),
            std::string::npos)
      << log.str();
  EXPECT_FALSE(r.final_line.empty());
  SafeTensors last = read_safetensors(run + "/last.safetensors");
  EXPECT_EQ(last.metadata.at("epoch"), "3");
  EXPECT_EQ(jsonl(run + "/metrics.jsonl").size(), 3u);
  // Rerun: nothing to do (the stop is kept in `last`).
  std::ostringstream log2;
  TrainResult r2 = run_training(s, synthetic(), {run, "cpu", &log2});
  EXPECT_TRUE(r2.epochs.empty());
  EXPECT_NE(log2.str().find("was early-stopped after epoch 3"), std::string::npos) << log2.str();
}

TEST(CheckpointPolicyTrain, PlateauLowersTheLrTheStepsUse) {
  const std::string run = test_util::tmpdir("ckpt_policy", "plateau");
  SpecFile s = small(6);
  s.train->schedule = Schedule::plateau;
  s.train->monitor = "train_loss";
  s.train->plateauPatience = 1;
  s.train->plateauFactor = 0.5;
  s.train->plateauThreshold = 1e9;  // only the first evaluation improves
  std::ostringstream log;
  TrainResult r = run_training(s, synthetic(), {run, "cpu", &log});
  ASSERT_EQ(r.epochs.size(), 6u);
  // e1 best, e2 bad 1, e3 bad 2 > 1: reduced for epoch 4; e4 bad 1, e5 bad 2: reduced for 6.
  const std::vector<double> per_epoch = {1e-3, 1e-3, 1e-3, 5e-4, 5e-4, 2.5e-4};
  const auto steps = jsonl(run + "/steps.jsonl");
  ASSERT_EQ(steps.size(), 18u);
  for (size_t i = 0; i < steps.size(); ++i)
    EXPECT_EQ(steps[i]["lr"].get<double>(), per_epoch[i / 3]) << "step " << i + 1;
  for (size_t e = 0; e < 6; ++e) EXPECT_EQ(r.epochs[e].lr, per_epoch[e]);
  EXPECT_NE(log.str().find("plateau: train_loss did not improve by more than 1e+09 for 2 "
                           "evaluations; lr 0.001 -> 0.0005"),
            std::string::npos)
      << log.str();
}

// A run stopped after every update and resumed each time ends with the same files, lrs and
// policy state as one never stopped. A stop at an epoch's last update would skip that epoch's
// evaluation (by design, docs/training.md), so that update runs in a call that ends there
// (epochs = E + 1, as `--resume --epochs`), the next call going on to 5.
TEST(CheckpointPolicyTrain, ResumeAfterEveryStepMatchesUninterrupted) {
  SpecFile s = small(5);
  TrainConfig& c = *s.train;
  c.schedule = Schedule::plateau;
  c.monitor = "val_loss";
  c.plateauPatience = 0;
  c.plateauCooldown = 1;
  c.plateauFactor = 0.5;
  c.plateauThreshold = 1e9;  // every evaluation after the first is bad: reduce, cooldown, ...
  c.learningRate = 0.05;
  c.optimizer = OptimizerKind::sgd;
  c.saveTopK = 2;
  c.keepSnapshots = true;
  c.checkpointEveryNEpochs = 2;
  c.earlyStopPatience = 4;
  const std::string a = test_util::tmpdir("ckpt_policy", "resume_a");
  const std::string b = test_util::tmpdir("ckpt_policy", "resume_b");
  TrainResult full = run_training(s, synthetic(), {a, "cpu"});
  int calls = 0;
  TrainResult r;
  for (bool done = false; !done && ++calls < 40;) {
    SpecFile now = s;
    bool stop = true;
    if (fs::exists(b + "/last.safetensors")) {
      const SafeTensors ck = read_safetensors(b + "/last.safetensors");
      if (ck.metadata.at("batch_in_epoch") == "2") {  // the next update ends epoch E + 1
        now.train->epochs = std::stoi(ck.metadata.at("epoch")) + 1;
        stop = false;
      }
    }
    request_stop(stop);
    r = run_training(now, synthetic(), {b, "cpu"});
    request_stop(false);
    done = !r.interrupted && now.train->epochs == 5;
  }
  EXPECT_GT(calls, 10);
  const fs::path ca = fs::path(a) / "checkpoints", cb = fs::path(b) / "checkpoints";
  ASSERT_EQ(files_in(ca), files_in(cb));
  EXPECT_GE(files_in(ca).size(), 3u);  // 2 top-k + snapshots of epochs 2 and 4
  for (const auto& f : files_in(ca)) EXPECT_EQ(slurp(ca / f), slurp(cb / f)) << f;
  const auto sa = jsonl(a + "/steps.jsonl"), sb = jsonl(b + "/steps.jsonl");
  ASSERT_EQ(sa.size(), sb.size());
  std::set<double> lrs;
  for (size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i]["lr"], sb[i]["lr"]) << i;
    EXPECT_EQ(sa[i]["train_loss"], sb[i]["train_loss"]) << i;
    lrs.insert(sa[i]["lr"].get<double>());
  }
  EXPECT_EQ(lrs, (std::set<double>{0.05, 0.025, 0.0125}));  // reduced after epochs 2 and 4
  const SafeTensors la = read_safetensors(a + "/last.safetensors");
  const SafeTensors lb = read_safetensors(b + "/last.safetensors");
  EXPECT_EQ(la.metadata.at("netspec.policy"), lb.metadata.at("netspec.policy"));
  EXPECT_TRUE(test_util::same_bits(full.params, r.params));
  EXPECT_EQ(slurp(fs::path(a) / "best.safetensors"), slurp(fs::path(b) / "best.safetensors"));
}

// A config.json written before these fields existed loads with defaults equal to today's.
TEST(CheckpointPolicyTrain, OlderConfigJsonLoadsWithDefaults) {
  RunRecord rec;
  rec.spec = small(2);
  auto j = nlohmann::ordered_json::parse(run_record_json(rec));
  auto& t = j["spec"]["train"];
  for (const char* k : {"monitor", "monitorMode", "saveTopK", "keepSnapshots", "earlyStopPatience",
                        "earlyStopMinDelta", "plateauFactor", "plateauPatience", "plateauCooldown",
                        "plateauMinLr", "plateauThreshold"}) {
    ASSERT_TRUE(t.contains(k)) << k;
    t.erase(k);
  }
  const RunRecord old = parse_run_record(j.dump(2), "old/config.json");
  EXPECT_EQ(*old.spec.train, *rec.spec.train);
  EXPECT_TRUE(run_record_diff(old, rec).empty());
  EXPECT_FALSE(CheckpointPolicy(*old.spec.train).active());  // no state, no files: as before
}

}  // namespace
}  // namespace netspec::train
