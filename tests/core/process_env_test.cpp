// openblas_coretype(): the user's OPENBLAS_CORETYPE wins; otherwise SkylakeX exactly when the CPU
// has the AVX-512 subsets those kernels use (checked here against /proc/cpuinfo's flags), never on
// an AVX2-only CPU (where Debian's torch would die with SIGILL).
#include "core/process_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace netspec {
namespace {

std::set<std::string> cpuinfo_flags() {
  std::ifstream f("/proc/cpuinfo");
  std::set<std::string> out;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream ss(line.substr(line.find(':') + 1));
    for (std::string w; ss >> w;) out.insert(w);
    break;
  }
  return out;
}

TEST(ProcessEnv, OpenblasCoretypeFollowsTheCpuAndTheUser) {
  const char* saved = std::getenv("OPENBLAS_CORETYPE");
  std::string keep = saved ? saved : "";
  unsetenv("OPENBLAS_CORETYPE");
  auto flags = cpuinfo_flags();
  ASSERT_TRUE(flags.count("sse2")) << "no flags line in /proc/cpuinfo";
  bool avx512 = flags.count("avx512f") && flags.count("avx512bw") && flags.count("avx512dq") &&
                flags.count("avx512vl");
  const char* got = openblas_coretype();
  if (avx512) {
    ASSERT_NE(got, nullptr);
    EXPECT_STREQ(got, "SkylakeX");
  } else {
    EXPECT_EQ(got, nullptr) << got;
  }
  setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  EXPECT_STREQ(openblas_coretype(), "Haswell");
  if (saved)
    setenv("OPENBLAS_CORETYPE", keep.c_str(), 1);
  else
    unsetenv("OPENBLAS_CORETYPE");
}

TEST(ProcessEnv, WaitPolicyIsPassiveOnABusyMachine) {
  EXPECT_STREQ(wait_policy_for(0.0), "active");
  EXPECT_STREQ(wait_policy_for(0.49), "active");
  EXPECT_STREQ(wait_policy_for(0.5), "passive");
  EXPECT_STREQ(wait_policy_for(1.0), "passive");
  EXPECT_STREQ(wait_policy_for(-1), "active");  // /proc/stat unreadable: the idle default
}

TEST(ProcessEnv, BusyFractionSeesSpinningThreads) {
  // One spinning thread per CPU: the machine is (nearly) all busy whatever else runs.
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<bool> stop{false};
  std::vector<std::thread> spin;
  for (unsigned i = 0; i < n; ++i)
    spin.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  const double busy = machine_busy_fraction(200);
  stop = true;
  for (auto& t : spin) t.join();
  EXPECT_GE(busy, 0.5);
  EXPECT_LE(busy, 1.0);
}

}  // namespace
}  // namespace netspec
