// The custom-syntax table and the pieces its print/parse pairs share.
#include "hlo/text/syntax.h"

#include <fmt/format.h>

namespace netspec::hlo {

Op* OpText::done() {
  return p.create_op(block, kind, std::move(operands), std::move(attrs), std::move(types),
                     std::move(regions), loc);
}

void OpText::read_operands() {
  comma = false;
  if (p.peek().kind != Tok::kPercentId) return;
  for (;;) {
    operands.push_back(p.parse_operand());
    if (!p.accept(",")) return;
    if (p.peek().kind != Tok::kPercentId) {
      comma = true;
      return;
    }
  }
}

void OpText::need_comma(std::string_view what) const {
  if (!comma) p.error_here(fmt::format("expected ', {}' (got '{}')", what, p.peek().text));
}

Op* OpText::done_after_attrs_and_type() {
  opt_attrs();
  same_or_functional_type();
  return done();
}

void OpText::opt_attrs() {
  if (p.peek().punct("{")) p.parse_attr_dict(attrs);
}

void OpText::operands_then(std::string_view kw, std::string_view what) {
  read_operands();
  need_comma(what);
  keyword_eq(kw);
}

void print_operands_then(Printer& pr, const Op& op, std::string_view kw, const std::string& value,
                         const std::string& type) {
  pr.out_ += fmt::format("{} {}, {} = {} : {}", op.name(), pr.operands_str(op), kw, value, type);
}

void OpText::keyword_eq(std::string_view kw) {
  p.expect_kw(kw, "in the op's custom syntax");
  p.expect("=", fmt::format("after '{}'", kw));
}

void OpText::check_operand_types(const std::vector<Type>& ins) const {
  if (ins.size() != operands.size())
    p.error(loc, fmt::format("{} operands but {} operand types", operands.size(), ins.size()));
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i] != operands[i]->type)
      p.error(loc, fmt::format("operand #{} has type {} (got {} in the op's type)", i,
                               operands[i]->type.str(), ins[i].str()));
}

void OpText::same_or_functional_type() {
  p.expect(":", "before the op's type");
  if (p.peek().punct("(")) {
    auto [ins, outs] = p.parse_function_type();
    check_operand_types(ins);
    types = outs;
    return;
  }
  Type t = p.parse_type();
  check_operand_types(std::vector<Type>(operands.size(), t));
  types = {t};
}

void OpText::functional_type() {
  p.expect(":", "before the op's type");
  auto [ins, outs] = p.parse_function_type();
  check_operand_types(ins);
  types = outs;
}

bool only_attrs(const Op& op, std::initializer_list<std::string_view> known) {
  for (const auto& [k, v] : op.attrs.map()) {
    bool ok = false;
    for (auto n : known) ok = ok || k == n;
    if (!ok) return false;
  }
  return true;
}

std::string same_or_functional(const Op& op) {
  if (op.results.size() == 1) {
    bool same = true;
    for (auto* v : op.operands) same = same && v->type == op.results[0]->type;
    if (same) return op.results[0]->type.str();
  }
  return functional_type(op);
}

const Syntax* custom_syntax(OpKind kind) {
  static const SyntaxTable table = [] {
    SyntaxTable t{};
    register_basic_syntaxes(t);
    register_shape_syntaxes(t);
    register_dot_conv_syntaxes(t);
    register_control_syntaxes(t);
    return t;
  }();
  const Syntax& s = table.by_kind[static_cast<size_t>(kind)];
  return s.print ? &s : nullptr;
}

bool Printer::print_custom_op(const Op& op, int indent) {
  const Syntax* s = custom_syntax(op.kind);
  return s && s->print(*this, op, indent);
}

Op* Parser::parse_custom_op(Block* block, OpKind kind, Location loc) {
  const Syntax* s = custom_syntax(kind);
  if (!s)
    error(loc, fmt::format("'{}' has no custom syntax; write it in the generic form \"{}\"(...)",
                           op_name(kind), op_name(kind)));
  OpText t{*this, block, kind, loc, {}, {}, {}, {}};
  return s->parse(t);
}

}  // namespace netspec::hlo
