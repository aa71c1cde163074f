// openblas_coretype(): the user's OPENBLAS_CORETYPE wins; otherwise SkylakeX exactly when the CPU
// has the AVX-512 subsets those kernels use (checked here against /proc/cpuinfo's flags), never on
// an AVX2-only CPU (where Debian's torch would die with SIGILL).
#include "core/process_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
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

}  // namespace
}  // namespace netspec
