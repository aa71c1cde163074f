// Character-level text (text.cpp): a UTF-8 file, i32 windows [N, T] of the net's context; the
// class names are the vocabulary's characters.
#include <memory>

#include "data/dataset_registry.h"
#include "data/text.h"

namespace netspec::data {
namespace {

Splits load_text_dataset(const LoadOptions& o) {
  auto c = std::make_shared<TextCorpus>(load_text(o.dir));
  Splits s;
  s.train = text_windows(*c, true, o.seq_len, o.seed, 0);
  s.test = text_windows(*c, false, o.seq_len, o.seed, 0);
  for (char32_t ch : c->vocab.chars) s.class_names.push_back(encode_utf8(std::u32string(1, ch)));
  s.text = std::move(c);
  if (o.limit > 0) s.train = take_first(s.train, o.limit);
  return s;
}

}  // namespace

NETSPEC_REGISTER_DATASET(text, .flag = "text", .listed_at = 140, .load = load_text_dataset,
                         .channels = 0, .norm = std::nullopt, .augment = std::nullopt,
                         .no_augment = "token windows cannot be cropped or flipped",
                         .classes_from = "the vocabulary's characters (UTF-8)",
                         .token_windows = true)

}  // namespace netspec::data
