// Writers of run-dir files (issue 40 items 6, 7, 9): concurrent atomic writers of one path never
// share a temp file (each rename lands a whole file); appends refuse a planted symlink or FIFO
// instead of writing through it, and report a failed write (EFBIG under RLIMIT_FSIZE, as ENOSPC
// would be) naming the file.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/file_check.h"
#include "tests/error_of.h"
#include "tests/support/test_files.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;
using test_util::error_of;

fs::path fresh_dir(const std::string& name) {
  return netspec::test_util::fresh_dir("atomic_append", name);
}

using netspec::test_util::slurp;

TEST(AtomicWrite, ConcurrentWritersOfOnePathNeverShareATempFile) {
  const fs::path d = fresh_dir("concurrent");
  const std::string path = (d / "last.safetensors").string();
  const std::string a(100000, 'a'), b(70000, 'b');
  std::string errors[2];
  auto writer = [&](int w) {
    for (int i = 0; i < 300 && errors[w].empty(); ++i)
      errors[w] = error_of([&] { write_file_atomic(path, w == 0 ? a : b); });
    if (errors[w] == "no error") errors[w].clear();
  };
  std::thread t0(writer, 0), t1(writer, 1);
  t0.join();
  t1.join();
  // With one shared PATH.tmp, one writer unlinked or renamed the other's file mid-write.
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  const std::string got = slurp(path);
  EXPECT_TRUE(got == a || got == b) << got.size() << " bytes";
  for (const auto& e : fs::directory_iterator(d))  // no temp file left behind
    EXPECT_EQ(e.path().filename(), "last.safetensors");
  EXPECT_TRUE(is_atomic_temp_of("last.safetensors.123.4.tmp", "last.safetensors"));
  EXPECT_TRUE(is_atomic_temp_of("last.safetensors.tmp", "last.safetensors"));
  EXPECT_FALSE(is_atomic_temp_of("last.safetensors.x.4.tmp", "last.safetensors"));
  EXPECT_FALSE(is_atomic_temp_of("best.safetensors.1.2.tmp", "last.safetensors"));
}

TEST(AppendFile, APlantedSymlinkOrFifoIsRefusedNotFollowed) {
  const fs::path d = fresh_dir("links");
  std::ofstream(d / "victim") << "secret";
  fs::create_symlink(d / "victim", d / "metrics.csv");
  std::string e = error_of([&] { append_file((d / "metrics.csv").string(), "1,2\n", "metrics"); });
  EXPECT_NE(e.find("[metrics] cannot append to '" + (d / "metrics.csv").string() +
                   "': it is a symbolic link"),
            std::string::npos)
      << e;
  EXPECT_EQ(slurp(d / "victim"), "secret");
  // A dangling link: the old append created its target outside the run dir.
  fs::create_symlink(d / "elsewhere", d / "steps.csv");
  EXPECT_NE(error_of([&] { append_file((d / "steps.csv").string(), "x\n"); }).find("symbolic link"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(d / "elsewhere"));
  ASSERT_EQ(mkfifo((d / "metrics.jsonl").c_str(), 0600), 0);  // must not block
  e = error_of([&] { append_file((d / "metrics.jsonl").string(), "{}\n", "metrics"); });
  EXPECT_NE(e.find("(No such device or address)"), std::string::npos) << e;
  // A regular file is appended to.
  append_file((d / "ok.csv").string(), "a\n");
  append_file((d / "ok.csv").string(), "b\n");
  EXPECT_EQ(slurp(d / "ok.csv"), "a\nb\n");
}

TEST(AppendFile, AFailedWriteIsAnErrorNamingTheFile) {
  const fs::path d = fresh_dir("efbig");
  const std::string path = (d / "metrics.csv").string();
  // In a child: files may not grow past 100 bytes (EFBIG, as a full disk gives ENOSPC).
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit r{100, 100};
    ::setrlimit(RLIMIT_FSIZE, &r);
    std::string e = error_of([&] {
      for (int i = 0; i < 10; ++i) append_file(path, std::string(30, 'x') + "\n", "metrics");
    });
    const bool named = e.find("[metrics] appending 31 bytes to '" + path +
                              "' failed (File too "
                              "large)") != std::string::npos;
    ::_exit(named ? 0 : 1);
  }
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0) << "the failed append was not reported naming the file";
}

}  // namespace
}  // namespace netspec
