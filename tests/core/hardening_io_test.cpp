// Hardening of the readers and writers every command shares (issue 25): strict JSON (depth cap,
// duplicate keys with line:col, linear positions), safetensors headers validated field by field
// before allocating, exclusive temp files that never follow a planted link, and non-regular
// files refused by name without blocking.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/file_check.h"
#include "core/json_strict.h"
#include "core/npy.h"
#include "core/safetensors.h"
#include "tests/error_of.h"
#include "tests/support/test_files.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  return netspec::test_util::fresh_dir("hard_io", name);
}

using netspec::test_util::slurp;

using netspec::test_util::error_of;

TEST(JsonStrict, DuplicateKeysAreRefusedWithBothPositions) {
  std::string e = error_of([] {
    parse_json_strict<nlohmann::json>("{\"a\": 1,\n  \"b\": {\"x\": 2},\n  \"a\": 3}", "f.json");
  });
  EXPECT_EQ(e.rfind("f.json:3:3: error: duplicate key \"a\" (first at 1:2", 0), 0u) << e;
  // An escaped spelling of the same key is the same key; the same key in sibling objects is not.
  EXPECT_NE(error_of([] {
              parse_json_strict<nlohmann::json>(R"({"a":1,"\u0061":2})", "f");
            }).find("duplicate key \"a\""),
            std::string::npos);
  EXPECT_NO_THROW(parse_json_strict<nlohmann::json>(R"([{"a":1},{"a":2}])", "f"));
  auto ok = parse_json_strict<nlohmann::json>(R"({"a":{"a":{"a":5}}})", "f");
  EXPECT_EQ(ok["a"]["a"]["a"], 5);
}

TEST(JsonStrict, DeepNestingIsRefusedFastAtTheStatedDepth) {
  std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_NO_THROW(parse_json_strict<nlohmann::json>(ok, "f"));
  std::string deeper = "[" + ok + "]";
  EXPECT_NE(error_of([&] {
              parse_json_strict<nlohmann::json>(deeper, "f");
            }).find("f:1:65: error: JSON nested deeper than 64 levels"),
            std::string::npos);
  // 200 KB of '[': the scan stops at the cap (it took 35 s and 5.6 GB when positions kept a
  // pointer string per level).
  std::string bomb(200000, '[');
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(parse_json_strict<nlohmann::json>(bomb, "bomb.json"), ParseError);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.5);
}

TEST(JsonStrict, PositionsNameKeysAndElementsAndAreLinear) {
  std::string text = "{\"layers\": [\n  {\"kind\": \"dense\", \"ic\": 4},\n  7\n], \"x\": \"s\"}";
  JsonPositions pos(text, "f");
  EXPECT_EQ(pos.at("/layers/0/ic").line, 2);
  EXPECT_EQ(pos.at("/layers/0/ic").col, 21);  // the key
  EXPECT_EQ(pos.at("/layers/1").line, 3);
  EXPECT_EQ(pos.at("/layers/1").col, 3);
  EXPECT_EQ(pos.at("/layers/0/missing").col, 3);  // nearest ancestor: the element
  EXPECT_EQ(pos.at("/x").col, 4);
  // Wide and long keys: 20000 members of 1 KB keys scan in linear time.
  std::string wide = "{";
  for (int i = 0; i < 20000; ++i)
    wide += (i ? ",\"" : "\"") + std::to_string(i) + std::string(1000, 'k') + "\": [1, 2]";
  wide += "}";
  auto t0 = std::chrono::steady_clock::now();
  JsonPositions big(wide, "w");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  EXPECT_EQ(big.at("/19999" + std::string(1000, 'k') + "/1").line, 1);
}

// Bytes of a safetensors file with header `h` and `data` bytes after it.
std::string st_bytes(const std::string& h, size_t data = 8) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((h.size() >> (8 * i)) & 0xff);
  return out + h + std::string(data, '\0');
}

TEST(SafeTensorsHardening, MalformedHeadersNameTheFileAndTheField) {
  struct Case {
    std::string header, want;
  };
  const Case cases[] = {
      {"[1, 2]", "[safetensors] ck: header: expected an object (got array)"},
      {R"({"w": {"dtype": 7, "shape": [2], "data_offsets": [0, 8]}})", "ck: tensor 'w' dtype:"},
      {R"({"w": {"dtype": "F99", "shape": [2], "data_offsets": [0, 8]}})",
       "unsupported dtype 'F99'"},
      {R"({"__metadata__": [1], "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
       "ck: __metadata__: expected an object"},
      {R"({"__metadata__": {"epoch": 3}})", "ck: __metadata__.epoch: expected a string"},
      {R"({"w": {"dtype": "F32", "shape": "2", "data_offsets": [0, 8]}})",
       "ck: tensor 'w' shape: expected an array"},
      {R"({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})",
       "ck: tensor 'w' shape: expected non-negative integer sizes (got -2)"},
      {R"({"w": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}})", "(got 2.5)"},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": "0-8"}})",
       "ck: tensor 'w' data_offsets: expected [begin, end]"},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, -8]}})", "data_offsets"},
      {R"({"w": {"dtype": "F32", "shape": [2]}})", "ck: tensor 'w': missing field 'data_offsets'"},
      {R"({"w": [1]})", "ck: tensor 'w': expected an object (got array)"},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
           "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
       "duplicate key \"w\""},
      {R"({"w": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 8]}})",
       "needs more bytes than the file's 8 data bytes"},
  };
  for (const Case& c : cases) {
    std::string e = error_of([&] { decode_safetensors(st_bytes(c.header), "ck"); });
    EXPECT_NE(e.find(c.want), std::string::npos) << c.header << "\n -> " << e;
  }
  std::string ok = R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  EXPECT_EQ(decode_safetensors(st_bytes(ok), "ck").at("w").shape(), Shape{2});
}

long max_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(SafeTensorsHardening, AHugeShapeIsRefusedBeforeAllocating) {
  fs::path d = fresh_dir("huge");
  std::string h =
      R"({"w": {"dtype": "F32", "shape": [750000000], "data_offsets": [0, 3000000000]}})";
  std::ofstream(d / "big.safetensors", std::ios::binary) << st_bytes(h, 64);
  long before = max_rss_kb();
  std::string e = error_of([&] { read_safetensors((d / "big.safetensors").string()); });
  EXPECT_NE(e.find("tensor 'w' shape: shape [750000000] needs more bytes than the file's 64"),
            std::string::npos)
      << e;
  EXPECT_LT(max_rss_kb() - before, 100 * 1024);  // it reached 2.9 GB before the check
}

TEST(AtomicWrite, APlantedSymlinkAtTheTempPathIsNotFollowed) {
  fs::path d = fresh_dir("symlink");
  std::ofstream(d / "victim") << "secret";
  fs::create_symlink(d / "victim", d / "config.json.tmp");
  write_file_atomic((d / "config.json").string(), "{}\n");
  EXPECT_EQ(slurp(d / "victim"), "secret");
  EXPECT_EQ(slurp(d / "config.json"), "{}\n");
  // The temp file is NAME.<pid>.<n>.tmp: nothing of it is left, and the planted link is untouched.
  EXPECT_EQ(fs::read_symlink(d / "config.json.tmp"), d / "victim");
  for (const auto& e : fs::directory_iterator(d))
    EXPECT_FALSE(is_atomic_temp_of(e.path().filename().string(), "config.json") &&
                 e.path().filename() != "config.json.tmp")
        << e.path();
  // The same for .npy outputs and checkpoints.
  fs::create_symlink(d / "victim", d / "result0.npy.tmp");
  write_npy((d / "result0.npy").string(), Tensor::scalar_f32(1.f));
  EXPECT_EQ(slurp(d / "victim"), "secret");
  EXPECT_EQ(read_npy((d / "result0.npy").string()).data<float>()[0], 1.f);
  fs::create_symlink(d / "victim", d / "last.safetensors.tmp");
  write_safetensors((d / "last.safetensors").string(), SafeTensors{});
  EXPECT_EQ(slurp(d / "victim"), "secret");
}

TEST(AtomicWrite, UnwritablePlacesAreNamedWithErrno) {
  fs::path d = fresh_dir("unwritable");
  std::ofstream(d / "afile") << "x";
  std::string e = error_of([&] { write_file_atomic((d / "afile" / "config.json").string(), "y"); });
  const std::string tmp = fmt::format("{}.{}.", (d / "afile" / "config.json").string(), getpid());
  EXPECT_NE(e.find("cannot create '" + tmp), std::string::npos) << e;
  EXPECT_NE(e.find(".tmp' (Not a directory)"), std::string::npos) << e;
  e = error_of([] { write_file_atomic("/proc/netspec_x", "y"); });
  EXPECT_NE(e.find(fmt::format("cannot create '/proc/netspec_x.{}.", getpid())), std::string::npos)
      << e;
}

TEST(RegularFiles, FifoDirectoryAndDeviceAreRefusedByNameWithoutBlocking) {
  fs::path d = fresh_dir("fifo");
  ASSERT_EQ(mkfifo((d / "pipe").c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { read_regular_file("x", (d / "pipe").string()); }).find("it is a FIFO"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_regular_file("x", d.string()); }).find("it is a directory"),
            std::string::npos);
  EXPECT_NE(error_of([] { MappedFile("st", "/dev/zero"); }).find("it is a device"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_safetensors(d.string()); }).find("it is a directory"),
            std::string::npos);
}

}  // namespace
}  // namespace netspec
