// Character-level text corpus: a UTF-8 file decoded to Unicode code points (invalid UTF-8 is an
// error with its byte offset), vocabulary = the sorted unique code points (id = rank), the last
// 10 % of tokens held out for validation. Examples are windows of T tokens: x = ids[s, s+T),
// y = ids[s+1, s+T+1) (the next token at every position). Training windows start at random
// offsets redrawn per epoch from (seed, epoch); validation windows are fixed and non-overlapping.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/dataset.h"

namespace netspec::data {

// Decodes UTF-8 (rejects overlong forms, surrogates, > U+10FFFF, truncated sequences);
// `where` names the source in the error: `[text] a.txt: invalid UTF-8 at byte 17 (...)`.
std::u32string decode_utf8(std::string_view s, const std::string& where);
std::string encode_utf8(std::u32string_view s);

struct Vocab {
  std::u32string chars;  // sorted unique code points; id i <-> chars[i]
  int64_t size() const { return static_cast<int64_t>(chars.size()); }
  // Characters not in the vocabulary are an error naming the first one.
  std::vector<int32_t> encode(std::string_view utf8) const;
  std::string decode(std::span<const int32_t> ids) const;
  int32_t id(char32_t c) const;  // -1 when absent
};

// JSON: {"kind": "char", "size": N, "code_points": [...], "chars": ["\n", "a", ...]}; load
// checks size and that the code points are sorted, unique and valid.
void save_vocab(const Vocab& v, const std::string& path);
Vocab load_vocab(const std::string& path);

struct TextCorpus {
  Vocab vocab;
  std::vector<int32_t> train, val;  // token ids; val = the last 10 % (at least 2 tokens)
};
TextCorpus load_text(const std::string& path);
// From an in-memory string (`where` names it in errors).
TextCorpus make_corpus(std::string_view utf8, const std::string& where);

// Windows of T tokens as x i32 [N, T], y i32 [N, T]. train: N = (len - 1) / T windows at
// uniform random starts in [0, len - T - 1], drawn from (seed, epoch). Validation: starts
// 0, T, 2T, ... while a window and its next token fit (the last (len - 1) % T tokens are not
// predicted); seed and epoch are ignored.
Dataset text_windows(const TextCorpus& c, bool train, int seq_len, uint64_t seed, int64_t epoch);

// Bits per character of a unigram model on the validation split: p(c) = (n_train(c) + 1) /
// (n_train + V) (add-one smoothed train frequencies), -mean log2 p over the validation tokens.
double unigram_bits_per_char(const TextCorpus& c);

}  // namespace netspec::data
