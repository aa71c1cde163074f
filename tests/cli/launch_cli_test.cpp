// Data parallel across processes as a user runs it: `netspec launch --nproc 2 -- train` (Gloo on
// 127.0.0.1) trains the same parameters as `train --replicas 2` (threads), rank 0 alone logs and
// writes the run dir, and a rerun resumes from it; a rank started with another config is refused
// naming the field; a killed or stopped rank makes the other exit with an error within the
// timeout, and a restart resumes from the last checkpoint; `run --replicas` is bounded; `eval`
// split over 2 processes prints one process's metrics.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "cli/cli_util.h"
#include "core/npy.h"
#include "core/safetensors.h"
#include "data/idx_fixture.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

// A small conv + BN net (so sync-BN matters) on 1x28x28.
const fs::path& spec_file() {
  static fs::path p = [] {
    fs::path d = temp_dir("ns_launch_", "spec");
    fs::path f = d / "bnsmall.json";
    std::ofstream(f) << R"({"name": "bnsmall", "inputChannels": 1, "inputHeight": 28,
      "inputWidth": 28, "layers": [{"kind": "convBn", "ic": 1, "oc": 8, "k": 3, "stride": 2},
      {"kind": "convBn", "ic": 8, "oc": 8, "k": 3}, {"kind": "globalAvgPool"},
      {"kind": "flatten"}, {"kind": "dense", "in": 8, "out": 10}]})";
    return f;
  }();
  return p;
}

const fs::path& data_dir() {
  static fs::path d = synthetic_fashion("ns_launch_", 1000, 100, 41);
  return d;
}

// 5 steps of 64: runs that differ in their f32 summation order only stay within ~1e-8 of each
// other (over 1000 samples, 16 steps, the training amplifies such differences to ~1e-5 in a
// first-layer momentum: a tolerance there would pass or fail by the kernels' rounding).
const fs::path& short_data_dir() {
  static fs::path d = synthetic_fashion("ns_launch_short_", 320, 100, 41);
  return d;
}

std::string train_args(const fs::path& run, int epochs, const std::string& extra = "",
                       const fs::path& data = data_dir()) {
  return fmt::format(
      "train {} --dataset fashion-mnist --data {} --batch 64 --epochs {} --optimizer sgd "
      "--lr 0.05 --set momentum=0.9 --set syncBN=true --run-dir {} {}",
      spec_file().string(), data.string(), epochs, run.string(), extra);
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Starts two ranks by hand (torchrun environment) in the background; rank 1 gets `sig` once
// rank 0's run dir has last.safetensors, and the script prints each rank's exit status and the
// seconds rank 0 ran after the signal. Output of rank r goes to DIR/rank<r>.log.
std::string two_ranks_with_signal(const fs::path& dir, const std::string& args0,
                                  const std::string& args1, const std::string& sig, int timeout_s) {
  const int port = 29600 + static_cast<int>(getpid() % 300);
  std::string env = fmt::format(
      "WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT={} NETSPEC_DIST_TIMEOUT={} "
      "NETSPEC_DIST_TOKEN=t{}",
      port, timeout_s, getpid());
  std::string script = fmt::format(
      "RANK=0 {env} {bin}/netspec {a0} > {d}/rank0.log 2>&1 & p0=$!; "
      "RANK=1 {env} {bin}/netspec {a1} > {d}/rank1.log 2>&1 & p1=$!; "
      "i=0; while [ ! -f {d}/run/last.safetensors ] && kill -0 $p0 2>/dev/null && [ $i -lt 3000 ]; "
      "do sleep 0.01; "
      "i=$((i+1)); done; kill -{sig} $p1 2>/dev/null; t0=$(date +%s); wait $p0; s0=$?; t1=$(date "
      "+%s); "
      "kill -9 $p1 2>/dev/null; wait $p1; s1=$?; echo status0=$s0 status1=$s1 secs=$((t1-t0))",
      fmt::arg("env", env), fmt::arg("bin", NETSPEC_BINARY_DIR), fmt::arg("a0", args0),
      fmt::arg("a1", args1), fmt::arg("d", dir.string()), fmt::arg("sig", sig));
  return run_script(script);
}

// Checkpoint tensors of two run dirs agree to 1e-6 relative (f32 summation order only).
void expect_same_checkpoints(const fs::path& a_dir, const fs::path& b_dir) {
  SafeTensors a = read_safetensors((a_dir / "last.safetensors").string());
  SafeTensors b = read_safetensors((b_dir / "last.safetensors").string());
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t k = 0; k < a.tensors.size(); ++k) {
    const auto& [name, t] = a.tensors[k];
    ASSERT_EQ(name, b.tensors[k].first);
    const Tensor& u = b.tensors[k].second;
    ASSERT_EQ(t.numel(), u.numel()) << name;
    for (int64_t i = 0; i < t.numel(); ++i)
      ASSERT_NEAR(t.as_double(i), u.as_double(i), 1e-6 * (1 + std::abs(t.as_double(i)))) << name;
  }
}

TEST(LaunchCli, TwoProcessesTrainLikeTwoThreadsAndResume) {
  fs::path dir = temp_dir("ns_launch_", "procs");
  Result threads = sh(train_args(dir / "threads", 1, "--replicas 2"));
  ASSERT_EQ(threads.status, 0) << threads.out;
  EXPECT_NE(threads.out.find("data parallel: 2 replicas (threads)"), std::string::npos);
  Result procs = sh("launch --nproc 2 -- " + train_args(dir / "procs", 1));
  ASSERT_EQ(procs.status, 0) << procs.out;
  EXPECT_NE(procs.out.find("data parallel: 2 replicas (processes)"), std::string::npos);
  EXPECT_EQ(count(procs.out, "epoch 1/1"), 1) << procs.out;  // rank 0 alone logs
  expect_same_checkpoints(dir / "threads", dir / "procs");
  // A second launch with more epochs resumes from rank 0's checkpoint on every rank.
  Result more = sh("launch --nproc 2 -- " + train_args(dir / "procs", 2));
  ASSERT_EQ(more.status, 0) << more.out;
  EXPECT_NE(more.out.find("resuming"), std::string::npos) << more.out;
  EXPECT_EQ(count(more.out, "epoch 2/2"), 1) << more.out;
  EXPECT_EQ(count(more.out, "epoch 1/2"), 0) << more.out;
  // Finished: every rank stops before loading data; rank 0 prints the one line.
  Result done = sh("launch --nproc 2 -- " + train_args(dir / "procs", 2));
  ASSERT_EQ(done.status, 0) << done.out;
  EXPECT_EQ(count(done.out, "nothing to do: " + (dir / "procs" / "last.safetensors").string() +
                                " already has 2 of 2 epochs"),
            1)
      << done.out;
  EXPECT_EQ(count(done.out, "train bnsmall on"), 0) << done.out;  // no data loaded, no header
  EXPECT_EQ(count(done.out, "run dir:"), 0) << done.out;
  // `eval` in 2 processes (each scores half the test batches) prints, once, what one prints.
  const std::string eval =
      fmt::format("eval {} --data {} --batch 16", (dir / "procs").string(), data_dir().string());
  Result one = sh(eval);
  ASSERT_EQ(one.status, 0) << one.out;
  Result two = sh("launch --nproc 2 -- " + eval);
  ASSERT_EQ(two.status, 0) << two.out;
  const std::string line = one.out.substr(one.out.find("eval bnsmall"));
  ASSERT_NE(line.find("count 100"), std::string::npos) << one.out;
  EXPECT_EQ(count(two.out, "eval bnsmall"), 1) << two.out;
  EXPECT_NE(two.out.find(line.substr(0, line.size() - 1) + "  (2 processes)"), std::string::npos)
      << one.out << two.out;
}

TEST(LaunchCli, ReplicaThreadsInEachProcessTrainLikeAllThreadsInOne) {
  fs::path dir = temp_dir("ns_launch_", "local");
  // 4 replicas sum their gradients ((g0 + g1) + g2) + g3 in one process, (g0 + g1) + (g2 + g3)
  // across two: a short run (short_data_dir) keeps that rounding from growing.
  Result threads = sh(train_args(dir / "threads", 1, "--replicas 4", short_data_dir()));
  ASSERT_EQ(threads.status, 0) << threads.out;
  Result mixed =
      sh("launch --nproc 2 -- " + train_args(dir / "mixed", 1, "--replicas 2", short_data_dir()));
  ASSERT_EQ(mixed.status, 0) << mixed.out;
  EXPECT_NE(mixed.out.find("data parallel: 4 replicas (processes), 16 samples each"),
            std::string::npos)
      << mixed.out;
  expect_same_checkpoints(dir / "threads", dir / "mixed");
  // The evaluation split across the 2 ranks reports what one process computes: the same model
  // up to f32 rounding, so the same accuracy line.
  auto acc = [](const std::string& out) { return out.substr(out.rfind("test accuracy")); };
  EXPECT_EQ(acc(mixed.out), acc(threads.out));
}

TEST(LaunchCli, XlaAcrossProcessesIsRefusedByName) {
  fs::path dir = temp_dir("ns_launch_", "xla");
  Result r = sh("launch --nproc 2 -- " + train_args(dir / "run", 1, "--backend xla"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("[launch] --backend xla across processes (WORLD_SIZE 2) is not supported: "
                       "XLA's CPU PJRT plugin has no cross-process collectives"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir / "run"));  // refused before any rank started
}

TEST(LaunchCli, RankWithAnotherConfigIsRefusedNamingTheField) {
  fs::path dir = temp_dir("ns_launch_", "mismatch");
  std::string out =
      two_ranks_with_signal(dir, train_args(dir / "run", 1),
                            train_args(dir / "run", 1, "--set learningRate=0.01"), "0", 20);
  EXPECT_NE(out.find("status0=2 status1=2"), std::string::npos) << out;
  for (const char* r : {"rank0.log", "rank1.log"}) {
    std::string log = slurp(dir / r);
    EXPECT_NE(log.find("rank 1 was started with another config or net than rank 0"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("learningRate: 0.01 vs 0.05"), std::string::npos) << log;
  }
}

TEST(LaunchCli, DeadOrStoppedRankStopsTheOtherWithinTheTimeoutAndRestartResumes) {
  for (const char* sig : {"9", "STOP"}) {
    fs::path dir = temp_dir("ns_launch_", std::string("fault") + sig);
    std::string args = train_args(dir / "run", 30);
    std::string out = two_ranks_with_signal(dir, args, args, sig, 4);
    std::string log0 = slurp(dir / "rank0.log");
    EXPECT_NE(out.find("status0=2"), std::string::npos) << out << log0;
    EXPECT_NE(log0.find("all_reduce across processes failed"), std::string::npos) << log0;
    auto at = out.find("secs=");
    ASSERT_NE(at, std::string::npos) << out;
    EXPECT_LE(std::stoi(out.substr(at + 5)), 4 + 8) << sig;  // the timeout + an epoch's slack
    // All ranks restarted: they resume from rank 0's last checkpoint.
    // Fewer epochs than the stored 30: --resume with --epochs (a plain rerun refuses it).
    Result again = sh("launch --nproc 2 -- " + train_args(dir / "run", 2, "--resume"));
    ASSERT_EQ(again.status, 0) << again.out;
    EXPECT_NE(again.out.find("resuming"), std::string::npos) << again.out;
  }
}

// Ctrl-C (SIGINT to launch's whole process group) reaches every rank once, through launch: all
// stop after the same step, rank 0 saves `last`, launch exits 130, and a relaunch resumes.
TEST(LaunchCli, SigintStopsAllRanksWhichResume) {
  fs::path dir = temp_dir("ns_launch_", "sigint");
  std::string out = run_script(fmt::format(
      "setsid {}/netspec launch --nproc 2 -- {} > {}/launch.log 2>&1 & p=$!; i=0; "
      "while [ ! -f {}/run/last.safetensors ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); "
      "done; sleep 0.3; /bin/kill -INT -- -$p; wait $p; echo status=$?",
      NETSPEC_BINARY_DIR, train_args(dir / "run", 30), dir.string(), dir.string()));
  const std::string log = slurp(dir / "launch.log");
  EXPECT_NE(out.find("status=130"), std::string::npos) << out << log;
  EXPECT_NE(log.find("rerun to resume"), std::string::npos) << log;
  EXPECT_EQ(log.find("Terminated"), std::string::npos) << log;
  // The stored 30 epochs: the interrupt may land after epoch 2 on a fast machine, and a relaunch
  // with fewer epochs than already done has nothing to do.
  Result again = sh("launch --nproc 2 -- " + train_args(dir / "run", 30, "--resume"));
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("resuming"), std::string::npos) << again.out;
}

TEST(LaunchCli, EmitWritesAReplicaModuleWithItsManifest) {
  fs::path dir = temp_dir("ns_launch_", "emit");
  Result r = sh(fmt::format("emit {} --module train_step --batch 16 --replicas 4 --sync-bn -o {}",
                            spec_file().string(), (dir / "dp.mlir").string()));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string m = slurp(dir / "dp.manifest.json");
  for (const char* key : {"\"replicas\": 4", "\"global_batch\": 64", "\"sync_bn\": true",
                          "\"sharded\": true", "\"count\": 12544"})  // 4 x 16 x 14x14
    EXPECT_NE(m.find(key), std::string::npos) << key << "\n" << m;
  EXPECT_NE(slurp(dir / "dp.mlir").find("stablehlo.all_reduce"), std::string::npos);
}

TEST(LaunchCli, FailingRankFailsTheLaunchAndReplicasAreBounded) {
  Result r = sh("launch --nproc 2 -- train no-such-net");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("exited with status 2"), std::string::npos) << r.out;
  Result big = sh("run --replicas 20000 " + spec_file().string());
  EXPECT_EQ(big.status, 2) << big.out;
  EXPECT_NE(big.out.find("--replicas must be in 1..1024 (got 20000)"), std::string::npos)
      << big.out;
}

// `launch -- run MODULE`: each process runs one replica. On cpu the all_reduce meets in Gloo
// (both ranks print 2x); on xla each process becomes a node of the plugin's multi-node client,
// which XLA's CPU plugin refuses by name (GPU plugins: bench/gpu/check.sh).
TEST(LaunchCli, RunUnderLaunchIsOneReplicaPerProcess) {
  fs::path dir = temp_dir("ns_launch_", "run");
  fs::create_directories(dir);
  write_npy((dir / "x.npy").string(), Tensor::from<float>(DType::kF32, {4}, {1, 2, 3, 4}));
  const std::string run = fmt::format("run {}/examples/allreduce-2.mlir --input {}",
                                      NETSPEC_SOURCE_DIR, (dir / "x.npy").string());
  Result cpu = sh("launch --nproc 2 -- " + run + " --backend cpu");
  ASSERT_EQ(cpu.status, 0) << cpu.out;
  for (const char* rank : {"rank0", "rank1"})
    EXPECT_NE(cpu.out.find(fmt::format("{}.result0: tensor<4xf32> = [2, 4, 6, 8]", rank)),
              std::string::npos)
        << cpu.out;
  Result twice = sh("launch --nproc 2 -- " + run + " --backend cpu --replicas 2");
  EXPECT_EQ(twice.status, 2) << twice.out;
  EXPECT_NE(twice.out.find("each process runs one replica"), std::string::npos) << twice.out;
  if (!fs::exists(fs::path(NETSPEC_BINARY_DIR) / "engines/pjrt/pjrt_c_api_cpu_plugin.so"))
    GTEST_SKIP() << "no xla backend (scripts/install-engines.sh)";
  Result xla = sh("launch --nproc 2 -- " + run + " --backend xla");
  EXPECT_EQ(xla.status, 2) << xla.out;
  EXPECT_NE(xla.out.find("XLA's CPU PJRT plugin"), std::string::npos) << xla.out;
  EXPECT_NE(xla.out.find("has no cross-process collectives"), std::string::npos) << xla.out;
}

}  // namespace
}  // namespace netspec::cli_test
