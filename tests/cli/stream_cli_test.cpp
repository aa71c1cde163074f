// Data bigger than memory through `netspec train`: a streamed image folder (--data-memory 0,
// three decode threads) trains to the same per-step losses and final weights as the in-RAM run;
// `data pack` round-trips (a raw pack trains identically to its folder, a JPEG pack at
// --max-side trains); a truncated shard, a corrupt payload and a corrupt image mid-set stop the
// run with exit status 2, naming the file. `--dataset packed` trains from a pack, with
// randomResizedCrop the same in RAM and streamed (--no-dct-scale).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "cli/cli_util.h"
#include "data/image_fixture.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

// DIR/{train,val}/<c0..c2>/: JPEGs and PNGs of varied sizes whose colour is the class.
void write_tree(const fs::path& d) {
  std::mt19937 r(3);
  for (const char* split : {"train", "val"})
    for (int c = 0; c < 3; ++c) {
      fs::create_directories(d / split / fmt::format("c{}", c));
      for (int i = 0; i < (split[0] == 't' ? 10 : 4); ++i) {
        const int w = 14 + static_cast<int>(r() % 20), h = 14 + static_cast<int>(r() % 20);
        std::vector<uint8_t> px(static_cast<size_t>(w * h * 3));
        for (size_t k = 0; k < px.size(); ++k)
          px[k] = static_cast<uint8_t>(k % 3 == static_cast<size_t>(c) ? 200 : r() % 90);
        const fs::path base = d / split / fmt::format("c{}", c) / fmt::format("{:02}", i);
        if (i % 2)
          std::ofstream(base.string() + ".jpg", std::ios::binary) << test::jpeg_bytes(w, h, 3, px);
        else
          test::write_png(base.string() + ".png", w, h, PNG_FORMAT_RGB, px);
      }
    }
}

fs::path spec(const fs::path& d) {
  fs::path p = d / "net.json";
  std::ofstream(p) << R"({"name": "tiny-stream", "inputChannels": 3, "inputHeight": 12,
 "inputWidth": 12, "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 432, "out": 3}]})";
  return p;
}

// The per-step losses of a run (steps.csv without its timing columns).
std::string step_losses(const fs::path& run) {
  std::ifstream f(run / "steps.csv");
  std::string out;
  for (std::string line; std::getline(f, line);) {
    int commas = 0;
    size_t k = 0;
    while (k < line.size() && !(line[k] == ',' && ++commas == 4)) ++k;
    out += line.substr(0, k) + "\n";  // step, epoch, train_loss, lr
  }
  return out;
}

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
