// Internal: the custom (pretty) syntaxes of StableHLO ops, each as a print/parse pair written
// side by side in its family's file (syntax_basic, syntax_shape, syntax_dot_conv,
// syntax_control), registered by one line each. custom_syntax(kind) finds the pair; ops without
// one use the generic form.
// Not a public header.
#pragma once
#include <array>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/text/parser_impl.h"
#include "hlo/text/printer_impl.h"

namespace netspec::hlo {

// An op read from its custom syntax: the parse side fills the fields, then calls done().
struct OpText {
  Parser& p;
  Block* block;
  OpKind kind;
  Location loc;
  Attrs attrs;
  std::vector<Value*> operands;
  std::vector<Type> types;
  std::vector<std::unique_ptr<Block>> regions;
  bool comma = false;  // read_operands ate a trailing comma

  Op* done();
  // Operands up to the first non-value; sets `comma` when one more comma was eaten.
  void read_operands();
  void need_comma(std::string_view what) const;  // errors unless `comma`
  void opt_attrs();                              // an optional `{...}` attribute dictionary
  void keyword_eq(std::string_view kw);          // `kw =`
  // `operands, kw =` (read_operands, need_comma(what), keyword_eq(kw)): an op whose first
  // attribute follows its operands.
  void operands_then(std::string_view kw, std::string_view what);
  // `: T` (operands and the result share T) or `: (T, ...) -> R`.
  void same_or_functional_type();
  void functional_type();  // `: (T, ...) -> R`
  // The usual tail `{attrs}? : type` (opt_attrs, same_or_functional_type), then done().
  Op* done_after_attrs_and_type();
  void check_operand_types(const std::vector<Type>& ins) const;
};

struct Syntax {
  // Writes the custom form after `%r = `; returns false (having written nothing) when the op
  // carries attributes the syntax cannot show, so that the generic form is used.
  bool (*print)(Printer& pr, const Op& op, int indent);
  // Reads the custom form after the op's name.
  Op* (*parse)(OpText& t);
};

// nullptr for ops that have only the generic form (if, case, sort, gather, ...).
const Syntax* custom_syntax(OpKind kind);

// Indexed by OpKind; a null print marks the generic form only. Each family file fills its ops.
struct SyntaxTable {
  std::array<Syntax, kNumOpKinds> by_kind{};
  void set(OpKind k, decltype(Syntax::print) print, decltype(Syntax::parse) parse) {
    by_kind[static_cast<size_t>(k)] = {print, parse};
  }
};
void register_basic_syntaxes(SyntaxTable& t);  // and the elementwise default
void register_shape_syntaxes(SyntaxTable& t);
void register_dot_conv_syntaxes(SyntaxTable& t);
void register_control_syntaxes(SyntaxTable& t);

// --- shared by the printers ---
bool only_attrs(const Op& op, std::initializer_list<std::string_view> known);
std::string same_or_functional(const Op& op);  // `T` when all types agree, else (..) -> R
// `name operands, kw = value : type`: the form OpText::operands_then reads.
void print_operands_then(Printer& pr, const Op& op, std::string_view kw, const std::string& value,
                         const std::string& type);

}  // namespace netspec::hlo
