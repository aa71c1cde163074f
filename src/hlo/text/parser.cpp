// Module, function and generic-op parsing, plus types and SSA value bookkeeping. Functions are
// parsed in two passes (all headers, then bodies) so func.call may name a function defined later.
#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "core/file_check.h"
#include "hlo/text/parser_impl.h"
#include "hlo/verify.h"

namespace netspec::hlo {

Parser::Parser(std::string_view text, const std::string& filename, int first_line)
    : lex_(text, filename, first_line) {}

Parser::DepthGuard::DepthGuard(Parser& parser, Location loc) : p(parser) {
  if (++p.depth_ > kMaxParseDepth) {
    --p.depth_;
    p.error(loc, fmt::format("nesting deeper than {} levels", kMaxParseDepth));
  }
}

void Parser::error_here(const std::string& msg) { error(peek().loc, msg); }

static std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::kEof: return "end of input";
    case Tok::kPercentId: return "'%" + t.text + "'";
    case Tok::kAtId: return "'@" + t.text + "'";
    case Tok::kHashId: return "'#" + t.text + "'";
    case Tok::kBangId: return "'!" + t.text + "'";
    case Tok::kCaretId: return "'^" + t.text + "'";
    case Tok::kString: return "string \"" + t.text.substr(0, 40) + "\"";
    default: return "'" + t.text + "'";
  }
}

bool Parser::accept(std::string_view punct) {
  if (!peek().punct(punct)) return false;
  next();
  return true;
}

Token Parser::expect(std::string_view punct, std::string_view context) {
  if (!peek().punct(punct))
    error_here(fmt::format("expected '{}' {} (got {})", punct, context, describe(peek())));
  return next();
}

bool Parser::accept_kw(std::string_view ident) {
  if (!peek().is(Tok::kIdent, ident)) return false;
  next();
  return true;
}

void Parser::expect_kw(std::string_view ident, std::string_view context) {
  if (!accept_kw(ident))
    error_here(fmt::format("expected '{}' {} (got {})", ident, context, describe(peek())));
}

std::string Parser::expect_ident(std::string_view context) {
  if (peek().kind != Tok::kIdent)
    error_here(fmt::format("expected {} (got {})", context, describe(peek())));
  return next().text;
}

int64_t Parser::parse_int(std::string_view context) {
  const Token& t = peek();
  if (t.kind != Tok::kInt) error_here(fmt::format("expected an integer {} (got {})", context, describe(t)));
  Token tok = next();
  std::string_view s = tok.text;
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  uint64_t u = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), u, base);
  if (ec != std::errc() || p != s.data() + s.size() || (neg && u > (uint64_t{1} << 63)) ||
      (!neg && base == 10 && u > static_cast<uint64_t>(INT64_MAX)))
    error(tok.loc, fmt::format("integer {} out of range", tok.text));
  // Hex spellings are bit patterns (0xFFFFFFFFFFFFFFFF == -1).
  return neg ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
}

I64s Parser::parse_int_list(std::string_view context) {
  expect("[", context);
  I64s v;
  if (accept("]")) return v;
  do {
    if (v.size() > (1u << 24)) error_here("list too long");
    v.push_back(parse_int(context));
  } while (accept(","));
  expect("]", context);
  return v;
}

std::vector<bool> Parser::parse_bool_list(std::string_view context) {
  expect("[", context);
  std::vector<bool> v;
  if (accept("]")) return v;
  do {
    if (accept_kw("true")) v.push_back(true);
    else if (accept_kw("false")) v.push_back(false);
    else v.push_back(parse_int(context) != 0);
  } while (accept(","));
  expect("]", context);
  return v;
}

void Parser::skip_balanced_value() {
  int depth = 0;
  Location start = peek().loc;
  for (;;) {
    const Token& t = peek();
    if (t.kind == Tok::kEof) error(start, "unterminated attribute value");
    if (t.kind == Tok::kPunct) {
      if (t.text == "(" || t.text == "[" || t.text == "{" || t.text == "<") {
        ++depth;
        if (depth > kMaxParseDepth) error(t.loc, "nesting too deep");
      } else if (t.text == ")" || t.text == "]" || t.text == "}" || t.text == ">") {
        if (depth == 0) return;
        --depth;
      } else if (t.text == "," && depth == 0) {
        return;
      }
    }
    next();
  }
}

void Parser::skip_location() {
  if (!peek().is(Tok::kIdent, "loc")) return;
  next();
  expect("(", "after 'loc'");
  skip_balanced_value();
  expect(")", "closing 'loc('");
}

// ---------------------------------------------------------------- types

Type Parser::parse_type() {
  DepthGuard g(*this, peek().loc);
  Token t = next();
  if (t.is(Tok::kIdent, "tensor")) {
    expect("<", "after 'tensor'");
    Location loc = lex_.here();
    std::string body = lex_.scan_until_type_end();
    if (peek().punct(",")) error(peek().loc, "tensor encodings are not supported");
    expect(">", "closing tensor type");
    Shape shape;
    size_t start = 0;
    for (;;) {
      size_t x = body.find('x', start);
      std::string_view part = std::string_view(body).substr(start, x == std::string::npos ? std::string::npos : x - start);
      bool is_dim = !part.empty() && std::isdigit(static_cast<unsigned char>(part[0]));
      if (!is_dim || x == std::string::npos) {
        std::string_view rest = std::string_view(body).substr(start);
        auto dt = dtype_from_name(rest);
        if (!dt) {
          if (!rest.empty() && (rest[0] == '?' || rest[0] == '*'))
            error(loc, "dynamic shapes are not supported");
          if (!rest.empty() && rest[0] == '-')
            error(loc, fmt::format("negative dimension in tensor<{}> (expected sizes >= 0)", body));
          error(loc, fmt::format("unknown element type '{}' in tensor<{}>", rest, body));
        }
        int64_t n = 1;
        for (int64_t d : shape) {
          if (d != 0 && n > kMaxTensorElements / d)
            error(loc, fmt::format("tensor<{}> has too many elements", body));
          n *= d;
        }
        return Type::tensor(*dt, std::move(shape));
      }
      int64_t d = 0;
      auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
      if (ec != std::errc() || p != part.data() + part.size() || d > kMaxTensorElements)
        error(loc, fmt::format("bad dimension '{}' in tensor<{}>", part, body));
      shape.push_back(d);
      start = x + 1;
    }
  }
  if (t.is(Tok::kIdent, "tuple")) {
    expect("<", "after 'tuple'");
    std::vector<Type> elems;
    if (!accept(">")) {
      elems = parse_type_list();
      expect(">", "closing tuple type");
    }
    return Type::tuple(std::move(elems));
  }
  if (t.is(Tok::kBangId, "stablehlo.token")) return Type::token();
  error(t.loc, fmt::format("expected a type (got {})", describe(t)));
}

std::vector<Type> Parser::parse_type_list() {
  std::vector<Type> ts;
  do ts.push_back(parse_type());
  while (accept(","));
  return ts;
}

std::vector<Type> Parser::parse_result_types() {
  if (!accept("(")) return {parse_type()};
  std::vector<Type> ts;
  if (accept(")")) return ts;
  ts = parse_type_list();
  expect(")", "closing result types");
  return ts;
}

std::pair<std::vector<Type>, std::vector<Type>> Parser::parse_function_type() {
  expect("(", "opening a function type");
  std::vector<Type> ins;
  if (!accept(")")) {
    ins = parse_type_list();
    expect(")", "closing operand types");
  }
  expect("->", "in a function type");
  return {std::move(ins), parse_result_types()};
}

// ---------------------------------------------------------------- values

void Parser::define(const std::string& name, Value* v, Location loc) {
  auto& scope = scopes_.back();
  auto& group = scope[name];
  if (!group.empty()) error(loc, fmt::format("redefinition of SSA value '%{}'", name));
  group.push_back(v);
}

Value* Parser::parse_operand() {
  const Token& t = peek();
  if (t.kind != Tok::kPercentId) error_here(fmt::format("expected an SSA value (got {})", describe(t)));
  Token tok = next();
  std::string name = tok.text;
  size_t index = 0;
  if (size_t h = name.find('#'); h != std::string::npos) {
    auto [p, ec] = std::from_chars(name.data() + h + 1, name.data() + name.size(), index);
    if (ec != std::errc()) error(tok.loc, fmt::format("bad result index in '%{}'", name));
    name.resize(h);
  }
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f == it->end()) continue;
    if (index >= f->second.size())
      error(tok.loc, fmt::format("'%{}' has {} results (got index {})", name, f->second.size(), index));
    return f->second[index];
  }
  error(tok.loc, fmt::format("use of undefined value '%{}'", tok.text));
}

std::vector<Value*> Parser::parse_operand_list() {
  std::vector<Value*> vs;
  if (peek().kind != Tok::kPercentId) return vs;
  do vs.push_back(parse_operand());
  while (accept(","));
  return vs;
}

std::string Parser::parse_arg_def(Type* type) {
  const Token& t = peek();
  if (t.kind != Tok::kPercentId || t.text.find('#') != std::string::npos)
    error_here(fmt::format("expected an argument name (got {})", describe(t)));
  std::string name = next().text;
  expect(":", "after an argument name");
  *type = parse_type();
  if (peek().punct("{")) {  // argument attributes: kept out of the IR
    Attrs ignored;
    parse_attr_dict(ignored);
  }
  skip_location();
  return name;
}

// ---------------------------------------------------------------- ops

Op* Parser::create_op(Block* block, OpKind kind, std::vector<Value*> operands, Attrs attrs,
                      std::vector<Type> result_types, std::vector<std::unique_ptr<Block>> regions,
                      Location loc) {
  if (kind == OpKind::kReturn && block->parent_func) kind = OpKind::kFuncReturn;
  Builder b(block);
  b.set_location(loc);
  Op* op = nullptr;
  try {
    op = b.create(kind, std::move(operands), std::move(attrs), std::move(result_types), std::move(regions));
  } catch (const ParseError&) {
    throw;
  } catch (const std::exception& e) {
    error(loc, e.what());
  }
  op->loc = loc;
  for (auto& r : op->regions) r->parent_op = op;
  return op;
}

std::unique_ptr<Block> Parser::parse_region(const std::vector<std::pair<std::string, Type>>* args) {
  DepthGuard g(*this, peek().loc);
  expect("{", "opening a region");
  auto block = std::make_unique<Block>();
  push_scope();
  if (args) {
    for (const auto& [name, type] : *args) define(name, block->add_arg(type), peek().loc);
  }
  if (peek().kind == Tok::kCaretId) {
    Location loc = next().loc;
    if (args) error(loc, "this region's arguments are declared before it");
    if (accept("(")) {
      if (!accept(")")) {
        do {
          Location aloc = peek().loc;
          Type t;
          std::string name = parse_arg_def(&t);
          define(name, block->add_arg(t), aloc);
        } while (accept(","));
        expect(")", "closing block arguments");
      }
    }
    expect(":", "after a block label");
  }
  parse_block_body(block.get());
  pop_scope();
  return block;
}

void Parser::parse_block_body(Block* block, std::string_view close) {
  while (!peek().punct(close)) {
    if (peek().kind == Tok::kEof) error_here(fmt::format("expected '{}' before end of input", close));
    if (peek().kind == Tok::kCaretId) error_here("multiple blocks in a region are not supported");
    if (block->terminator()) error_here("operation after the block's terminator");
    parse_op(block);
  }
  Location end = next().loc;
  if (!block->terminator()) error(end, "block does not end with a return");
}

void Parser::parse_op(Block* block) {
  struct Group {
    std::string name;
    size_t count;
    Location loc;
  };
  std::vector<Group> groups;
  size_t n_named = 0;
  if (peek().kind == Tok::kPercentId) {
    do {
      Token t = peek();
      if (t.kind != Tok::kPercentId || t.text.find('#') != std::string::npos)
        error_here(fmt::format("expected a result name (got {})", describe(t)));
      next();
      size_t count = 1;
      if (accept(":")) {
        int64_t c = parse_int("result count");
        if (c < 1 || c > 100000) error(t.loc, "bad result count");
        count = static_cast<size_t>(c);
      }
      groups.push_back({t.text, count, t.loc});
      n_named += count;
    } while (accept(","));
    expect("=", "after result names");
  }
  Token name = next();
  Location loc = name.loc;
  Op* op = nullptr;
  if (name.kind == Tok::kString) {
    auto kind = op_kind_from_name(name.text);
    if (!kind) error(loc, fmt::format("unknown operation '{}'", name.text));
    op = parse_generic_op(block, *kind, loc);
  } else if (name.kind == Tok::kIdent) {
    std::string n = name.text;
    if (n == "return") n = "func.return";
    if (n == "call") n = "func.call";
    auto kind = op_kind_from_name(n);
    if (!kind) error(loc, fmt::format("unknown operation '{}'", name.text));
    op = parse_custom_op(block, *kind, loc);
  } else {
    error(loc, fmt::format("expected an operation (got {})", describe(name)));
  }
  skip_location();
  if (n_named != op->results.size())
    error(loc, fmt::format("'{}' has {} results but {} names are given", op->name(), op->results.size(), n_named));
  size_t k = 0;
  for (const auto& g : groups) {
    auto& slot = scopes_.back()[g.name];
    if (!slot.empty()) error(g.loc, fmt::format("redefinition of SSA value '%{}'", g.name));
    for (size_t i = 0; i < g.count; ++i) slot.push_back(op->results[k++].get());
  }
}

Op* Parser::parse_generic_op(Block* block, OpKind kind, Location loc) {
  expect("(", "opening the operand list");
  std::vector<Value*> operands = parse_operand_list();
  expect(")", "closing the operand list");
  Attrs attrs;
  if (accept("<")) {
    parse_attr_dict(attrs);
    expect(">", "closing the properties");
  }
  std::vector<std::unique_ptr<Block>> regions;
  if (peek().punct("(")) {
    next();
    do regions.push_back(parse_region());
    while (accept(","));
    expect(")", "closing the region list");
  }
  if (peek().punct("{")) parse_attr_dict(attrs);
  expect(":", "before the op's type");
  auto [ins, outs] = parse_function_type();
  if (ins.size() != operands.size())
    error(loc, fmt::format("{} operands but {} operand types", operands.size(), ins.size()));
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i] != operands[i]->type)
      error(loc, fmt::format("operand #{} has type {} (got {} in the op's type)", i, operands[i]->type.str(), ins[i].str()));
  return create_op(block, kind, std::move(operands), std::move(attrs), std::move(outs), std::move(regions), loc);
}

// ---------------------------------------------------------------- functions and modules

void Parser::skip_braces() {
  Location start = peek().loc;
  expect("{", "opening a body");
  int depth = 1;
  while (depth > 0) {
    Token t = next();
    if (t.kind == Tok::kEof) error(start, "unterminated '{'");
    if (t.punct("{")) ++depth;
    if (t.punct("}")) --depth;
  }
}

void Parser::parse_func_header(std::vector<FuncBody>& bodies) {
  Location loc = next().loc;  // func.func
  bool is_public = true;
  if (accept_kw("private")) is_public = false;
  else if (!accept_kw("public")) accept_kw("nested");
  if (peek().kind != Tok::kAtId) error_here(fmt::format("expected a function name (got {})", describe(peek())));
  Token name = next();
  if (!defined_.insert(name.text).second) error(name.loc, fmt::format("redefinition of function '@{}'", name.text));
  FuncBody fb;
  std::vector<Type> arg_types;
  expect("(", "opening the argument list");
  if (!accept(")")) {
    do {
      fb.arg_locs.push_back(peek().loc);
      Type t;
      fb.arg_names.push_back(parse_arg_def(&t));
      arg_types.push_back(t);
    } while (accept(","));
    expect(")", "closing the argument list");
  }
  std::vector<Type> results;
  if (accept("->")) {
    if (accept("(")) {
      if (!accept(")")) {
        do {
          results.push_back(parse_type());
          if (peek().punct("{")) {
            Attrs ignored;
            parse_attr_dict(ignored);
          }
          skip_location();
        } while (accept(","));
        expect(")", "closing the result types");
      }
    } else {
      results.push_back(parse_type());
    }
  }
  if (accept_kw("attributes")) {
    Attrs ignored;
    parse_attr_dict(ignored);
  }
  Func* f = module_->add_func(name.text, arg_types, is_public);
  f->result_types = std::move(results);
  f->loc = loc;
  fb.func = f;
  fb.generic = false;
  fb.body = lex_.save();
  skip_braces();
  skip_location();
  bodies.push_back(std::move(fb));
}

void Parser::parse_props(std::string_view open, std::string_view close,
                         const std::function<void(const std::string& key)>& on_key) {
  expect("{", open);
  if (accept("}")) return;
  do {
    Token key = next();
    if (key.kind != Tok::kIdent && key.kind != Tok::kString)
      error(key.loc, "expected an attribute name");
    expect("=", "after an attribute name");
    on_key(key.text);
  } while (accept(","));
  expect("}", close);
}

void Parser::parse_generic_func_header(std::vector<FuncBody>& bodies) {
  Location loc = next().loc;  // "func.func"
  expect("(", "after \"func.func\"");
  expect(")", "after \"func.func\"(");
  std::string name;
  bool is_public = true;
  std::optional<std::pair<std::vector<Type>, std::vector<Type>>> ftype;
  auto on_key = [&](const std::string& key) {
    if (key == "function_type") {
      ftype = parse_function_type();
    } else if (key == "sym_name" || key == "sym_visibility") {
      if (peek().kind != Tok::kString) error_here(fmt::format("expected a string for {}", key));
      std::string v = next().text;
      if (key == "sym_name")
        name = v;
      else
        is_public = v != "private";
    } else {
      skip_balanced_value();
    }
  };
  if (accept("<")) {
    parse_props("opening func.func attributes", "closing func.func properties", on_key);
    expect(">", "closing func.func properties");
  }
  FuncBody fb;
  fb.generic = true;
  fb.body = lex_.save();
  expect("(", "opening the func.func region");
  skip_braces();
  expect(")", "closing the func.func region");
  if (peek().punct("{"))
    parse_props("opening func.func attributes", "closing func.func attributes", on_key);
  expect(":", "before the func.func type");
  parse_function_type();
  skip_location();
  if (name.empty()) error(loc, "func.func without sym_name");
  if (!ftype) error(loc, "func.func without function_type");
  if (!defined_.insert(name).second) error(loc, fmt::format("redefinition of function '@{}'", name));
  Func* f = module_->add_func(name, ftype->first, is_public);
  f->result_types = ftype->second;
  f->loc = loc;
  fb.func = f;
  bodies.push_back(std::move(fb));
}

void Parser::parse_func_body(const FuncBody& fb) {
  lex_.restore(fb.body);
  Func* f = fb.func;
  scopes_.clear();
  push_scope();
  if (fb.generic) {
    expect("(", "opening the func.func region");
    expect("{", "opening the func.func region");
    if (peek().kind == Tok::kCaretId) {
      next();
      size_t i = 0;
      if (accept("(") && !accept(")")) {
        do {
          Location aloc = peek().loc;
          Type t;
          std::string name = parse_arg_def(&t);
          if (i >= f->num_args() || f->arg(i)->type != t)
            error(aloc, "block arguments do not match the function_type");
          define(name, f->arg(i++), aloc);
        } while (accept(","));
        expect(")", "closing block arguments");
      }
      if (i != f->num_args()) error(peek().loc, "block arguments do not match the function_type");
      expect(":", "after a block label");
    } else if (f->num_args() != 0) {
      error_here("func.func region needs a ^bb0(...) block with the arguments");
    }
  } else {
    for (size_t i = 0; i < fb.arg_names.size(); ++i) define(fb.arg_names[i], f->arg(i), fb.arg_locs[i]);
    expect("{", "opening the function body");
  }
  parse_block_body(f->body.get());
  pop_scope();
}

static bool skip_alias(Parser& p) {
  // `#loc1 = loc(...)`, `#map = ...`, `!alias = type` at the top level.
  if (p.peek().kind != Tok::kHashId && p.peek().kind != Tok::kBangId) return false;
  p.next();
  p.expect("=", "in an alias definition");
  if (p.peek().is(Tok::kIdent, "loc")) p.skip_location();
  else p.skip_balanced_value();
  return true;
}

void Parser::parse_top_level(std::vector<FuncBody>& bodies, bool in_module) {
  for (;;) {
    const Token& t = peek();
    if (in_module ? t.punct("}") : t.kind == Tok::kEof) return;
    if (skip_alias(*this)) continue;
    if (t.is(Tok::kIdent, "func.func")) parse_func_header(bodies);
    else if (t.is(Tok::kString, "func.func")) parse_generic_func_header(bodies);
    else error_here(fmt::format("expected a func.func (got {})", describe(t)));
  }
}

std::unique_ptr<Module> Parser::parse_module() {
  auto m = std::make_unique<Module>();
  module_ = m.get();
  std::vector<FuncBody> bodies;
  while (skip_alias(*this)) {
  }
  Location mloc = peek().loc;
  if (accept_kw("module")) {
    if (peek().kind == Tok::kAtId) m->name = next().text;
    if (accept_kw("attributes")) {
      Attrs ignored;
      parse_attr_dict(ignored);
    }
    expect("{", "opening the module");
    parse_top_level(bodies, true);
    expect("}", "closing the module");
    skip_location();
  } else if (peek().is(Tok::kString, "builtin.module")) {
    next();
    expect("(", "after \"builtin.module\"");
    expect(")", "after \"builtin.module\"(");
    auto module_props = [&] {
      parse_props("opening module attributes", "closing module attributes",
                  [&](const std::string& key) {
                    if (key == "sym_name" && peek().kind == Tok::kString)
                      m->name = next().text;
                    else
                      skip_balanced_value();
                  });
    };
    if (accept("<")) {
      module_props();
      expect(">", "closing module properties");
    }
    expect("(", "opening the module region");
    expect("{", "opening the module region");
    parse_top_level(bodies, true);
    expect("}", "closing the module region");
    expect(")", "closing the module region");
    if (peek().punct("{")) module_props();
    expect(":", "before the module type");
    parse_function_type();
    skip_location();
  } else {
    parse_top_level(bodies, false);
  }
  while (skip_alias(*this)) {
  }
  if (peek().punct("{")) {  // `{-# dialect_resources ... #-}` trailer
    skip_braces();
  }
  if (peek().kind != Tok::kEof) error_here(fmt::format("expected end of input (got {})", describe(peek())));
  Lexer::State end = lex_.save();
  for (const auto& fb : bodies) parse_func_body(fb);
  lex_.restore(end);
  // Calls are checked here (not only by verify_module) so the error points at the call.
  for (const auto& f : m->funcs)
    walk(*f->body, [&](const Op& op) {
      if (op.kind != OpKind::kCall) return;
      auto* c = op.attrs.get_if<SymbolRef>("callee");
      if (!c) error(op.loc, "func.call without a callee");
      Func* callee = m->find(c->name);
      if (!callee) error(op.loc, fmt::format("call to unknown function '@{}'", c->name));
      if (callee->arg_types() != op.operand_types() || callee->result_types != op.result_types())
        error(op.loc, fmt::format("call to '@{}' does not match its signature (got ({}) -> ({}), expected ({}) -> ({}))",
                                  c->name, types_str(op.operand_types()), types_str(op.result_types()),
                                  types_str(callee->arg_types()), types_str(callee->result_types)));
    });
  try {
    verify_module(*m);
  } catch (const ParseError&) {
    throw;
  } catch (const VerifyError& e) {  // at the offending op when the verifier knows it
    Location at = e.location().line ? e.location() : mloc.line ? mloc : Location{1, 1};
    error(at, e.what());
  } catch (const std::exception& e) {
    error(mloc.line ? mloc : Location{1, 1}, e.what());
  }
  return m;
}

// ---------------------------------------------------------------- public API

std::unique_ptr<Module> parse_module(std::string_view text, const std::string& filename) {
  Parser p(text, filename, 1);
  return p.parse_module();
}

namespace {

struct Part {
  std::string_view text;
  int first_line;
};

// Parts of a file separated by lines that start with `// -----`.
std::vector<Part> split_parts(std::string_view text) {
  std::vector<Part> parts;
  size_t start = 0, pos = 0;
  int line = 1, start_line = 1;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view ln = text.substr(pos, eol - pos);
    size_t b = ln.find_first_not_of(" \t");
    if (b != std::string_view::npos && ln.substr(b).starts_with("// -----")) {
      parts.push_back({text.substr(start, pos - start), start_line});
      start = eol;
      start_line = line;
    }
    pos = eol + 1;
    ++line;
  }
  parts.push_back({text.substr(start), start_line});
  return parts;
}

}  // namespace

std::vector<std::unique_ptr<Module>> parse_split_modules(std::string_view text, const std::string& filename) {
  std::vector<std::unique_ptr<Module>> out;
  for (const Part& p : split_parts(text)) out.push_back(Parser(p.text, filename, p.first_line).parse_module());
  return out;
}

std::unique_ptr<Module> parse_file(const std::string& path) {
  require_regular_file("parse", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("[parse] cannot open '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  Part first = split_parts(text).front();
  return Parser(first.text, path, first.first_line).parse_module();
}

}  // namespace netspec::hlo
