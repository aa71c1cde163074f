#include "data/text.h"

#include <gtest/gtest.h>

#include <cmath>

#include "data/data_test_util.h"
#include "data/datasets.h"
#include "data/idx_fixture.h"
#include "data/loader.h"

namespace netspec::data {
namespace {

using test::error_of;
using test::tmpdir;

TEST(Text, Utf8DecodesAndRejectsInvalidBytesWithTheirOffset) {
  const std::string s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // a é € 😀
  std::u32string cps = decode_utf8(s, "s");
  EXPECT_EQ(cps, (std::u32string{U'a', 0xE9, 0x20AC, 0x1F600}));
  EXPECT_EQ(encode_utf8(cps), s);
  auto err = [](const std::string& bad) { return error_of([&] { decode_utf8(bad, "f.txt"); }); };
  EXPECT_NE(err("ab\xC3(").find("[text] f.txt: invalid UTF-8 at byte 3 (expected a continuation"),
            std::string::npos)
      << err("ab\xC3(");
  EXPECT_NE(err("xy\x80").find("invalid UTF-8 at byte 2 (lead byte 0x80)"), std::string::npos);
  EXPECT_NE(err("\xC0\xAF").find("at byte 0 (overlong"), std::string::npos);
  EXPECT_NE(err("ok\xED\xA0\x80").find("at byte 2 (U+D800 is not a scalar"), std::string::npos);
  EXPECT_NE(err("abc\xE2\x82").find("at byte 3 (sequence of 3 bytes cut by the end)"),
            std::string::npos);
}

TEST(Text, VocabularyIsSortedAndRoundTripsThroughJson) {
  std::string text = "héllo wörld, hello € world!\nzz\xF0\x9F\x98\x80 and more text here.";
  TextCorpus c = make_corpus(text, "mem");
  for (size_t i = 1; i < c.vocab.chars.size(); ++i)
    ASSERT_LT(c.vocab.chars[i - 1], c.vocab.chars[i]);
  EXPECT_EQ(c.vocab.chars.front(), U'\n');
  EXPECT_EQ(c.vocab.chars.back(), char32_t{0x1F600});
  EXPECT_EQ(c.vocab.id(U'€'), c.vocab.size() - 2);
  std::vector<int32_t> ids = c.vocab.encode(text);
  EXPECT_EQ(c.vocab.decode(ids), text);
  // The split is the encoded text: first 90 %, then the last 10 %.
  const auto n = static_cast<int64_t>(decode_utf8(text, "t").size());
  ASSERT_EQ(static_cast<int64_t>(c.val.size()), n / 10);
  std::vector<int32_t> joined = c.train;
  joined.insert(joined.end(), c.val.begin(), c.val.end());
  EXPECT_EQ(joined, ids);

  std::string d = tmpdir("vocab");
  save_vocab(c.vocab, d + "/vocab.json");
  Vocab v = load_vocab(d + "/vocab.json");
  EXPECT_EQ(v.chars, c.vocab.chars);
  EXPECT_EQ(v.decode(v.encode("wörld €😀")), "wörld €😀");
  std::string e = error_of([&] { v.encode("hey"); });  // 'y' never occurs
  EXPECT_NE(e.find("character U+0079 ('y') at position 2 is not in the vocabulary"),
            std::string::npos)
      << e;
  test::write_raw(d + "/bad.json", R"({"kind": "char", "code_points": [97, 65]})");
  e = error_of([&] { load_vocab(d + "/bad.json"); });
  EXPECT_NE(e.find("not sorted and unique at index 1"), std::string::npos) << e;
}

TEST(Text, WindowsAreNextTokenPairsRedrawnPerEpoch) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += static_cast<char>('a' + (i * 7 + i / 26) % 26);
  TextCorpus c = make_corpus(text, "mem");
  ASSERT_EQ(c.train.size(), 270u);
  const int T = 8;
  Dataset w = text_windows(c, true, T, 42, 0);
  ASSERT_EQ(w.x.shape(), (Shape{269 / T, T}));
  ASSERT_EQ(w.y.shape(), (Shape{269 / T, T}));
  for (int64_t i = 0; i < w.size(); ++i) {
    const int32_t* x = w.x.data<int32_t>() + i * T;
    const int32_t* y = w.y.data<int32_t>() + i * T;
    // Some start s has x = ids[s, s+T) and y = ids[s+1, s+T+1).
    bool found = false;
    for (size_t s = 0; s + T < c.train.size() && !found; ++s)
      found = std::equal(x, x + T, c.train.begin() + s) &&
              std::equal(y, y + T, c.train.begin() + s + 1);
    ASSERT_TRUE(found) << "window " << i;
  }
  Dataset again = text_windows(c, true, T, 42, 0), next = text_windows(c, true, T, 42, 1);
  EXPECT_EQ(std::memcmp(again.x.raw(), w.x.raw(), w.x.nbytes()), 0);
  EXPECT_NE(std::memcmp(next.x.raw(), w.x.raw(), w.x.nbytes()), 0);
  // Validation: fixed, non-overlapping, from the start of the split: 30 tokens -> 3 windows.
  Dataset v = text_windows(c, false, T, 1, 5);
  ASSERT_EQ(v.x.shape(), (Shape{3, T}));
  for (int64_t i = 0; i < 3; ++i)
    for (int t = 0; t < T; ++t) {
      EXPECT_EQ(v.x.data<int32_t>()[i * T + t], c.val[i * T + t]);
      EXPECT_EQ(v.y.data<int32_t>()[i * T + t], c.val[i * T + t + 1]);
    }
  std::string e = error_of([&] { text_windows(c, false, 30, 0, 0); });
  EXPECT_NE(e.find("validation split too short for one window (got 30 tokens"), std::string::npos)
      << e;
  // Windows batch through the Loader: i32 in, i32 out, labels [B, T].
  Loader ld(w, 4, true, 0);
  ld.start_epoch(0);
  Tensor bx, by;
  ld.batch(0, bx, by);
  EXPECT_EQ(bx.dtype(), DType::kI32);
  EXPECT_EQ(by.shape(), (Shape{4, T}));
}

TEST(Text, UnigramBitsPerCharacter) {
  // Train: 17 'a' + 1 'b'; validation "ab". p(a) = 18/20, p(b) = 2/20 (add-one, V = 2).
  TextCorpus c = make_corpus(std::string(17, 'a') + "b" + "ab", "mem");
  ASSERT_EQ(c.val.size(), 2u);
  EXPECT_NEAR(unigram_bits_per_char(c), -(std::log2(0.9) + std::log2(0.1)) / 2, 1e-12);
}

TEST(Text, LoadDatasetFromAFile) {
  std::string d = tmpdir("textfile");
  std::string body;
  for (int i = 0; i < 50; ++i) body += "the quick brown fox ";
  test::write_raw(d + "/corpus.txt", body);
  Splits s = load_dataset(DatasetKind::text, LoadOptions{.dir = d + "/corpus.txt", .seq_len = 16});
  ASSERT_TRUE(s.text);
  EXPECT_EQ(s.class_names.size(), static_cast<size_t>(s.text->vocab.size()));
  EXPECT_EQ(s.class_names[0], " ");
  EXPECT_EQ(s.train.x.shape(), (Shape{(900 - 1) / 16, 16}));
  EXPECT_EQ(s.test.x.shape(), (Shape{(100 - 1) / 16, 16}));
  test::write_raw(d + "/bad.txt", body + "\xFF" + body);
  std::string e = error_of(
      [&] { load_dataset(DatasetKind::text, LoadOptions{.dir = d + "/bad.txt", .seq_len = 16}); });
  EXPECT_EQ(e, "[text] " + d + "/bad.txt: invalid UTF-8 at byte 1000 (lead byte 0xff)");
  LoadOptions no_file;
  no_file.seq_len = 16;
  e = error_of([&] { load_dataset(DatasetKind::text, no_file); });
  EXPECT_NE(e.find("--data FILE"), std::string::npos) << e;
}

}  // namespace
}  // namespace netspec::data
