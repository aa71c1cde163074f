// Hardening of the .pth / pickle / zip readers (issue 40): sizes from the file are checked, never
// wrapped; views and zip entries are validated before anything is allocated; values nest at most
// kMaxPickleDepth deep (no stack overflow); a dict of 200k keys is read in linear time and its
// refusal names a few entries; zip64 extra fields stay inside their extra area. Every reproducer
// file is built here from bytes (the python one-liners, translated).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.h"
#include "core/pickle.h"
#include "core/torch_pickle.h"
#include "core/zip_reader.h"
#include "tests/error_of.h"
#include "tests/core/zip_fixture.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;
using test::le;
using test::make_zip;

std::string write_temp(const std::string& name, const std::string& bytes) {
  const fs::path p = fs::temp_directory_path() / (name + std::to_string(getpid()));
  std::ofstream(p, std::ios::binary) << bytes;
  return p.string();
}

using netspec::test_util::error_of;

long max_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// The helpers: U(t) = BINUNICODE, I(n) = LONG1 of 8 bytes.
std::string U(const std::string& t) { return "X" + le(t.size(), 4) + t; }
std::string I(int64_t n) { return "\x8a\x08" + le(static_cast<uint64_t>(n), 8); }

// {'w': _rebuild_tensor_v2(storage '0' (FloatStorage, numel), offset, (size,), (stride,))} with
// `data` as the storage's bytes.
std::string pth(int64_t numel, int64_t size, int64_t stride, const std::string& data) {
  const std::string pkl = "\x80\x02}" + U("w") + "ctorch._utils\n_rebuild_tensor_v2\n((" +
                          U("storage") + "ctorch\nFloatStorage\n" + U("0") + U("cpu") + I(numel) +
                          "tQ" + I(0) + "(" + I(size) + "t(" + I(stride) + "ttRs.";
  return make_zip({{"a/data.pkl", pkl}, {"a/data/0", data}});
}

// Item 1: numel 2^62+1 times 4 bytes wrapped to 4, so a 4-byte storage passed the size check and
// a 2^24-element view copied (or segfaulted on) heap memory past it.
TEST(TorchHardening, AStorageWhoseByteCountOverflowsIsRefused) {
  const std::string p =
      write_temp("netspec_pth_wrap", pth((int64_t{1} << 62) + 1, 1 << 24, 1, std::string(4, 0)));
  const std::string e = error_of([&] { read_weight_file(p); });
  EXPECT_NE(e.find("storage 0 holds 4 bytes (expected 4611686018427387905 x 4 bytes)"),
            std::string::npos)
      << e;
  const std::string neg = write_temp("netspec_pth_neg", pth(-1, 1, 1, std::string(4, 0)));
  EXPECT_NE(error_of([&] { read_weight_file(neg); }).find("storage 0 holds 4 bytes"),
            std::string::npos);
  fs::remove(p);
  fs::remove(neg);
}

// Item 10: a view of 2^28 floats of a 1-float storage allocated (and zeroed) 1 GiB before the
// bounds check refused it; a stride-0 view of more than 2^24 elements is refused too.
TEST(TorchHardening, AViewPastItsStorageIsRefusedBeforeAllocating) {
  const std::string p = write_temp("netspec_pth_view", pth(1, 1 << 28, 1, std::string(4, 0)));
  const long before = max_rss_kb();
  const std::string e = error_of([&] { read_weight_file(p); });
  EXPECT_NE(e.find("tensor reads element 268435455 of a storage of 1"), std::string::npos) << e;
  EXPECT_LT(max_rss_kb() - before, 100 * 1024);
  const std::string b = write_temp("netspec_pth_bcast", pth(1, 1 << 28, 0, std::string(4, 0)));
  EXPECT_NE(error_of([&] {
              read_weight_file(b);
            }).find("a view of 268435456 elements of a storage of 1 (stride-0 views larger"),
            std::string::npos);
  EXPECT_LT(max_rss_kb() - before, 100 * 1024);
  // A small broadcast (HF's position_ids are such views) is still read.
  const std::string ok = write_temp("netspec_pth_small", pth(1, 3, 0, le(0x40400000, 4)));
  TorchTensors t = read_weight_file(ok);
  ASSERT_EQ(t.tensors.size(), 1u);
  ASSERT_EQ(t.tensors[0].second.shape(), Shape{3});
  EXPECT_EQ(t.tensors[0].second.data<float>()[2], 3.f);
  for (const auto& f : {p, b, ok}) fs::remove(f);
}

// Item 10: a deflated entry of ~1 MB declaring 1 GB was zero-filled to 1 GB before inflate found
// the stream short; the output now grows only with the bytes inflate produces.
TEST(ZipHardening, AnEntryClaimingHugeSizeIsNotAllocatedUpFront) {
  std::string noise(1 << 20, '\0');
  std::mt19937 rng(7);
  for (char& c : noise) c = static_cast<char>(rng());
  test::ZipFile f{"a/x", noise, true, int64_t{1} << 30};
  const std::string p = write_temp("netspec_zip_claim", make_zip({f}));
  ZipReader z(p);
  const long before = max_rss_kb();
  const std::string e = error_of([&] { z.read("a/x"); });
  EXPECT_NE(e.find("corrupt deflate data (zlib code 1, got 1048576 bytes, expected 1073741824)"),
            std::string::npos)
      << e;
  EXPECT_LT(max_rss_kb() - before, 100 * 1024);
  // A stream longer than declared is refused too (it stops one byte past the claim).
  test::ZipFile longer{"a/y", std::string(5000, 'z'), true, 4000};
  const std::string q = write_temp("netspec_zip_long", make_zip({longer}));
  EXPECT_NE(error_of([&] { ZipReader(q).read("a/y"); }).find("got 4001 bytes, expected 4000"),
            std::string::npos);
  fs::remove(p);
  fs::remove(q);
}

// Item 16: the zip64 extra field (id 1, 24 bytes declared) was read by its own length even when
// the entry's extra area holds 8 bytes of it: it read whatever followed the extra area.
TEST(ZipHardening, AZip64ExtraFieldLongerThanItsExtraAreaIsRefused) {
  std::string zip = make_zip({{"a/x", "payload!"}}, true);
  const size_t cd = zip.find(le(0x02014b50, 4));
  ASSERT_NE(cd, std::string::npos);
  ASSERT_EQ(zip.substr(cd + 30, 2), le(28, 2));  // extra area: 4-byte header + 24 bytes
  zip.replace(cd + 30, 2, le(12, 2));            // now 12: the field's 24 bytes overrun it
  const std::string p = write_temp("netspec_zip_extra", zip);
  const std::string e = error_of([&] { ZipReader z(p); });
  EXPECT_NE(e.find("central directory entry 0 has an extra field running past its extra area "
                   "(got 24 bytes, 8 left)"),
            std::string::npos)
      << e;
  fs::remove(p);
}

// Item 10 (by the same cause): two directory records pointing at one entry's bytes let a small
// archive inflate one stream once per record; entries may not overlap.
TEST(ZipHardening, OverlappingEntriesAreRefused) {
  std::string zip = make_zip({{"a/x", "payload one"}, {"a/y", "payload two"}});
  const size_t cd1 = zip.find(le(0x02014b50, 4));
  const size_t cd2 = zip.find(le(0x02014b50, 4), cd1 + 4);
  ASSERT_NE(cd2, std::string::npos);
  zip.replace(cd2 + 42, 4, le(0, 4));  // a/y's local header offset: a/x's
  const std::string p = write_temp("netspec_zip_overlap", zip);
  EXPECT_EQ(error_of([&] { ZipReader z(p); }),
            "[zip] " + p + ": entries 'a/x' and 'a/y' overlap (bytes 0..41 and from 0)");
  fs::remove(p);
}

// Item 3: 200k nested lists (2 bytes each) built a value 200k deep whose destructor overflowed
// the stack. Depth 1000 is read; 1001 is refused naming the limit.
TEST(PickleHardening, DeeplyNestedValuesAreRefusedNotRecursedInto) {
  auto nested = [](int n) {
    return "\x80\x02" + std::string(n, ']') + std::string(n - 1, 'a') + ".";
  };
  const std::string e = error_of([&] { unpickle(nested(200000), "d.pkl", {}); });
  EXPECT_NE(e.find("d.pkl: values nest deeper than 1000 levels"), std::string::npos) << e;
  PyRef v = unpickle(nested(kMaxPickleDepth), "ok.pkl", {});
  int depth = 1;
  for (PyValue* x = v.get(); !x->items.empty(); x = x->items[0].get()) ++depth;
  EXPECT_EQ(depth, kMaxPickleDepth);
  EXPECT_NE(error_of([&] {
              unpickle(nested(kMaxPickleDepth + 1), "d.pkl", {});
            }).find("values nest deeper than 1000 levels"),
            std::string::npos);
  // The whole file the issue gave, through the .pth reader.
  const std::string p = write_temp("netspec_deep_pth", make_zip({{"a/data.pkl", nested(200000)}}));
  EXPECT_NE(error_of([&] { read_weight_file(p); }).find("values nest deeper than 1000"),
            std::string::npos);
  fs::remove(p);
}

// Item 3: a list appended into itself, or into a list it already sits in, is a cycle: refused
// (recorded depths would otherwise no longer bound the real nesting).
TEST(PickleHardening, CyclesAreRefused) {
  // l = []; memo 0; l.append(l)
  EXPECT_NE(error_of([] {
              unpickle(
                  "\x80\x02]q\x00h\x00"
                  "a."s,
                  "c.pkl", {});
            }).find("a list that contains itself"),
            std::string::npos);
  // a = []; b = []; a.append(b); b.append(a)
  EXPECT_NE(error_of([] {
              unpickle(
                  "\x80\x02]q\x00]q\x01"
                  "a0h\x01h\x00"
                  "a."s,
                  "c.pkl", {});
            }).find("grows deeper after being placed in another container"),
            std::string::npos);
}

// Item 3: _rebuild_from_type_v2(func, subclass, args, state) nested 300k deep recursed per level.
// Nesting is capped by the value depth; three levels still rebuild the tensor inside.
TEST(TorchHardening, RebuildFromTypeV2NestingIsUnwrappedWithoutRecursion) {
  const std::string from = "ctorch._tensor\n_rebuild_from_type_v2\n";
  auto wrapped = [&](int levels) {
    std::string inner = "(ctorch._utils\n_rebuild_tensor_v2\nN((" + U("storage") +
                        "ctorch\nFloatStorage\n" + U("0") + U("cpu") + I(1) + "tQ" + I(0) + "(" +
                        I(1) + "t(" + I(1) + "t" + "tNt";
    std::string open, close;
    for (int i = 1; i < levels; ++i) open += "(" + from + "N", close += "Nt";
    return "\x80\x02}" + U("w") + from + open + inner + close + "Rs.";
  };
  const std::string ok = write_temp(
      "netspec_from_type", make_zip({{"a/data.pkl", wrapped(3)}, {"a/data/0", le(0x40a00000, 4)}}));
  TorchTensors t = read_weight_file(ok);
  ASSERT_EQ(t.tensors.size(), 1u);
  EXPECT_EQ(t.tensors[0].second.data<float>()[0], 5.f);
  const std::string deep =
      write_temp("netspec_from_type_deep",
                 make_zip({{"a/data.pkl", wrapped(300000)}, {"a/data/0", le(0x40a00000, 4)}}));
  EXPECT_NE(error_of([&] { read_weight_file(deep); }).find("values nest deeper than 1000"),
            std::string::npos);
  fs::remove(ok);
  fs::remove(deep);
}

// Item 11: SETITEMS scanned the dict per key (200k keys: 172 s), and the refusal listed every
// entry. Now a key index: linear time, a key set twice keeps its first position, a short error.
TEST(PickleHardening, ADictOf200kKeysIsLinearAndItsRefusalIsShort) {
  constexpr int kKeys = 200000;
  std::string pkl = "\x80\x02}(";
  for (int i = 0; i < kKeys; ++i) pkl += U("k" + std::to_string(i)) + "K\x01";
  pkl += "u(" + U("k5") + "K\x07u.";  // k5 set again
  const auto t0 = std::chrono::steady_clock::now();
  PyRef d = unpickle(pkl, "big.pkl", {});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(d->entries.size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(d->entries[5].first->s, "k5");
  EXPECT_EQ(d->entries[5].second->i, 7);
  EXPECT_EQ(d->entries[kKeys - 1].first->s, "k199999");
  EXPECT_LT(s, 20.0);  // quadratic took minutes; linear takes well under a second
  const std::string p = write_temp("netspec_dict_pth", make_zip({{"a/data.pkl", pkl}}));
  const std::string e = error_of([&] { read_weight_file(p); });
  EXPECT_NE(e.find("no tensors in the top-level dict (200000 entries: k0 (int), k1 (int)"),
            std::string::npos)
      << e.substr(0, 300);
  EXPECT_NE(e.find("k7 (int), ... and 199992 more)"), std::string::npos) << e.substr(0, 300);
  EXPECT_LT(e.size(), 400u);
  fs::remove(p);
}

}  // namespace
}  // namespace netspec
