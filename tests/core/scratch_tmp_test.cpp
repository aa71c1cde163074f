// tests/support/scratch_tmp.cpp gives each test process its own TMPDIR (removed after a pass);
// children inherit it, so nothing a test writes lands in the shared /tmp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

TEST(ScratchTmp, TempDirIsThisProcesssOwn) {
  const fs::path t = fs::temp_directory_path();
  EXPECT_EQ(t.filename().string().rfind("netspec-test-", 0), 0u) << t;
  EXPECT_TRUE(fs::is_directory(t));
  const char* env = std::getenv("TMPDIR");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(fs::path(env), t);
  // A child process sees the same TMPDIR.
  const fs::path out = t / "child.txt";
  ASSERT_EQ(std::system(("sh -c 'echo \"$TMPDIR\" > " + out.string() + "'").c_str()), 0);
  std::ifstream in(out);
  std::string seen;
  std::getline(in, seen);
  EXPECT_EQ(fs::path(seen), t);
}
