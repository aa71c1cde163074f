// The on-disk compile cache: an entry stored under a key loads back under that key only; a
// truncated, foreign, bit-flipped or non-entry file is ignored with a warning. On the xla
// backend (skipped when the engines are absent): the first backend compiles and stores, a second
// one loads the executable from disk (no compile) and computes the same outputs, and a corrupt
// entry (bad checksum, or a well-formed entry the plugin cannot load) is recompiled and replaced.
#include "exec/compile_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "engine_util.h"
#include "exec/test_util.h"

namespace netspec::testing {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("netspec_cc_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
void spit(const fs::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << s;
}

// load() with stderr captured: the payload (or "<none>") and what was printed.
std::pair<std::string, std::string> load_logged(const exec::DiskCompileCache& c,
                                                const std::string& key) {
  ::testing::internal::CaptureStderr();
  auto v = c.load(key);
  std::string err = ::testing::internal::GetCapturedStderr();
  return {v ? *v : "<none>", err};
}

TEST(CompileCache, StoreLoadMissAndCorruptEntries) {
  const fs::path dir = fresh_dir("unit");
  exec::DiskCompileCache c(dir.string());
  EXPECT_EQ(load_logged(c, "k1").first, "<none>");  // absent: a silent miss
  EXPECT_EQ(load_logged(c, "k1").second, "");
  c.store("k1", std::string("payload\0bytes", 13));
  c.store("k2", "other");
  EXPECT_EQ(load_logged(c, "k1").first, std::string("payload\0bytes", 13));
  EXPECT_EQ(load_logged(c, "k2").first, "other");
  EXPECT_NE(c.path("k1"), c.path("k2"));
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().extension() == ".xlaexe";
  EXPECT_EQ(files, 2);  // no temporary files left behind

  const std::string good = slurp(c.path("k1"));
  struct Case {
    std::string bytes, why;
  };
  std::string flipped = good;
  flipped.back() ^= 0x10;
  const std::vector<Case> bad{{good.substr(0, good.size() - 3), "truncated"},
                              {flipped, "checksum mismatch"},
                              {"garbage", "not a netspec compile cache entry"},
                              {slurp(c.path("k2")), "written for another key"}};
  for (const Case& b : bad) {
    spit(c.path("k1"), b.bytes);
    auto [v, err] = load_logged(c, "k1");
    EXPECT_EQ(v, "<none>") << b.why;
    EXPECT_NE(err.find("[xla] compile cache: ignoring " + c.path("k1")), std::string::npos) << err;
    EXPECT_NE(err.find(b.why), std::string::npos) << err;
  }
  c.store("k1", "again");  // a corrupt entry is replaced by the next store
  EXPECT_EQ(load_logged(c, "k1").first, "again");
  fs::remove_all(dir);
}

// y = x·x + 1 (elementwise).
std::shared_ptr<hlo::Module> square_plus_one() {
  return make_module({Type::tensor(DType::kF32, {3})}, [](Builder& b, const Values& a) {
    return Values{
        b.add(b.multiply(a[0], a[0]), b.broadcast_in_dim(b.scalar(1, DType::kF32), {3}, {}))};
  });
}

// The only entry file in dir.
fs::path only_entry(const fs::path& dir) {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".xlaexe") v.push_back(e.path());
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? fs::path() : v[0];
}

TEST(CompileCache, XlaHitMissAndCorruptionRecompiles) {
  const fs::path dir = fresh_dir("xla");
  exec::BackendOptions o;
  o.compile_cache = dir.string();
  auto run = [&](std::map<std::string, int64_t>& counts, std::string* err = nullptr) {
    auto be = exec::make_backend("xla", o);
    if (err) ::testing::internal::CaptureStderr();
    Tensor y = be->load(square_plus_one())->run("main", {f32({3}, {1, -2, 0.5})}).at(0);
    if (err) *err = ::testing::internal::GetCapturedStderr();
    counts = be->counters();
    return y;
  };
  { REQUIRE_ENGINE(probe, "xla", o); }
  std::map<std::string, int64_t> c;
  expect_equal(run(c), f32({3}, {2, 5, 1.25}));  // miss: compiled and stored
  EXPECT_EQ(c["compile"], 1);
  EXPECT_EQ(c["disk_miss"], 1);
  EXPECT_EQ(c["disk_hit"], 0);
  const fs::path entry = only_entry(dir);
  expect_equal(run(c), f32({3}, {2, 5, 1.25}));  // hit: loaded, not compiled
  EXPECT_EQ(c["disk_hit"], 1);
  EXPECT_EQ(c["compile"], 0);

  // A flipped payload byte: the checksum refuses it; recompiled and the entry replaced.
  const std::string good = slurp(entry);
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x01;
  spit(entry, flipped);
  std::string err;
  expect_equal(run(c, &err), f32({3}, {2, 5, 1.25}));
  EXPECT_EQ(c["disk_corrupt"], 1);
  EXPECT_EQ(c["compile"], 1);
  EXPECT_NE(err.find("checksum mismatch"), std::string::npos) << err;
  EXPECT_TRUE(slurp(entry) != flipped);  // replaced (XLA's bytes vary between compiles)
  expect_equal(run(c), f32({3}, {2, 5, 1.25}));
  EXPECT_EQ(c["disk_hit"], 1);

  // A well-formed entry (right key, valid checksum) whose payload the plugin cannot load.
  std::string forged = good.substr(0, 32);  // magic, key hashes, key size
  const std::string junk = "not an executable";
  for (uint64_t v : {static_cast<uint64_t>(junk.size()), exec::hash_bytes(junk, 3)})
    for (int i = 0; i < 8; ++i) forged += static_cast<char>((v >> (8 * i)) & 0xff);
  spit(entry, forged + junk);
  expect_equal(run(c, &err), f32({3}, {2, 5, 1.25}));
  EXPECT_EQ(c["disk_corrupt"], 1);
  EXPECT_EQ(c["compile"], 1);
  EXPECT_NE(err.find("[xla] compile cache: ignoring " + entry.string()), std::string::npos) << err;
  expect_equal(run(c), f32({3}, {2, 5, 1.25}));  // the replaced entry hits again
  EXPECT_EQ(c["disk_hit"], 1);

  o.compile_cache = "off";  // no disk cache: compiled, nothing read
  expect_equal(run(c), f32({3}, {2, 5, 1.25}));
  EXPECT_EQ(c["compile"], 1);
  EXPECT_EQ(c.count("disk_miss"), 0u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace netspec::testing
