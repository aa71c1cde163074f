// `netspec sample --judge` on a tiny case: a DDPM run with useEMA (the EMA scored by its noise MSE
// and saved as ema.safetensors) and a small mnist-cnn run on Fashion-MNIST as the judge.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "cli_util.h"
#include "core/npy.h"
#include "data/idx.h"

namespace netspec::cli_test {
namespace {

TEST(DdpmJudgeCli, SamplesFromTheEmaAndJudgesThem) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist"))
    GTEST_SKIP() << "no Debian dataset-fashion-mnist";
  auto dir = temp_dir("ddpm_judge_", "cli");
  Result r =
      sh("train ddpm-unet --dataset fashion-mnist --limit 64 --epochs 1 --batch 32 "
         "--set ddpmSteps=50 --set useEMA=true --set emaDecay=0.99 --run-dir " +
         (dir / "ddpm").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("ema noise mse [0-9.]+"))) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("test loss [0-9.]+ \\(mean squared error\\) over 802816 values")))
      << r.out;  // the first 1024 test images x 784 pixels, no accuracy line
  EXPECT_EQ(r.out.find("accuracy"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(dir / "ddpm" / "ema.safetensors"));
  r = sh("train mnist-cnn --dataset fashion-mnist --limit 256 --epochs 1 --batch 64 --run-dir " +
         (dir / "clf").string());
  ASSERT_EQ(r.status, 0) << r.out;
  r = sh("sample " + (dir / "ddpm").string() +
         " --checkpoint ema --n 7 --chunk 3 --grid 4 --scale 3 --ddim 3 --npy " + (dir / "s.npy").string() +
         " --judge " + (dir / "clf").string() + " --judge-p 0.5 -o " + (dir / "g.png").string());
  ASSERT_EQ(r.status, 0) << r.out;
  // 7 samples, each counted once among the 10 top classes; confident ones a subset.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex("judge mnist-cnn \\(.*best.safetensors\\): ([0-9]+)/7 \\([0-9.]+%\\) "
                 "with p >= 0.5; top class counts((?: [0-9]:[0-9]+){10}) \\(confident"
                 "((?: [0-9]:[0-9]+){10})\\); every class: no")))
      << r.out;
  auto total = [](std::string s) {
    int sum = 0;
    std::regex kv(" [0-9]:([0-9]+)");
    for (std::sregex_iterator i(s.begin(), s.end(), kv), e; i != e; ++i) sum += std::stoi((*i)[1]);
    return sum;
  };
  EXPECT_EQ(total(m[2]), 7);
  EXPECT_EQ(total(m[3]), std::stoi(m[1]));
  // [7, 1, 28, 28] f32 samples: 128-byte-aligned npy header + 7·784·4 bytes; a 2x2 grid of 28x28.
  EXPECT_GT(std::filesystem::file_size(dir / "s.npy"), 7u * 784 * 4);
  EXPECT_LT(std::filesystem::file_size(dir / "s.npy"), 7u * 784 * 4 + 256);
  // --scale 3: a 2x2 grid of 84 px squares with 1 px gaps: 2 * (84 + 1) + 1 = 171 px a side.
  const std::string png = slurp(dir / "g.png");
  ASSERT_GT(png.size(), 24u);
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) v = v << 8 | static_cast<uint8_t>(png[at + k]);
    return v;
  };
  EXPECT_EQ(be32(16), 171u);  // IHDR width
  EXPECT_EQ(be32(20), 171u);  // IHDR height
  // --from-test 0: the first 3 test images noised to t = 0 and denoised: the samples are those
  // images (bytes read apart here, scaled to [-1, 1]), within the one step's noise.
  r = sh("sample " + (dir / "ddpm").string() + " --checkpoint ema --n 3 --chunk 2 --from-test 0 " +
         "--npy " + (dir / "t.npy").string() + " -o " + (dir / "t.png").string());
  ASSERT_EQ(r.status, 0) << r.out;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("mean squared error ([0-9.]+)"))) << r.out;
  EXPECT_LT(std::stod(m[1]), 0.02) << r.out;
  const Tensor got = read_npy((dir / "t.npy").string());
  const Tensor want = data::read_idx_bytes(std::string(data::kFashionMnistDir) +
                                           "/t10k-images-idx3-ubyte.gz");
  ASSERT_EQ(got.numel(), 3 * 784);
  double diff = 0;
  for (int64_t i = 0; i < got.numel(); ++i)
    diff += std::abs(got.data<float>()[i] - (want.data<uint8_t>()[i] / 127.5 - 1));
  EXPECT_LT(diff / double(got.numel()), 0.05);
  r = sh("sample " + (dir / "ddpm").string() + " --n 2 --grid 3 -o " + (dir / "x.png").string());
  EXPECT_EQ(r.status, 2) << r.out;
  r = sh("sample " + (dir / "ddpm").string() + " --n 2 --scale 0 -o " + (dir / "x.png").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--scale must be in 1..16 (got 0)"), std::string::npos) << r.out;
  // --chunk-dir: a sampling whose chunk 1 was lost continues from the kept chunks 0 and 2 and
  // gives the same samples bit for bit; other settings on the same directory are refused.
  const std::string keep = " --checkpoint ema --n 5 --chunk 2 --ddim 3 --chunk-dir " +
                           (dir / "chunks").string() + " -o " + (dir / "c.png").string();
  r = sh("sample " + (dir / "ddpm").string() + keep + " --npy " + (dir / "a.npy").string());
  ASSERT_EQ(r.status, 0) << r.out;
  for (int j = 0; j < 3; ++j)
    EXPECT_TRUE(std::filesystem::exists(dir / "chunks" / ("chunk-" + std::to_string(j) + ".npy")));
  std::filesystem::remove(dir / "chunks" / "chunk-1.npy");
  r = sh("sample " + (dir / "ddpm").string() + keep + " --npy " + (dir / "b.npy").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2 of 3 chunks reused from"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(dir / "a.npy"), slurp(dir / "b.npy"));
  // Without the directory the same settings draw the same samples (chunk j: seed S + j).
  r = sh("sample " + (dir / "ddpm").string() + " --checkpoint ema --n 5 --chunk 2 --ddim 3 --npy " +
         (dir / "c.npy").string() + " -o " + (dir / "c.png").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(slurp(dir / "a.npy"), slurp(dir / "c.npy"));
  r = sh("sample " + (dir / "ddpm").string() + keep + " --seed 1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("holds chunks drawn with seed = 0, not 1"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace netspec::cli_test
