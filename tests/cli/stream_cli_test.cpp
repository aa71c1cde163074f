// Data bigger than memory through `netspec train`: a streamed image folder (--data-memory 0,
// three decode threads) trains to the same per-step losses and final weights as the in-RAM run;
// `data pack` round-trips (a raw pack trains identically to its folder, a JPEG pack at
// --max-side trains); a truncated shard, a corrupt payload and a corrupt image mid-set stop the
// run with exit status 2, naming the file. `--dataset packed` trains from a pack, with
// randomResizedCrop the same in RAM and streamed (--no-dct-scale); trainRes (with or without
// randomResizedCrop) trains a streamed folder as in RAM.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "cli/cli_util.h"
#include "cli/stream_fixture.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

Result train(const fs::path& d, const fs::path& data, const std::string& run,
             const std::string& extra) {
  return sh(fmt::format("train {} --dataset folder --data {} --epochs 2 --batch 8 --set "
                        "augment=true --run-dir {} {}",
                        spec(d).string(), data.string(), (d / run).string(), extra));
}

TEST(StreamCli, StreamedFolderTrainsAsInRam) {
  fs::path d = temp_dir("ns_stream_", "train");
  write_tree(d / "data");
  Result ram = train(d, d / "data", "ram", "");
  ASSERT_EQ(ram.status, 0) << ram.out;
  EXPECT_TRUE(has(ram.out, "data: in RAM, 42 images")) << ram.out;
  // Full-resolution decodes: bit for bit (DCT scaling would change some of these small images).
  Result st = train(d, d / "data", "st", "--data-memory 0 --data-threads 3 --no-dct-scale");
  ASSERT_EQ(st.status, 0) << st.out;
  EXPECT_TRUE(has(st.out, "data: streaming 42 images")) << st.out;
  EXPECT_TRUE(has(st.out, "3 decode threads")) << st.out;
  const std::string losses = step_losses(d / "ram");
  EXPECT_GT(std::count(losses.begin(), losses.end(), '\n'), 8) << losses;
  EXPECT_EQ(step_losses(d / "st"), losses);
  EXPECT_EQ(slurp(d / "st" / "last.safetensors"), slurp(d / "ram" / "last.safetensors"));
  Result bad = train(d, d / "data", "bad", "--data-threads 0");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_TRUE(has(bad.out, "--data-threads")) << bad.out;
}

TEST(StreamCli, PackRoundTripsAndRefusesCorruption) {
  fs::path d = temp_dir("ns_stream_", "pack");
  write_tree(d / "data");
  Result p = sh(fmt::format("data pack --dataset folder --data {} -o {} --raw --shard-mb 1",
                            (d / "data").string(), (d / "raw").string()));
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_TRUE(has(p.out, "packed 42 images (30 train, 12 test, 3 classes)")) << p.out;
  Result again = sh(fmt::format("data pack --data {} -o {}", (d / "data").string(),
                                (d / "raw").string()));
  EXPECT_EQ(again.status, 2) << again.out;  // never over an existing pack
  // Raw pixels at full size: the same batches as the folder itself, streamed.
  ASSERT_EQ(train(d, d / "data", "ram", "").status, 0);
  Result rp = train(d, d / "raw", "rawrun", "--data-threads 2");
  ASSERT_EQ(rp.status, 0) << rp.out;
  EXPECT_TRUE(has(rp.out, "(packed, 1 shards)")) << rp.out;
  EXPECT_EQ(step_losses(d / "rawrun"), step_losses(d / "ram"));
  // JPEG at a max side: a smaller pack that trains.
  Result jp = sh(fmt::format("data pack --dataset imagenet --data {} -o {} --max-side 16 "
                             "--quality 85",
                             (d / "data").string(), (d / "jpeg").string()));
  ASSERT_EQ(jp.status, 0) << jp.out;
  Result jr = train(d, d / "jpeg", "jpegrun", "--data-memory 0");
  ASSERT_EQ(jr.status, 0) << jr.out;
  EXPECT_TRUE(has(jr.out, "test accuracy")) << jr.out;

  // A corrupt payload: named with its shard when its batch is read, exit 2.
  const fs::path shard = d / "jpeg" / "shard-00000.bin";
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  Result cp = train(d, d / "jpeg", "corrupt", "--data-memory 0");
  EXPECT_EQ(cp.status, 2) << cp.out;
  EXPECT_TRUE(has(cp.out, shard.string() + " (record")) << cp.out;
  EXPECT_TRUE(has(cp.out, "corrupt payload")) << cp.out;
  // A truncated shard: refused on open, named, exit 2.
  fs::resize_file(shard, fs::file_size(shard) - 7);
  Result tp = train(d, d / "jpeg", "trunc", "");
  EXPECT_EQ(tp.status, 2) << tp.out;
  EXPECT_TRUE(has(tp.out, shard.string() + ": ")) << tp.out;
  EXPECT_TRUE(has(tp.out, "truncated or replaced shard")) << tp.out;
}

Result train_packed(const fs::path& d, const fs::path& data, const std::string& run,
                    const std::string& extra) {
  return sh(fmt::format("train {} --dataset packed --data {} --epochs 2 --batch 8 --set "
                        "randomResizedCrop=true --run-dir {} {}",
                        spec(d).string(), data.string(), (d / run).string(), extra));
}

TEST(StreamCli, PackedDatasetTrainsWithRandomResizedCrop) {
  fs::path d = temp_dir("ns_stream_", "packed");
  write_tree(d / "data");
  ASSERT_EQ(sh(fmt::format("data pack --data {} -o {}", (d / "data").string(),
                           (d / "pack").string()))
                .status,
            0);
  Result ram = train_packed(d, d / "pack", "ram", "");
  ASSERT_EQ(ram.status, 0) << ram.out;
  EXPECT_TRUE(has(ram.out, "whole images for randomResizedCrop")) << ram.out;
  EXPECT_TRUE(has(ram.out, "(packed, 1 shards)")) << ram.out;
  EXPECT_TRUE(has(ram.out, "test accuracy")) << ram.out;
  Result st = train_packed(d, d / "pack", "st", "--data-memory 0 --data-threads 2 --no-dct-scale");
  ASSERT_EQ(st.status, 0) << st.out;
  EXPECT_TRUE(has(st.out, "data: streaming 30 images")) << st.out;  // the training split's
  EXPECT_EQ(step_losses(d / "st"), step_losses(d / "ram"));
  EXPECT_EQ(slurp(d / "st" / "last.safetensors"), slurp(d / "ram" / "last.safetensors"));
  // A folder that is not a pack: named with the index it lacks, exit 2.
  Result bad = train_packed(d, d / "data", "bad", "");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_TRUE(has(bad.out, "index.nspack")) << bad.out;
}

// trainRes on a streamed folder: each sample resized to 8x8 as it is read gives the in-RAM run's
// losses and weights (--no-dct-scale); randomResizedCrop with trainRes renders its crops at 8x8,
// in RAM (whole images decoded) and streamed alike.
TEST(StreamCli, StreamedTrainResTrainsAsInRam) {
  fs::path d = temp_dir("ns_stream_", "tres");
  write_tree(d / "data");
  auto run = [&](const std::string& name, const std::string& extra) {
    return sh(
        fmt::format("train {} --dataset folder --data {} --epochs 2 --batch 8 --set "
                    "trainRes=8 --run-dir {} {}",
                    pooled_spec(d).string(), (d / "data").string(), (d / name).string(), extra));
  };
  for (const std::string aug : {"augment=true", "randomResizedCrop=true"}) {
    Result ram = run(aug + "-ram", "--set " + aug);
    ASSERT_EQ(ram.status, 0) << ram.out;
    EXPECT_TRUE(has(ram.out, "trainRes: training at 8x8, evaluating at 12x12")) << ram.out;
    Result st =
        run(aug + "-st", "--set " + aug + " --data-memory 0 --no-dct-scale --data-threads 2");
    ASSERT_EQ(st.status, 0) << st.out;
    EXPECT_TRUE(has(st.out, "data: streaming")) << st.out;
    const std::string losses = step_losses(d / (aug + "-ram"));
    EXPECT_GT(std::count(losses.begin(), losses.end(), '\n'), 4) << losses;
    EXPECT_EQ(step_losses(d / (aug + "-st")), losses) << aug;
    EXPECT_EQ(slurp(d / (aug + "-st") / "last.safetensors"),
              slurp(d / (aug + "-ram") / "last.safetensors"))
        << aug;
  }
}

TEST(StreamCli, CorruptImageMidSetStopsTheRun) {
  fs::path d = temp_dir("ns_stream_", "badimg");
  write_tree(d / "data");
  const fs::path bad = d / "data" / "train" / "c2" / "05.jpg";
  fs::resize_file(bad, fs::file_size(bad) / 2);
  Result r = train(d, d / "data", "run", "--data-memory 0 --data-threads 2");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, bad.string())) << r.out;
  EXPECT_FALSE(has(r.out, "epoch 1/")) << r.out;
}

}  // namespace
}  // namespace netspec::cli_test
