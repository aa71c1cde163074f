// Tokenizer for StableHLO/MLIR text, used by the parser. Tokens are produced on demand so the
// parser can switch to character-level scanning where MLIR's grammar needs it (the `2x3xf32`
// dimension lists inside tensor<...>). Comments (`// ...`) are skipped; errors throw ParseError.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace netspec::hlo {

enum class Tok {
  kEof,
  kPercentId,  // %name or %0 or %0#1 (text without the '%')
  kAtId,       // @name (text without '@'; quoted names are unescaped)
  kHashId,     // #name (text without '#', e.g. "stablehlo.dot", "loc3")
  kBangId,     // !name (e.g. "stablehlo.token")
  kCaretId,    // ^bb0
  kIdent,      // bare identifier: letters, digits, '_', '.', '$', '-' not allowed
  kInt,        // 12, -3, 0x7FC00000
  kFloat,      // 1.5, -2.0e+00
  kString,     // "..." (text is unescaped)
  kPunct,      // one of ( ) { } [ ] < > , : = * ? + - and "->" / "..."
};

struct Token {
  Tok kind = Tok::kEof;
  std::string text;
  Location loc;
  bool is(Tok k, std::string_view t) const { return kind == k && text == t; }
  bool punct(std::string_view t) const { return kind == Tok::kPunct && text == t; }
};

std::string_view tok_name(Tok k);

class Lexer {
 public:
  Lexer(std::string_view text, std::string filename, int first_line = 1);

  const Token& peek();
  Token next();
  const std::string& filename() const { return filename_; }
  [[noreturn]] void error(Location loc, const std::string& msg) const;

  // Character-level access for the dimension list of tensor<...>: returns the raw text up to
  // (not including) the next '>' or ',' at the current position, after skipping spaces.
  // Only valid when no token is buffered (call right after consuming '<').
  std::string scan_until_type_end();
  Location here() const { return {line_, col_}; }
  // Discards the buffered token and resumes character scanning at its start.
  void unpeek();
  struct State {
    size_t pos;
    int line, col;
  };
  State save() {
    unpeek();
    return {pos_, line_, col_};
  }
  void restore(State s) {
    has_peek_ = false;
    pos_ = s.pos;
    line_ = s.line;
    col_ = s.col;
  }

 private:
  void skip_space();
  Token lex();
  char cur() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  char at(size_t k) const { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; }
  void advance(size_t n = 1);

  std::string_view text_;
  std::string filename_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  bool has_peek_ = false;
  Token peeked_;
  size_t peek_pos_ = 0;
  int peek_line_ = 1, peek_col_ = 1;
};

}  // namespace netspec::hlo
