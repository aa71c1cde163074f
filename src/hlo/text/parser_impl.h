// Internal: the recursive-descent parser shared by parser.cpp (module, functions, generic ops,
// types), parser_attrs.cpp (attribute values, dense literals) and parser_ops.cpp (the custom
// pretty syntaxes of individual ops). Not a public header.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "hlo/builder.h"
#include "hlo/ir.h"
#include "hlo/text/lexer.h"
#include "hlo/text/parser.h"

namespace netspec::hlo {

class Parser {
 public:
  Parser(std::string_view text, const std::string& filename, int first_line);
  std::unique_ptr<Module> parse_module();

  // --- tokens ---
  const Token& peek() { return lex_.peek(); }
  Token next() { return lex_.next(); }
  [[noreturn]] void error(Location loc, const std::string& msg) const { lex_.error(loc, msg); }
  [[noreturn]] void error_here(const std::string& msg);
  bool accept(std::string_view punct);
  Token expect(std::string_view punct, std::string_view context);
  bool accept_kw(std::string_view ident);
  void expect_kw(std::string_view ident, std::string_view context);
  std::string expect_ident(std::string_view context);
  int64_t parse_int(std::string_view context);
  I64s parse_int_list(std::string_view context);  // [1, 2, 3]
  std::vector<bool> parse_bool_list(std::string_view context);  // [true, false] or [1, 0]
  void skip_balanced_value();  // skips one attribute value of any syntax
  void skip_location();        // skips `loc(...)` if present
  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, Location loc);
    ~DepthGuard() { --p.depth_; }
  };

  // --- types ---
  Type parse_type();
  std::vector<Type> parse_type_list();               // T, T, ...  (at least one)
  std::vector<Type> parse_result_types();            // T | (T, ...) | ()
  std::pair<std::vector<Type>, std::vector<Type>> parse_function_type();  // (T, ...) -> R

  // --- attributes (parser_attrs.cpp) ---
  // Returns nullopt for well-formed values of kinds the IR does not keep (dictionaries,
  // locations, aliases, unknown dialect attributes).
  std::optional<AttrValue> parse_attr_value();
  // `{name = value, ...}` into attrs; dialect-prefixed names (mhlo.*, jax.*) are dropped.
  void parse_attr_dict(Attrs& attrs, std::string_view close = "}");
  Tensor parse_dense_literal(const Type& type, Location loc);  // after `dense<`, up to `>`
  std::string parse_enum_value(std::string_view kind);          // `#stablehlo<kind VALUE>` tail

  // --- values ---
  Value* parse_operand();
  std::vector<Value*> parse_operand_list();  // possibly empty, comma separated
  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() { scopes_.pop_back(); }
  void define(const std::string& name, Value* v, Location loc);
  std::string parse_arg_def(Type* type);  // `%name: type` (with trailing attrs/loc skipped)

  // --- ops ---
  void parse_block_body(Block* block, std::string_view close = "}");
  void parse_op(Block* block);
  Op* create_op(Block* block, OpKind kind, std::vector<Value*> operands, Attrs attrs,
                std::vector<Type> result_types, std::vector<std::unique_ptr<Block>> regions,
                Location loc);
  Op* parse_generic_op(Block* block, OpKind kind, Location loc);
  // A region `{ [^bb0(%a: T, ...):] ops }`. When `args` is given the block takes those
  // named arguments (the custom forms declare them outside the braces).
  std::unique_ptr<Block> parse_region(
      const std::vector<std::pair<std::string, Type>>* args = nullptr);
  // parser_ops.cpp: the pretty syntax of `kind`, after the op name.
  Op* parse_custom_op(Block* block, OpKind kind, Location loc);

  Module* module_ = nullptr;

 private:
  struct FuncBody {
    Func* func;
    std::vector<std::string> arg_names;
    std::vector<Location> arg_locs;
    Lexer::State body;  // at the body's '{'
    bool generic;       // body is `({ ^bb0(...): ... })`
  };
  void parse_top_level(std::vector<FuncBody>& bodies, bool in_module);
  void parse_func_header(std::vector<FuncBody>& bodies);
  void parse_generic_func_header(std::vector<FuncBody>& bodies);
  // A generic-form `{key = value, ...}` (func.func / builtin.module properties or attributes):
  // on_key(key) reads or skips the value after `=`.
  void parse_props(std::string_view open, std::string_view close,
                   const std::function<void(const std::string& key)>& on_key);
  void parse_func_body(const FuncBody& fb);
  void skip_braces();  // skips a balanced `{...}` starting at '{'
  AttrValue parse_array_attr(Location loc);                // parser_attrs.cpp
  std::optional<AttrValue> parse_hash_attr(Location loc);  // parser_attrs.cpp

  Lexer lex_;
  int depth_ = 0;
  std::vector<std::unordered_map<std::string, std::vector<Value*>>> scopes_;
  // Function names defined so far: a redefinition is found in O(1), not by scanning the module
  // (Module::find scans for a name it has not indexed: quadratic over 100k functions).
  std::unordered_set<std::string> defined_;
  friend struct DepthGuard;
};

// Limits that keep hostile input from exhausting the stack or memory.
inline constexpr int kMaxParseDepth = 200;
inline constexpr int64_t kMaxDenseBytes = int64_t{1} << 30;
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 50;

}  // namespace netspec::hlo
