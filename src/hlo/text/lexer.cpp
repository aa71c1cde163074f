#include "hlo/text/lexer.h"

#include <fmt/format.h>

#include <cctype>

namespace netspec::hlo {
namespace {

bool is_id_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_id_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::string_view tok_name(Tok k) {
  switch (k) {
    case Tok::kEof: return "end of input";
    case Tok::kPercentId: return "SSA value";
    case Tok::kAtId: return "symbol";
    case Tok::kHashId: return "attribute alias";
    case Tok::kBangId: return "dialect type";
    case Tok::kCaretId: return "block label";
    case Tok::kIdent: return "identifier";
    case Tok::kInt: return "integer";
    case Tok::kFloat: return "float";
    case Tok::kString: return "string";
    case Tok::kPunct: return "punctuation";
  }
  return "token";
}

Lexer::Lexer(std::string_view text, std::string filename, int first_line)
    : text_(text), filename_(std::move(filename)), line_(first_line) {}

void Lexer::error(Location loc, const std::string& msg) const { throw ParseError(filename_, loc, msg); }

void Lexer::advance(size_t n) {
  for (size_t i = 0; i < n && pos_ < text_.size(); ++i) {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
}

void Lexer::skip_space() {
  for (;;) {
    char c = cur();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance();
    } else if (c == '/' && at(1) == '/') {
      while (pos_ < text_.size() && cur() != '\n') advance();
    } else {
      return;
    }
  }
}

const Token& Lexer::peek() {
  if (!has_peek_) {
    peek_pos_ = pos_;
    peek_line_ = line_;
    peek_col_ = col_;
    peeked_ = lex();
    has_peek_ = true;
  }
  return peeked_;
}

Token Lexer::next() {
  peek();
  has_peek_ = false;
  return std::move(peeked_);
}

void Lexer::unpeek() {
  if (!has_peek_) return;
  has_peek_ = false;
  pos_ = peek_pos_;
  line_ = peek_line_;
  col_ = peek_col_;
}

std::string Lexer::scan_until_type_end() {
  unpeek();
  skip_space();
  std::string s;
  while (pos_ < text_.size() && cur() != '>' && cur() != ',' && cur() != '\n') {
    if (cur() != ' ' && cur() != '\t') s += cur();
    advance();
  }
  return s;
}

Token Lexer::lex() {
  skip_space();
  Token t;
  t.loc = {line_, col_};
  if (pos_ >= text_.size()) return t;
  char c = cur();
  auto ident_tail = [&](std::string& out) {
    while (is_id_char(cur()) || cur() == '-') {
      // '-' is allowed inside %/@/# names only when followed by an id char (e.g. %foo-bar).
      if (cur() == '-' && !is_id_char(at(1))) break;
      out += cur();
      advance();
    }
  };
  if (c == '%' || c == '@' || c == '#' || c == '!' || c == '^') {
    advance();
    t.kind = c == '%' ? Tok::kPercentId
             : c == '@' ? Tok::kAtId
             : c == '#' ? Tok::kHashId
             : c == '!' ? Tok::kBangId
                        : Tok::kCaretId;
    if (c == '@' && cur() == '"') {  // @"quoted name"
      Token s = lex();
      if (s.kind != Tok::kString) error(t.loc, "malformed quoted symbol name");
      t.text = s.text;
      return t;
    }
    ident_tail(t.text);
    if (c == '%' && cur() == '#' && is_digit(at(1))) {  // %0#1
      t.text += '#';
      advance();
      while (is_digit(cur())) {
        t.text += cur();
        advance();
      }
    }
    if (t.text.empty()) error(t.loc, fmt::format("expected a name after '{}'", c));
    return t;
  }
  if (c == '"') {
    advance();
    t.kind = Tok::kString;
    for (;;) {
      if (pos_ >= text_.size() || cur() == '\n') error(t.loc, "unterminated string literal");
      char d = cur();
      advance();
      if (d == '"') break;
      if (d != '\\') {
        t.text += d;
        continue;
      }
      char e = cur();
      advance();
      if (e == 'n') t.text += '\n';
      else if (e == 't') t.text += '\t';
      else if (e == '"' || e == '\\') t.text += e;
      else if (std::isxdigit(static_cast<unsigned char>(e)) &&
               std::isxdigit(static_cast<unsigned char>(cur()))) {
        std::string hex{e, cur()};
        advance();
        t.text += static_cast<char>(std::stoi(hex, nullptr, 16));
      } else {
        error(t.loc, "unknown escape in string literal");
      }
    }
    return t;
  }
  bool neg = c == '-' && is_digit(at(1));
  if (is_digit(c) || neg) {
    if (neg) {
      t.text += '-';
      advance();
    }
    if (cur() == '0' && (at(1) == 'x' || at(1) == 'X') &&
        std::isxdigit(static_cast<unsigned char>(at(2)))) {
      t.text += "0x";
      advance(2);
      while (std::isxdigit(static_cast<unsigned char>(cur()))) {
        t.text += cur();
        advance();
      }
      t.kind = Tok::kInt;
      return t;
    }
    while (is_digit(cur())) {
      t.text += cur();
      advance();
    }
    t.kind = Tok::kInt;
    if (cur() == '.' && !(at(1) == '.')) {
      t.kind = Tok::kFloat;
      t.text += '.';
      advance();
      while (is_digit(cur())) {
        t.text += cur();
        advance();
      }
      if ((cur() == 'e' || cur() == 'E') &&
          (is_digit(at(1)) || ((at(1) == '+' || at(1) == '-') && is_digit(at(2))))) {
        t.text += cur();
        advance();
        if (cur() == '+' || cur() == '-') {
          t.text += cur();
          advance();
        }
        while (is_digit(cur())) {
          t.text += cur();
          advance();
        }
      }
    }
    return t;
  }
  if (is_id_start(c)) {
    t.kind = Tok::kIdent;
    while (is_id_char(cur())) {
      t.text += cur();
      advance();
    }
    return t;
  }
  t.kind = Tok::kPunct;
  if (c == '-' && at(1) == '>') {
    t.text = "->";
    advance(2);
    return t;
  }
  if (c == '.' && at(1) == '.' && at(2) == '.') {
    t.text = "...";
    advance(3);
    return t;
  }
  static constexpr std::string_view kPuncts = "(){}[]<>,:=*?+-|";
  if (kPuncts.find(c) == std::string_view::npos)
    error(t.loc, fmt::format("unexpected character '{}'", std::isprint(static_cast<unsigned char>(c))
                                                              ? std::string(1, c)
                                                              : fmt::format("\\x{:02x}", static_cast<unsigned char>(c))));
  t.text = std::string(1, c);
  advance();
  return t;
}

}  // namespace netspec::hlo
