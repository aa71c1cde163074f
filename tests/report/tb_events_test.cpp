// TensorBoard event files (report/tb_events.h): CRC-32C against its published check values, a
// record's bytes, an Event's protobuf bytes by hand, reading records back (a torn tail), the
// resume cut; the console tee behind train.log (report/console_log.h); the progress line after
// a mid-epoch resume. The files are read by TensorBoard itself in tests/train/tensorboard_test.
#include "report/tb_events.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/file_check.h"
#include "report/console_log.h"
#include "report/progress.h"

namespace netspec::report {
namespace {

namespace fs = std::filesystem;

std::string bytes(std::initializer_list<int> v) {
  std::string s;
  for (int b : v) s += static_cast<char>(b);
  return s;
}

std::string tmpdir(const std::string& name) {
  auto p = fs::temp_directory_path() / ("netspec_tb_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

std::vector<fs::path> event_files(const std::string& dir) {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(dir))
    if (is_event_file_name(e.path().filename().string())) v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

TEST(TbEvents, Crc32cMatchesPublishedVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);            // the CRC catalogue's check value
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720 B.4: 32 zero bytes
  EXPECT_EQ(crc32c(""), 0u);
  // Masked: rotate right 15, add 0xA282EAD8 (mod 2^32).
  EXPECT_EQ(masked_crc32c("123456789"), 0xC78AB0E5u);
  EXPECT_EQ(masked_crc32c(""), 0xA282EAD8u);
}

TEST(TbEvents, RecordFramesLengthAndTwoMaskedCrcs) {
  const std::string r = tf_record("abc");
  ASSERT_EQ(r.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(r.substr(0, 8), bytes({3, 0, 0, 0, 0, 0, 0, 0}));
  uint32_t c1 = 0, c2 = 0;
  std::memcpy(&c1, r.data() + 8, 4);
  std::memcpy(&c2, r.data() + 15, 4);
  EXPECT_EQ(c1, masked_crc32c(r.substr(0, 8)));
  EXPECT_EQ(r.substr(12, 3), "abc");
  EXPECT_EQ(c2, masked_crc32c("abc"));
  // The empty payload: 8 zero length bytes, whose masked CRC is 0x07980329.
  EXPECT_EQ(tf_record(""), std::string(8, '\0') + bytes({0x29, 0x03, 0x98, 0x07}) +
                               bytes({0xD8, 0xEA, 0x82, 0xA2}));
}

TEST(TbEvents, ScalarEventBytesAreTheProtobufByHand) {
  // Event{wall_time: 1.5 (field 1, fixed64), step: 3 (field 2, varint), summary (field 5):
  //   Summary{value (field 1): Value{tag: "a" (field 1), simple_value: 0.5f (field 2, fixed32)}}}
  const std::string want = bytes({0x09, 0,    0, 0,    0, 0,   0,    0xF8, 0x3F, 0x10, 0x03, 0x2A,
                                  10,   0x0A, 8, 0x0A, 1, 'a', 0x15, 0,    0,    0,    0x3F});
  EXPECT_EQ(event_scalars(1.5, 3, {{"a", 0.5}}), want);
  EXPECT_EQ(event_step(want), 3);
  // A step past 127 takes two varint bytes: 300 = 0xAC 0x02.
  const std::string e = event_scalars(0, 300, {{"loss", 1}});
  EXPECT_EQ(e.substr(9, 3), bytes({0x10, 0xAC, 0x02}));
  EXPECT_EQ(event_step(e), 300);
  // file_version (field 3) at step 0 (not written, the protobuf default).
  EXPECT_EQ(event_file_version(0).substr(9),
            "\x1a\x0d"
            "brain.Event:2");
  EXPECT_EQ(event_step(event_file_version(0)), 0);
  const std::string t = event_text(0, 7, "config", "hi");
  EXPECT_EQ(event_step(t), 7);
  EXPECT_NE(t.find("text"), std::string::npos);
}

TEST(TbEvents, ReadsRecordsBackAndStopsAtATornTail) {
  const std::string a = tf_record("one"), b = tf_record("two");
  bool bad = true;
  auto r = read_tf_records(a + b, &bad);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1], "two");
  EXPECT_FALSE(bad);
  r = read_tf_records(a + b.substr(0, b.size() - 2), &bad);  // killed mid-write
  EXPECT_EQ(r.size(), 1u);
  EXPECT_FALSE(bad);
  std::string flipped = a + b;
  flipped[13] ^= 1;  // a payload byte of the first record: its CRC no longer checks
  r = read_tf_records(flipped, &bad);
  EXPECT_TRUE(r.empty());
  EXPECT_TRUE(bad);
}

TEST(TbEvents, ResumeCutKeepsStepsThroughTheCheckpointAndNewFilesSortLast) {
  const std::string dir = tmpdir("cut");
  {
    EventWriter w(dir);
    for (int s = 1; s <= 6; ++s) w.scalars(s, {{"loss", 1.0 / s}});
  }
  auto files = event_files(dir);
  ASSERT_EQ(files.size(), 1u);
  const std::string before = slurp(files[0]);
  fs::path torn = files[0];
  append_file(torn.string(), tf_record(event_scalars(0, 7, {{"loss", 7}})).substr(0, 10));
  truncate_event_files(dir, 4);
  auto recs = read_tf_records(slurp(files[0]));
  ASSERT_EQ(recs.size(), 5u);  // file_version + steps 1..4
  for (size_t i = 1; i < recs.size(); ++i) EXPECT_EQ(event_step(recs[i]), int64_t(i));
  truncate_event_files(dir, 4);  // nothing more to drop: left as it is
  EXPECT_EQ(read_tf_records(slurp(files[0])).size(), 5u);
  EventWriter w2(dir);
  files = event_files(dir);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].string(), w2.path());  // sorts after the earlier file
  // A file whose records do not check (not this writer's) is never rewritten.
  const fs::path foreign = fs::path(dir) / "events.out.tfevents.0.other";
  std::string junk = before;
  junk[20] ^= 1;
  std::ofstream(foreign, std::ios::binary) << junk;
  truncate_event_files(dir, 0);
  EXPECT_EQ(slurp(foreign), junk);
}

TEST(ConsoleLog, FileGetsTheLinesAsATerminalShowsThem) {
  const std::string dir = tmpdir("console");
  const std::string path = dir + "/train.log";
  std::ostringstream console;
  {
    ConsoleLog log(console);
    log.stream() << "run dir: x\n";  // before the file is known: kept
    log.attach(path, "----- resumed -----");
    log.stream() << "\rbar 1/3\x1b[K" << std::flush << "\rbar 2/3\x1b[K\r\x1b[K"
                 << "epoch 1/1 loss 0.5\n";
  }
  EXPECT_EQ(slurp(path), "run dir: x\nepoch 1/1 loss 0.5\n");
  EXPECT_NE(console.str().find("\rbar 2/3\x1b[K"), std::string::npos);  // the console: as sent
  {
    ConsoleLog log(console);
    log.attach(path, "----- resumed -----");
    log.stream() << "epoch 2/2\n";
  }
  EXPECT_EQ(slurp(path), "run dir: x\nepoch 1/1 loss 0.5\n----- resumed -----\nepoch 2/2\n");
}

TEST(Progress, ResumedMidEpochCountsFromTheResumePointAndShowsLr) {
  // Resumed at step 45 of 100: 10 more steps in 2 s at 32 samples each: 5 steps/s, ETA 9 s.
  EXPECT_EQ(format_progress("epoch 1/2", 55, 100, 2.0, 0.25, 32, 0, 45, 0.001),
            "epoch 1/2 55/100 loss 0.2500 lr 0.001 160 samples/s ETA 0:09");
  std::ostringstream plain;
  Progress p(plain, false, "epoch 1/1", 100, 4, 0.0, 45);
  p.update(46, 0.5, 4, 0.1);
  p.update(47, 0.5, 8, 0.1);
  EXPECT_EQ(plain.str().rfind("epoch 1/1 46/100 loss 0.5000 lr 0.1 ", 0), 0u) << plain.str();
  EXPECT_NE(plain.str().find("\nepoch 1/1 47/100 "), std::string::npos) << plain.str();
}

}  // namespace
}  // namespace netspec::report
