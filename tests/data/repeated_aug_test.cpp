// Repeated augmentation: the epoch's rows equal timm's RepeatAugSampler (one replica, its
// distributed_sampler.py run by Debian's python with torch.randperm patched to netspec's
// permutation), below and above timm's 256-sample rounding; the permutation is a permutation.
#include "data/repeated_aug.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/process_env.h"
#include "data/data_test_util.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

TEST(RepeatedAug, RowsMatchTimmRepeatAugSampler) {
  const std::string py = test::timm_file("data/distributed_sampler.py");
  export_openblas_coretype();
  if (py.empty() || std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs /usr/bin/python3 with torch and timm in the oracle venv";
  const std::string d = test::tmpdir("ra");
  nlohmann::json cases = nlohmann::json::array();
  std::vector<std::vector<int64_t>> mine;
  for (auto [n, k] : {std::pair<int64_t, int>{100, 3}, {600, 3}, {517, 2}}) {
    std::vector<int64_t> p = ra_permutation(n, 4, 1);
    std::vector<int64_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i);
    EXPECT_NE(p, ra_permutation(n, 4, 2));
    cases.push_back({{"perm", p}, {"k", k}});
    mine.push_back(repeated_aug_rows(p, k));
  }
  std::ofstream(d + "/cases.json") << cases.dump();
  const std::string cmd = "/usr/bin/python3 " + std::string(NETSPEC_SOURCE_DIR) +
                          "/tests/data/repeated_aug_reference.py " + py + " " + d;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (size_t i = 0; i < mine.size(); ++i) {
    std::ifstream f(d + "/rows" + std::to_string(i) + ".json");
    std::vector<int64_t> ref = nlohmann::json::parse(f).get<std::vector<int64_t>>();
    EXPECT_EQ(mine[i], ref) << "case " << i;
  }
  EXPECT_EQ(mine[1].size(), 512u);  // 600 rounded down to 256s
  EXPECT_EQ(mine[0].size(), 100u);
  fs::remove_all(d);
}

}  // namespace
}  // namespace netspec::data
