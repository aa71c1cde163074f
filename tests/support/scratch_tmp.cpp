// Every test process works in its own scratch directory: before the first test it makes
// $TMPDIR/netspec-test-XXXXXX and points TMPDIR there (so fs::temp_directory_path() and the
// netspec/python children a test starts write inside it); after the last test it removes it.
// A failing process keeps its directory for inspection and says where it is; so does
// NETSPEC_KEEP_TEST_TMP=1. Without this the fixtures' run dirs and datasets piled up in /tmp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace {

class ScratchTmp : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* parent = std::getenv("TMPDIR");
    std::string tmpl = std::string(parent && *parent ? parent : "/tmp") + "/netspec-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      // No scratch: the tests fall back to the caller's TMPDIR rather than not running.
      std::fprintf(stderr, "scratch_tmp: mkdtemp %s failed; tests use the caller's TMPDIR\n",
                   tmpl.c_str());
      return;
    }
    dir_ = buf.data();
    setenv("TMPDIR", dir_.c_str(), 1);
  }

  void TearDown() override {
    if (dir_.empty()) return;
    const char* keep = std::getenv("NETSPEC_KEEP_TEST_TMP");
    if (!::testing::UnitTest::GetInstance()->Passed() || (keep && std::string(keep) == "1")) {
      std::fprintf(stderr, "scratch_tmp: kept %s\n", dir_.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

 private:
  std::string dir_;
};

// Registered before main (gtest_main) runs the tests.
[[maybe_unused]] ::testing::Environment* const scratch_tmp =
    ::testing::AddGlobalTestEnvironment(new ScratchTmp);

}  // namespace
