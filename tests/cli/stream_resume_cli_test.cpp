// Streamed training runs that are stopped and resumed, as a user meets them (issue 43): a `train`
// killed with SIGKILL (or stopped with SIGTERM) mid-epoch resumes from the data cursor in `last`
// and ends with the uninterrupted run's per-step losses and byte-identical weights; a corrupt
// JPEG mid-set stops the run with exit 2 naming it, `last` saved at the update before, and
// --skip-bad-images trains through it, counting it; 2 processes that each decode half of every
// batch train the bits of 2 replica threads; the steady memory of a streamed run
// grows by the ~30 bytes of each file's label, permutation entry and path only (2k vs 20k
// files here, within 10 %; 10k vs 100k with NETSPEC_FULL=1).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "cli/cli_util.h"
#include "cli/stream_fixture.h"
#include "data/image_fixture.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

// DIR/{train,val}/c<k>/NNNNNN.jpg: n training and n_val validation JPEGs of side `side`, the
// class's channel bright, cycling through 16 encoded variants per class (cheap for large n).
void write_jpegs(const fs::path& d, int n, int n_val, int side, int classes = 3) {
  std::mt19937 r(11);
  std::vector<std::vector<std::string>> variants(static_cast<size_t>(classes));
  for (int c = 0; c < classes; ++c)
    for (int v = 0; v < 16; ++v) {
      std::vector<uint8_t> px(static_cast<size_t>(side * side * 3));
      for (size_t k = 0; k < px.size(); ++k)
        px[k] =
            static_cast<uint8_t>(k % 3 == static_cast<size_t>(c % 3) ? 150 + r() % 100 : r() % 90);
      variants[static_cast<size_t>(c)].push_back(test::jpeg_bytes(side, side, 3, px));
    }
  for (const char* split : {"train", "val"}) {
    for (int c = 0; c < classes; ++c) fs::create_directories(d / split / fmt::format("c{}", c));
    const int count = split[0] == 't' ? n : n_val;
    for (int i = 0; i < count; ++i) {
      const int c = i % classes;
      std::ofstream(d / split / fmt::format("c{}", c) / fmt::format("{:06}.jpg", i),
                    std::ios::binary)
          << variants[static_cast<size_t>(c)][static_cast<size_t>((i / classes) % 16)];
    }
  }
}

fs::path spec(const fs::path& d, int side) {
  fs::path p = d / "net.json";
  std::ofstream(p) << fmt::format(
      R"({{"name": "tiny-resume", "inputChannels": 3, "inputHeight": {0}, "inputWidth": {0},
 "layers": [{{"kind": "flatten"}}, {{"kind": "dense", "in": {1}, "out": 3}}]}})",
      side, side * side * 3);
  return p;
}

std::string train_args(const fs::path& d, const std::string& run, const std::string& extra) {
  return fmt::format(
      "train {} --dataset folder --data {} --batch 8 --set augment=true --data-memory 0 "
      "--data-threads 2 --checkpoint-every-steps 4 --run-dir {} {}",
      spec(d, 16).string(), (d / "data").string(), (d / run).string(),
      extra.find("--epochs") == std::string::npos ? "--epochs 3 " + extra : extra);
}

// Starts `args` in the background, sends `sig` once RUN/last.safetensors exists (the first
// mid-epoch save), waits, and prints the exit status.
std::string run_and_signal(const std::string& args, const fs::path& run, const std::string& sig) {
  return run_script(fmt::format(
      "OMP_WAIT_POLICY=passive {bin}/netspec {a} > {r}.log 2>&1 & p=$!; i=0; "
      "while [ ! -f {r}/last.safetensors ] && kill -0 $p 2>/dev/null && [ $i -lt 6000 ]; do "
      "sleep 0.01; i=$((i+1)); done; kill -{sig} $p; wait $p; echo status=$?",
      fmt::arg("bin", NETSPEC_BINARY_DIR), fmt::arg("a", args), fmt::arg("r", run.string()),
      fmt::arg("sig", sig)));
}

TEST(StreamResumeCli, KilledRunResumesFromTheCursorBitForBit) {
  fs::path d = temp_dir("ns_sresume_", "kill");
  write_jpegs(d / "data", 300, 30, 20);  // 300 / 8: 38 updates per epoch, saves every 4
  Result ref = sh(train_args(d, "ref", ""));
  ASSERT_EQ(ref.status, 0) << ref.out;
  const std::string losses = step_losses(d / "ref");
  ASSERT_EQ(std::count(losses.begin(), losses.end(), '\n'), 1 + 3 * 38) << losses;
  for (const char* sig : {"9", "TERM"}) {
    const fs::path run = d / fmt::format("run{}", sig);
    const std::string st = run_and_signal(train_args(d, run.filename().string(), ""), run, sig);
    EXPECT_TRUE(has(st, sig[0] == '9' ? "status=137" : "status=130"))
        << st << slurp(run.string() + ".log");
    Result again = sh(train_args(d, run.filename().string(), ""));
    ASSERT_EQ(again.status, 0) << again.out;
    // Saves come every 4 updates (an epoch has 38), so the cursor is mostly mid-epoch; wherever
    // the signal landed, the rest of the run must be the uninterrupted one.
    EXPECT_TRUE(has(again.out, "resuming ")) << again.out;
    EXPECT_EQ(step_losses(run), losses) << sig;
    EXPECT_EQ(slurp(run / "last.safetensors"), slurp(d / "ref" / "last.safetensors")) << sig;
  }
}

TEST(StreamResumeCli, CorruptJpegStopsCleanlyOrIsSkipped) {
  fs::path d = temp_dir("ns_sresume_", "bad");
  write_jpegs(d / "data", 300, 30, 20);
  ASSERT_EQ(sh(train_args(d, "run", "--epochs 1")).status, 0);
  ASSERT_EQ(sh(train_args(d, "ref", "--epochs 1")).status, 0);
  const std::string last1 = slurp(d / "run" / "last.safetensors");
  const fs::path bad = d / "data" / "train" / "c1" / "000145.jpg";
  fs::resize_file(bad, fs::file_size(bad) / 2);  // truncated mid-scan
  Result r = sh(train_args(d, "run", "--epochs 2"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, bad.string())) << r.out;
  EXPECT_FALSE(has(r.out, "epoch 2/2  train loss")) << r.out;
  // `last` is there and loadable: at the update before the bad sample's batch, or epoch 1.
  ASSERT_TRUE(fs::exists(d / "run" / "last.safetensors"));
  const bool moved = has(r.out, "before the unreadable sample; rerun to resume");
  EXPECT_EQ(slurp(d / "run" / "last.safetensors") != last1, moved) << r.out;
  Result skip = sh(train_args(d, "run", "--epochs 2 --skip-bad-images"));
  ASSERT_EQ(skip.status, 0) << skip.out;
  EXPECT_TRUE(has(skip.out, "resuming ")) << skip.out;
  EXPECT_TRUE(has(skip.out, "epoch 2: skipped 1 unreadable image (--skip-bad-images")) << skip.out;
  EXPECT_TRUE(has(skip.out, bad.string())) << skip.out;
  EXPECT_TRUE(has(skip.out, "epoch 2/2  train loss")) << skip.out;
  // Deterministic: a fresh run with the flag gives the same weights as the stopped + resumed one.
  Result fresh = sh(train_args(d, "ref", "--epochs 2 --skip-bad-images"));
  ASSERT_EQ(fresh.status, 0) << fresh.out;
  EXPECT_EQ(slurp(d / "run" / "last.safetensors"), slurp(d / "ref" / "last.safetensors"));
}

// Two processes, each decoding only its half of every global batch (Loader::set_shard), train
// the bits of one process with two replica threads (which decodes every row).
TEST(StreamResumeCli, ProcessesDecodeTheirRowsAndTrainAsReplicas) {
  fs::path d = temp_dir("ns_sresume_", "procs");
  write_jpegs(d / "data", 90, 12, 20);
  Result procs = sh("launch --nproc 2 -- " + train_args(d, "procs", "--epochs 2"));
  ASSERT_EQ(procs.status, 0) << procs.out;
  EXPECT_TRUE(has(procs.out, "2 replicas (processes)")) << procs.out;
  Result threads = sh(train_args(d, "threads", "--epochs 2 --replicas 2"));
  ASSERT_EQ(threads.status, 0) << threads.out;
  const std::string losses = step_losses(d / "threads");
  EXPECT_EQ(std::count(losses.begin(), losses.end(), '\n'), 1 + 2 * 12) << losses;
  EXPECT_EQ(step_losses(d / "procs"), losses);
  EXPECT_EQ(slurp(d / "procs" / "last.safetensors"), slurp(d / "threads" / "last.safetensors"));
}

// VmRSS (KiB) of a streamed run at its save after update 60 (steady state), then killed.
int64_t steady_rss_kib(const fs::path& d, const std::string& data, int side) {
  const fs::path run = d / ("rss-" + data);
  const std::string args = fmt::format(
      "train {} --dataset folder --data {} --epochs 1 --batch 16 --set augment=true "
      "--data-memory 0 --data-threads 1 --checkpoint-every-steps 60 --run-dir {}",
      spec(d, side).string(), (d / data).string(), run.string());
  const std::string out = run_script(fmt::format(
      "OMP_WAIT_POLICY=passive {bin}/netspec {a} > {r}.log 2>&1 & p=$!; i=0; "
      "while [ ! -f {r}/last.safetensors ] && kill -0 $p 2>/dev/null && [ $i -lt 30000 ]; do "
      "sleep 0.01; i=$((i+1)); done; grep VmRSS /proc/$p/status; kill -9 $p; wait $p",
      fmt::arg("bin", NETSPEC_BINARY_DIR), fmt::arg("a", args), fmt::arg("r", run.string())));
  const size_t at = out.find("VmRSS:");
  if (at == std::string::npos) {
    ADD_FAILURE() << out << slurp(run.string() + ".log");
    return 0;
  }
  return std::atoll(out.c_str() + at + 6);
}

TEST(StreamResumeCli, SteadyMemoryDoesNotGrowWithTheDataset) {
  const bool full = std::getenv("NETSPEC_FULL") != nullptr;
  const int small = full ? 10000 : 2000, large = full ? 100000 : 20000;
  fs::path d = temp_dir("ns_sresume_", "rss");
  write_jpegs(d / "small", small, 30, 32);
  write_jpegs(d / "large", large, 30, 32);
  const int64_t a = steady_rss_kib(d, "small", 32), b = steady_rss_kib(d, "large", 32);
  ASSERT_GT(a, 0);
  // What grows is the label, the permutation entry and the compact path of each file (~30
  // bytes measured); the rest is the same. The tiny net's whole run is ~23 MiB, so at 100k
  // files that is ~11 % of it; with 20k, well within 10 %.
  const double per_file = 1024.0 * static_cast<double>(b - a) / (large - small);
  if (full) {  // 90k more files: ~1 MiB of allocator noise is ~11 bytes per file
    EXPECT_LT(per_file, 64) << small << " images: " << a << " KiB, " << large << " images: " << b
                            << " KiB";
  } else {
    EXPECT_LT(static_cast<double>(b), 1.10 * static_cast<double>(a))
        << small << " images: " << a << " KiB, " << large << " images: " << b << " KiB";
  }
  std::cout << "steady RSS: " << small << " images " << a << " KiB, " << large << " images " << b
            << " KiB (" << per_file << " bytes per extra file)\n";
}

}  // namespace
}  // namespace netspec::cli_test
