// The run directory as a user meets it (issue 17), through the built `netspec` on a small
// synthetic Fashion-MNIST-shaped set: the default run dir, checked resume (--resume,
// --overwrite), config.json with every field and `--config RUN/config.json` reproducing a run,
// one validator for every flag (issue 25 item 11), checkpoint metadata, eval/predict of a run,
// --val-split, labels checked at load, fine-tuning (--init-from, --classes, --freeze).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "core/npy.h"
#include "core/safetensors.h"
#include "spec/train_config.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path& data_dir() {
  static fs::path d = synthetic_fashion("ns_rundir_", 400, 100, 7);
  return d;
}

// --batch 32 --epochs 1 unless `more` gives them.
std::string train_args(const fs::path& run, const std::string& more = "") {
  const bool b = more.find("--batch ") != std::string::npos;
  const bool e = more.find("--epochs ") != std::string::npos;
  return fmt::format("train mlp --dataset fashion-mnist --data {}{}{} --run-dir {} {}",
                     data_dir().string(), b ? "" : " --batch 32", e ? "" : " --epochs 1",
                     run.string(), more);
}

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

int count_lines(const fs::path& p) {
  std::ifstream f(p);
  int n = 0;
  for (std::string l; std::getline(f, l);) ++n;
  return n;
}

TEST(RunDirCli, DefaultRunDirIsWrittenAndPrinted) {
  fs::path cwd = temp_dir("ns_rundir_", "default");
  Result r = run_netspec("cd " + cwd.string() + " &&",
                         fmt::format("train mlp --dataset fashion-mnist --data {} --epochs 1 "
                                     "--limit 320 --batch 32",
                                     data_dir().string()));
  ASSERT_EQ(r.status, 0) << r.out;
  ASSERT_EQ(r.out.rfind("run dir: runs/mlp-", 0), 0u) << r.out;  // the first line
  const std::string dir = r.out.substr(9, r.out.find('\n') - 9);
  EXPECT_EQ(dir.size(), std::string("runs/mlp-20261201-124156").size()) << dir;
  for (const char* f :
       {"last.safetensors", "best.safetensors", "config.json", "metrics.csv", "classes.json"})
    EXPECT_TRUE(fs::exists(cwd / dir / f)) << f;
  json cfg = json::parse(slurp(cwd / dir / "config.json"));
  // Every TrainConfig field, defaults included.
  int fields = 0;
  TrainConfig{}.visit([&](const char* n, const auto&, const char*) {
    ++fields;
    EXPECT_TRUE(cfg["spec"]["train"].contains(n)) << n;
  });
  EXPECT_EQ(static_cast<int>(cfg["spec"]["train"].size()), fields);
  EXPECT_EQ(cfg["spec"]["train"]["learningRate"], 0.001);
  EXPECT_EQ(cfg["limit"], 320);
  EXPECT_EQ(cfg["seed"], 0);
  EXPECT_EQ(cfg["dataset"], "fashionMnist");
  EXPECT_EQ(cfg["data"], fs::absolute(data_dir()).string());
  EXPECT_FALSE(cfg["netspec_version"].get<std::string>().empty());
  EXPECT_TRUE(has(cfg["command"], "netspec train mlp --dataset fashion-mnist")) << cfg["command"];
  EXPECT_TRUE(has(cfg["command"], "--limit 320")) << cfg["command"];
}

TEST(RunDirCli, RerunResumesOnlyWhenTheConfigMatches) {
  fs::path run = temp_dir("ns_rundir_", "resume");
  ASSERT_EQ(sh(train_args(run)).status, 0);
  const std::string ck = slurp(run / "last.safetensors"), cfg = slurp(run / "config.json");

  Result bad = sh(train_args(run, "--lr 0.002 --batch 64 --limit 200"));
  EXPECT_EQ(bad.status, 2) << bad.out;
  for (const char* s : {"learningRate: 0.001 -> 0.002", "batchSize: 32 -> 64", "limit: 0 -> 200",
                        "--resume", "--overwrite"})
    EXPECT_TRUE(has(bad.out, s)) << s << "\n" << bad.out;
  EXPECT_EQ(slurp(run / "last.safetensors"), ck);
  EXPECT_EQ(slurp(run / "config.json"), cfg);
  // Same config, more epochs: resumes after epoch 1.
  Result more = sh(train_args(run, "--epochs 2"));
  ASSERT_EQ(more.status, 0) << more.out;
  EXPECT_TRUE(has(more.out, "resuming")) << more.out;
  EXPECT_FALSE(has(more.out, "epoch 1/2")) << more.out;
  EXPECT_EQ(count_lines(run / "metrics.jsonl"), 2);
  // Fewer epochs than stored is a difference.
  Result fewer = sh(train_args(run, "--epochs 1"));
  EXPECT_EQ(fewer.status, 2) << fewer.out;
  EXPECT_TRUE(has(fewer.out, "epochs: 2 -> 1 (epochs may only grow)")) << fewer.out;

  // --resume keeps the stored config (lr 0.001, batch 32) and lets epochs grow.
  Result res = sh(train_args(run, "--lr 0.002 --batch 64 --epochs 3 --resume"));
  ASSERT_EQ(res.status, 0) << res.out;
  json c = json::parse(slurp(run / "config.json"));
  EXPECT_EQ(c["spec"]["train"]["learningRate"], 0.001);
  EXPECT_EQ(c["spec"]["train"]["batchSize"], 32);
  EXPECT_EQ(c["spec"]["train"]["epochs"], 3);
  EXPECT_EQ(count_lines(run / "metrics.jsonl"), 3);
  // `--resume --run-dir RUN` alone takes the net, data and config from RUN/config.json.
  Result bare = sh(fmt::format("train --resume --run-dir {} --epochs 4", run.string()));
  ASSERT_EQ(bare.status, 0) << bare.out;
  EXPECT_EQ(count_lines(run / "metrics.jsonl"), 4);
  Result none = sh(fmt::format("train --resume --run-dir {}", (run / "nope").string()));
  EXPECT_EQ(none.status, 2) << none.out;
  EXPECT_TRUE(has(none.out, "has no config.json")) << none.out;

  // --overwrite starts over and keeps the user's own files.
  std::ofstream(run / "notes.txt") << "mine\n";
  Result ow = sh(train_args(run, "--lr 0.002 --overwrite"));
  ASSERT_EQ(ow.status, 0) << ow.out;
  EXPECT_FALSE(has(ow.out, "resuming")) << ow.out;
  EXPECT_EQ(count_lines(run / "metrics.jsonl"), 1);
  EXPECT_EQ(slurp(run / "notes.txt"), "mine\n");
  EXPECT_EQ(json::parse(slurp(run / "config.json"))["spec"]["train"]["learningRate"], 0.002);
  EXPECT_EQ(sh(train_args(run, "--resume --overwrite")).status, 2);

  // A run dir with a checkpoint but no config.json (an older run) needs --resume or --overwrite.
  fs::remove(run / "config.json");
  Result old = sh(train_args(run, "--lr 0.002 --epochs 2"));
  EXPECT_EQ(old.status, 2) << old.out;
  EXPECT_TRUE(has(old.out, "no config.json")) << old.out;
}

TEST(RunDirCli, ConfigOfARunReproducesIt) {
  fs::path a = temp_dir("ns_rundir_", "repro_a"), b = temp_dir("ns_rundir_", "repro_b");
  ASSERT_EQ(sh(train_args(a, "--limit 200 --seed 3 --lr 0.002 --set momentum=0.8")).status, 0);
  fs::remove_all(b);
  Result r =
      sh(fmt::format("train --config {} --run-dir {}", (a / "config.json").string(), b.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  json ca = json::parse(slurp(a / "config.json")), cb = json::parse(slurp(b / "config.json"));
  EXPECT_EQ(ca["spec"], cb["spec"]);
  EXPECT_EQ(cb["limit"], 200);
  SafeTensors ta = read_safetensors((a / "last.safetensors").string());
  SafeTensors tb = read_safetensors((b / "last.safetensors").string());
  ASSERT_EQ(ta.tensors.size(), tb.tensors.size());
  for (size_t i = 0; i < ta.tensors.size(); ++i)
    EXPECT_EQ(0, std::memcmp(ta.tensors[i].second.raw(), tb.tensors[i].second.raw(),
                             ta.tensors[i].second.nbytes()))
        << ta.tensors[i].first;
  EXPECT_EQ(sh(fmt::format("train mlp --config {}", (a / "config.json").string())).status, 2);
}

TEST(RunDirCli, EveryFlagGoesThroughOneValidator) {
  fs::path run = temp_dir("ns_rundir_", "flags");
  fs::remove_all(run);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--lr -1", "--lr -1: learningRate must be > 0"},
      {"--lr nan", "--lr nan: field 'learningRate'"},
      {"--lr inf", "--lr inf: field 'learningRate'"},
      {"--set learningRate=1e308 --set learningRate=-0", "learningRate must be > 0"},
      {"--epochs 0", "--epochs 0: epochs must be >= 1"},
      {"--seed -1", "--seed -1: seed must be >= 0"},
      {"--limit -5", "--limit -5: must be >= 1"},
      {"--limit 0", "--limit 0: must be >= 1"},
      {"--batch 0", "--batch 0: batchSize must be >= 1"},
      {"--optimizer adamx", "unknown --optimizer 'adamx'"},
      {"--val-split 1", "--val-split 1: must be in (0, 1)"},
      {"--classes -3", "--classes -3: must be >= 1"},
      {"--set learningRate=-1", "--set learningRate=-1: learningRate must be > 0"},
  };
  for (const auto& [flag, msg] : cases) {
    Result r = sh(train_args(run, flag));
    EXPECT_EQ(r.status, 2) << flag << "\n" << r.out;
    EXPECT_TRUE(has(r.out, msg)) << flag << "\n" << r.out;
  }
  EXPECT_FALSE(fs::exists(run));  // refused before the run dir is made
  // Refused by the trainer after the data load (the run dir exists by then): nothing is left.
  Result late = sh(train_args(run, "--set useTTA=true --set augment=false"));
  EXPECT_EQ(late.status, 2) << late.out;
  EXPECT_TRUE(has(late.out, "useTTA averages views")) << late.out;
  EXPECT_FALSE(fs::exists(run)) << "a refused run left " << run;
  // ...while a run dir that existed before keeps what it holds.
  fs::create_directories(run);
  std::ofstream(run / "notes.txt") << "mine\n";
  EXPECT_EQ(sh(train_args(run, "--set useTTA=true --set augment=false")).status, 2);
  EXPECT_TRUE(fs::exists(run / "notes.txt"));
  fs::remove_all(run);
  Result e = sh(fmt::format("eval mlp --checkpoint x.safetensors --batch 0"));
  EXPECT_EQ(e.status, 2);
  EXPECT_TRUE(has(e.out, "--batch 0: batchSize must be >= 1")) << e.out;
  Result p = sh("predict mlp --checkpoint x.safetensors --top -3 x.npy");
  EXPECT_EQ(p.status, 2);
  EXPECT_TRUE(has(p.out, "--top -3: must be >= 1")) << p.out;
  Result s = sh("summary mlp --classes -3");
  EXPECT_EQ(s.status, 2);
  EXPECT_TRUE(has(s.out, "--classes -3: must be >= 1")) << s.out;
  // adamw is one name for train and bench.
  Result w = sh(train_args(run, "--limit 64 --optimizer adamw"));
  ASSERT_EQ(w.status, 0) << w.out;
  EXPECT_EQ(json::parse(slurp(run / "config.json"))["spec"]["train"]["weightDecay"], 0.01);
}

TEST(RunDirCli, CheckpointMetadataAndBestWithoutOptimizerState) {
  fs::path run = temp_dir("ns_rundir_", "meta");
  ASSERT_EQ(sh(train_args(run, "--limit 64")).status, 0);
  SafeTensors best = read_safetensors((run / "best.safetensors").string());
  SafeTensors last = read_safetensors((run / "last.safetensors").string());
  for (const SafeTensors* st : {&best, &last}) {
    EXPECT_EQ(st->metadata.at("format"), "pt");
    EXPECT_EQ(st->metadata.at("netspec.format"), "netspec-checkpoint-3");
    EXPECT_EQ(st->metadata.at("net"), "mlp");
  }
  EXPECT_EQ(best.tensors.size(), 6u);      // 3 dense weights + biases
  EXPECT_EQ(last.tensors.size(), 6u * 3);  // + Adam's m and v
  EXPECT_EQ(best.metadata.at("optimizer_state"), "false");
  // A weights-only file (no netspec metadata, as converted weights are) evaluates.
  best.metadata.clear();
  write_safetensors((run / "plain.safetensors").string(), best);
  Result e = sh(fmt::format("eval mlp --checkpoint {} --dataset fashion-mnist --data {}",
                            (run / "plain.safetensors").string(), data_dir().string()));
  EXPECT_EQ(e.status, 0) << e.out;
  EXPECT_TRUE(has(e.out, "(0 epochs, step 0)")) << e.out;
}

TEST(RunDirCli, EvalAndPredictTakeEverythingFromTheRun) {
  fs::path run = temp_dir("ns_rundir_", "evalrun");
  ASSERT_EQ(sh(train_args(run, "--epochs 2")).status, 0);
  json best = json::parse(slurp(run / "best.json"));
  Result e = sh("eval " + run.string());
  ASSERT_EQ(e.status, 0) << e.out;
  EXPECT_TRUE(has(e.out, fmt::format("top-1 {:.2f}%", 100 * best["val_top1"].get<double>())))
      << e.out;
  EXPECT_TRUE(has(e.out, "count 100")) << e.out;
  Result e2 = sh("eval " + (run / "config.json").string());
  EXPECT_EQ(e2.status, 0) << e2.out;

  // Tile 0 lit (class 0, "T-shirt/top") and tile 5 lit (class 5, "Sandal"), normalised.
  fs::path imgs = run / "inputs";
  fs::create_directories(imgs);
  for (int cls : {0, 5}) {
    Tensor x(DType::kF32, {1, 28, 28});
    for (int y = 0; y < 28; ++y)
      for (int c = 0; c < 28; ++c) {
        const bool on = y / 7 == cls / 4 && c / 7 == cls % 4;
        x.data<float>()[y * 28 + c] = ((on ? 0.8f : 0.1f) - 0.2860f) / 0.3530f;
      }
    write_npy((imgs / fmt::format("x{}.npy", cls)).string(), x);
  }
  Result p = sh(fmt::format("predict {} {} --json --top 2", run.string(), imgs.string()));
  ASSERT_EQ(p.status, 0) << p.out;
  json j = json::parse(p.out);
  ASSERT_EQ(j.size(), 2u) << p.out;
  EXPECT_EQ(j[0]["label"], "T-shirt/top") << p.out;
  EXPECT_EQ(j[1]["label"], "Sandal") << p.out;
  EXPECT_EQ(j[1]["index"], 5);
  EXPECT_EQ(j[0]["top"].size(), 2u);
  EXPECT_GT(j[0]["top"][0]["p"].get<double>(), j[0]["top"][1]["p"].get<double>());
}

TEST(RunDirCli, ValidationSplitPicksBestAndReportsTestSeparately) {
  fs::path run = temp_dir("ns_rundir_", "val");
  Result r = sh(train_args(run, "--val-split 0.25"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "300 train / 100 validation samples (100 test)")) << r.out;
  EXPECT_TRUE(has(r.out, "validation accuracy")) << r.out;
  EXPECT_TRUE(has(r.out, "on 100 samples (best checkpoint, epoch 1, chosen on validation)"))
      << r.out;
  EXPECT_EQ(json::parse(slurp(run / "config.json"))["val_split"], 0.25);
  EXPECT_EQ(json::parse(slurp(run / "best.json"))["val_count"], 100);
}

TEST(RunDirCli, LabelsOutsideTheNetAreRefusedAtLoad) {
  fs::path run = temp_dir("ns_rundir_", "labels");
  Result r = sh(train_args(run, "--classes 5"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "outside the net's 5 classes")) << r.out;
  EXPECT_TRUE(has(r.out, "train split of fashionMnist in " + fs::absolute(data_dir()).string()))
      << r.out;
  EXPECT_FALSE(has(r.out, "epoch 1/")) << r.out;
}

TEST(RunDirCli, FineTuneFromAnotherRunWithANewHeadAndFrozenLayers) {
  fs::path a = temp_dir("ns_rundir_", "ft_a"), b = temp_dir("ns_rundir_", "ft_b");
  ASSERT_EQ(sh(train_args(a)).status, 0);
  Result r = sh(
      fmt::format("train mlp --dataset fashion-mnist --data {} --batch 32 --epochs 1 --run-dir {} "
                  "--init-from {} --classes 12 --freeze layers.1.",
                  data_dir().string(), b.string(), a.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "4 tensors loaded, head re-initialised: layers.3.weight")) << r.out;
  // 784·512 + 512 frozen; 512·512 + 512 and the new head 512·12 + 12 trained.
  EXPECT_TRUE(has(r.out, "params: 268,812 trainable, 401,920 frozen (--freeze layers.1.)"))
      << r.out;
  SafeTensors sa = read_safetensors((a / "best.safetensors").string());
  SafeTensors sb = read_safetensors((b / "last.safetensors").string());
  auto bytes = [](const SafeTensors& st, const std::string& n) {
    const Tensor& t = st.at(n);
    return std::string(static_cast<const char*>(t.raw()), t.nbytes());
  };
  EXPECT_EQ(bytes(sa, "layers.1.weight"), bytes(sb, "layers.1.weight"));  // frozen
  EXPECT_EQ(bytes(sa, "layers.1.bias"), bytes(sb, "layers.1.bias"));
  EXPECT_NE(bytes(sa, "layers.2.weight"), bytes(sb, "layers.2.weight"));  // trained
  EXPECT_EQ(sb.at("layers.3.weight").shape(), (Shape{12, 512}));
  json cfg = json::parse(slurp(b / "config.json"));
  EXPECT_EQ(cfg["spec"]["train"]["freeze"], "layers.1.");
  EXPECT_EQ(cfg["classes"], 12);
  EXPECT_EQ(cfg["init_from"], fs::absolute(a / "best.safetensors").string());

  Result bad = sh(train_args(temp_dir("ns_rundir_", "ft_c"), "--freeze nothing."));
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_TRUE(has(bad.out, "freeze prefix 'nothing.' matches no parameter")) << bad.out;
  Result missing = sh(train_args(temp_dir("ns_rundir_", "ft_d"), "--init-from /no/such"));
  EXPECT_EQ(missing.status, 2) << missing.out;
}

TEST(RunDirCli, CommandSuggestionsAndWriteErrors) {
  Result t = sh("trian mlp");
  EXPECT_EQ(t.status, 2);
  EXPECT_TRUE(has(t.out, "did you mean 'train'?")) << t.out;
  fs::path d = temp_dir("ns_rundir_", "emit");
  // A missing folder is made (issue 44); one that cannot be is named.
  std::ofstream(d / "afile") << "x";
  Result e = sh("emit mlp -o " + (d / "afile" / "x.mlir").string());
  EXPECT_EQ(e.status, 2);
  EXPECT_TRUE(has(e.out, "cannot create the folder '" + (d / "afile").string())) << e.out;
  EXPECT_TRUE(has(e.out, "Not a directory")) << e.out;
  Result s = sh("summary mlp");
  ASSERT_EQ(s.status, 0);
  // mlp: 784·512 + 512·512 + 512·10 = 668,672 multiply-adds per sample.
  EXPECT_TRUE(has(s.out, "FLOPs 1,337,344")) << s.out;
  EXPECT_TRUE(has(s.out, "MACs 668,672")) << s.out;
}

}  // namespace
}  // namespace netspec::cli_test

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Cross-field checks see every flag and --set: a spec with warmupEpochs 5 trains for one epoch
// with `--epochs 1 --set warmupEpochs=0` (it was refused at --epochs, before the --set applied);
// `--epochs 1` alone is refused naming it, and a --set that does not fix it is named together.
TEST(RunDirCli, CrossFieldChecksWaitForEverySet) {
  fs::path dir = temp_dir("ns_rundir_", "warm");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path spec = dir / "warm.json";
  std::ofstream(spec) << R"({"name": "warm", "inputChannels": 1, "inputHeight": 28,
    "inputWidth": 28, "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 784, "out": 10}],
    "train": {"dataset": "fashionMnist", "optimizer": "sgd", "learningRate": 0.01,
    "batchSize": 32, "epochs": 10, "warmupEpochs": 5}})";
  const std::string base = fmt::format("train {} --data {} --limit 64 --run-dir {}", spec.string(),
                                       data_dir().string(), (dir / "run").string());
  Result ok = sh(base + " --epochs 1 --set warmupEpochs=0");
  ASSERT_EQ(ok.status, 0) << ok.out;
  const json train = json::parse(slurp(dir / "run" / "config.json"))["spec"]["train"];
  EXPECT_EQ(train["epochs"], 1);
  EXPECT_EQ(train["warmupEpochs"], 0);
  Result alone = sh(base + " --overwrite --epochs 1");
  EXPECT_EQ(alone.status, 2) << alone.out;
  EXPECT_TRUE(has(alone.out, "--epochs 1: warmupEpochs must be < epochs (got 5, epochs 1)"))
      << alone.out;
  Result still = sh(base + " --overwrite --epochs 1 --set warmupEpochs=2");
  EXPECT_EQ(still.status, 2) << still.out;
  EXPECT_TRUE(has(still.out,
                  "the flags and --set values together: warmupEpochs must be < epochs "
                  "(got 2, epochs 1)"))
      << still.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace netspec::cli_test
