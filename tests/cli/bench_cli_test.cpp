// `netspec bench`: times the train step of a zoo net on synthetic data and reports ms/step,
// samples/s and memory; bad arguments exit 2.
#include <gtest/gtest.h>

#include <regex>

#include "cli_util.h"

namespace netspec::cli_test {
namespace {

TEST(BenchCli, TimesLinearTrainStep) {
  Result r = sh("bench linear --steps 2 --warmup 1 --batch 8");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("bench linear batch 8"), std::string::npos) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex(
          R"(ms/step median ([0-9.]+)  min ([0-9.]+)  max ([0-9.]+)  \(n=2, warmup 1\)  samples/s ([0-9]+)  max RSS ([0-9.]+) MiB)")))
      << r.out;
  double med = std::stod(m[1]), mn = std::stod(m[2]), mx = std::stod(m[3]);
  EXPECT_GT(med, 0);
  EXPECT_LE(mn, med);
  EXPECT_LE(med, mx);
  EXPECT_GT(std::stod(m[5]), 1.0);  // RSS in MiB
  EXPECT_NE(r.out.find("arena"), std::string::npos) << r.out;
  // The loss is finite and training on the fixed batch lowers it.
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(loss ([0-9.e+-]+) -> ([0-9.e+-]+))")))
      << r.out;
  EXPECT_LT(std::stod(m[2]), std::stod(m[1]));
}

TEST(BenchCli, RefBackendAndOptimizerOverride) {
  Result r = sh("bench linear --steps 1 --warmup 0 --batch 4 --backend ref --optimizer sgd");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("sgd on ref"), std::string::npos) << r.out;
}

// --set values are judged together once all are in (as train does): turning bf16 on with its
// conv half in either order works; an end state that is invalid is refused naming the setting.
TEST(BenchCli, SetValuesAreCheckedTogether) {
  const std::string base = "bench linear --steps 1 --warmup 0 --batch 4 --backend ref ";
  Result r = sh(base + "--set bf16Conv=true --set bf16=true");
  EXPECT_EQ(r.status, 0) << r.out;
  r = sh(base + "--set bf16=true --set bf16Conv=true --set bf16Conv=false --set bf16=false");
  EXPECT_EQ(r.status, 0) << r.out;
  r = sh(base + "--set bf16Conv=true");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--set bf16Conv=true: bf16Conv needs bf16"), std::string::npos) << r.out;
}

// --module eval times inference (the eval module, no update); every run prints the first-step
// latency and the achieved GFLOP/s, a train step counting 3x the forward FLOPs of an eval call.
TEST(BenchCli, EvalModuleLatencyAndFlops) {
  Result ev = sh("bench mnist-cnn --module eval --steps 2 --warmup 1 --batch 4");
  ASSERT_EQ(ev.status, 0) << ev.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      ev.out, m,
      std::regex(R"(eval ms/call median ([0-9.]+) .* images/s ([0-9]+)  max RSS ([0-9.]+) MiB)")))
      << ev.out;
  EXPECT_GT(std::stod(m[1]), 0);
  const std::regex rate(
      R"(first step ([0-9.]+) s \(spec to the first finished call\)  GFLOP/s ([0-9.]+) \(([0-9.e+-]+) GFLOP per call\))");
  ASSERT_TRUE(std::regex_search(ev.out, m, rate)) << ev.out;
  EXPECT_GT(std::stod(m[1]), 0);
  const double eval_gflop = std::stod(m[3]);
  Result tr = sh("bench mnist-cnn --steps 1 --warmup 0 --batch 4");
  ASSERT_EQ(tr.status, 0) << tr.out;
  ASSERT_TRUE(std::regex_search(tr.out, m, rate)) << tr.out;
  EXPECT_NEAR(std::stod(m[3]), 3 * eval_gflop, 0.002 * eval_gflop) << tr.out;
  // An eval call is the forward of the batch: the summary's FLOPs per sample x 4.
  Result sum = sh("summary mnist-cnn");
  ASSERT_EQ(sum.status, 0) << sum.out;
  ASSERT_TRUE(std::regex_search(sum.out, m, std::regex(R"(total params .* FLOPs ([0-9,]+) \()")))
      << sum.out;
  std::string digits = m[1];
  std::erase(digits, ',');
  EXPECT_NEAR(eval_gflop, 4 * std::stod(digits) / 1e9, 0.002 * eval_gflop);
  EXPECT_EQ(sh("bench mnist-cnn --module nope --steps 1").status, 2);
}

TEST(BenchCli, BadInputExits2) {
  EXPECT_EQ(sh("bench no-such-net --steps 1").status, 2);
  Result r = sh("bench linear --steps 0");
  EXPECT_EQ(r.status, 2) << r.out;
  r = sh("bench linear --optimizer nope");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("unknown --optimizer"), std::string::npos) << r.out;
  r = sh("bench linear --input 3x-2x2");
  EXPECT_EQ(r.status, 2) << r.out;
  r = sh("bench linear --backend gpu");
  EXPECT_EQ(r.status, 2) << r.out;
}

// NETSPEC_PROFILE=1 leaves each plan's first run out where it ran again (4 runs: 3 counted), and
// NETSPEC_PROFILE_TOP=N lists N steps.
TEST(BenchCli, ProfileCountsWarmRunsAndListsTopSteps) {
  Result r = run_netspec("NETSPEC_PROFILE=1 NETSPEC_PROFILE_TOP=2",
                         "bench linear --steps 3 --warmup 1 --batch 8");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("first run left out where it ran again"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("function main: 3 runs"), std::string::npos) << r.out;
  const size_t top = r.out.find("top steps:\n");
  ASSERT_NE(top, std::string::npos) << r.out;
  const std::string listed = r.out.substr(top);
  const std::regex row(R"(\n +[0-9.]+ ms +[0-9.]+% +3 calls  )");
  const auto n = std::distance(std::sregex_iterator(listed.begin(), listed.end(), row),
                               std::sregex_iterator());
  EXPECT_EQ(n, 2) << r.out;
}

}  // namespace
}  // namespace netspec::cli_test
