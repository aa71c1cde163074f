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

}  // namespace
}  // namespace netspec::cli_test
