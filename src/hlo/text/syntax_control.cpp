// Custom syntaxes of the ops with regions or calls: reduce (`applies op across dimensions` or
// `reducer(...)` with a body), while (`cond {..} do {..}`), call, return and
// optimization_barrier.
#include <fmt/format.h>

#include <set>

#include "hlo/text/syntax.h"

namespace netspec::hlo {
namespace {

const std::set<OpKind> kCompactReducers = {OpKind::kAdd,     OpKind::kMultiply, OpKind::kMaximum,
                                           OpKind::kMinimum, OpKind::kAnd,      OpKind::kOr,
                                           OpKind::kXor};

// A single-input reduce whose body is `r = op(arg0, arg1); return r` prints as `applies op`.
const Op* compact_reducer(const Op& op) {
  if (op.operands.size() != 2 || op.regions.size() != 1) return nullptr;
  const Block& b = *op.regions[0];
  if (b.args.size() != 2 || b.ops.size() != 2) return nullptr;
  const Op& c = *b.ops[0];
  const Op& r = *b.ops[1];
  Type scalar = Type::tensor(op.operand_type(1).dtype(), {});
  if (!kCompactReducers.count(c.kind) || !c.attrs.empty() || !c.regions.empty() ||
      c.operands.size() != 2 || c.operands[0] != b.args[0].get() ||
      c.operands[1] != b.args[1].get() || b.args[0]->type != scalar || b.args[1]->type != scalar ||
      c.results.size() != 1 || c.results[0]->type != scalar)
    return nullptr;
  if (r.kind != OpKind::kReturn || r.operands.size() != 1 || r.operands[0] != c.results[0].get() ||
      !r.attrs.empty())
    return nullptr;
  return &c;
}

// `stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (..) -> R`, or
// `... across dimensions = [1] : (..) -> R\n reducer(%a: T, %b: T) {..}`
bool print_reduce(Printer& pr, const Op& op, int indent) {
  auto* dims = op.attrs.get_if<I64s>("dimensions");
  size_t n = op.operands.size() / 2;
  if (!dims || op.attrs.map().size() != 1 || n == 0 || op.operands.size() % 2 ||
      op.regions.size() != 1 || op.regions[0]->args.size() != 2 * n)
    return false;
  std::vector<std::string> ins;
  for (size_t i = 0; i < n; ++i)
    ins.push_back(
        fmt::format("({} init: {})", pr.name(op.operands[i]), pr.name(op.operands[n + i])));
  std::string head = fmt::format("{}{}", op.name(), fmt::join(ins, ", "));
  if (const Op* c = compact_reducer(op)) {
    pr.out_ += fmt::format("{} applies {} across dimensions = {} : {}", head, c->name(),
                           ints_str(*dims), functional_type(op));
    return true;
  }
  pr.out_ += fmt::format("{} across dimensions = {} : {}\n{} reducer", head, ints_str(*dims),
                         functional_type(op), indent_str(indent));
  const Block& b = *op.regions[0];
  for (size_t i = 0; i < n; ++i) {
    std::string x = pr.arg_def(b.args[i].get());
    std::string y = pr.arg_def(b.args[n + i].get());
    pr.out_ += fmt::format("({}, {}) ", x, y);
  }
  pr.print_region(b, indent, false);
  return true;
}

// The body `r = combiner(x, y); return r` that `applies combiner` stands for.
std::unique_ptr<Block> combiner_body(Parser& p, OpKind combiner, Type scalar, Location loc) {
  auto body = std::make_unique<Block>();
  Value* x = body->add_arg(scalar);
  Value* y = body->add_arg(scalar);
  Op* c = p.create_op(body.get(), combiner, {x, y}, {}, {}, {}, loc);
  p.create_op(body.get(), OpKind::kReturn, {c->result(0)}, {}, {}, {}, loc);
  return body;
}

// `reducer(%a: T, %b: T) (%c: U, %d: U) {..}`: accumulators first, then current values.
std::unique_ptr<Block> reducer_body(Parser& p, size_t n) {
  p.expect_kw("reducer", "introducing the reduce body");
  std::vector<std::pair<std::string, Type>> acc, cur;
  for (size_t i = 0; i < n; ++i) {
    p.expect("(", "opening reducer arguments");
    Type t1, t2;
    std::string a1 = p.parse_arg_def(&t1);
    p.expect(",", "between reducer arguments");
    std::string a2 = p.parse_arg_def(&t2);
    p.expect(")", "closing reducer arguments");
    acc.push_back({a1, t1});
    cur.push_back({a2, t2});
  }
  acc.insert(acc.end(), cur.begin(), cur.end());
  return p.parse_region(&acc);
}

Op* parse_reduce(OpText& t) {
  Parser& p = t.p;
  std::vector<Value*> inits;
  do {
    p.expect("(", "opening a reduce operand");
    t.operands.push_back(p.parse_operand());
    p.expect_kw("init", "in a reduce operand");
    p.expect(":", "after 'init'");
    inits.push_back(p.parse_operand());
    p.expect(")", "closing a reduce operand");
  } while (p.accept(","));
  std::optional<OpKind> combiner;
  Location cl = p.peek().loc;
  if (p.accept_kw("applies")) {
    std::string cname = p.expect_ident("the reduction op");
    combiner = op_kind_from_name(cname);
    if (!combiner || op_family(*combiner) != "binary" || *combiner == OpKind::kCompare ||
        *combiner == OpKind::kSelect || *combiner == OpKind::kClamp)
      p.error(cl, fmt::format("'{}' cannot be a reduce body", cname));
  }
  p.expect_kw("across", "in stablehlo.reduce");
  t.keyword_eq("dimensions");
  t.attrs.set("dimensions", p.parse_int_list("dimensions"));
  size_t n = t.operands.size();
  t.operands.insert(t.operands.end(), inits.begin(), inits.end());
  t.opt_attrs();
  t.functional_type();
  if (combiner) {
    if (n != 1) p.error(cl, "'applies' needs a single-input reduce");
    t.regions.push_back(
        combiner_body(p, *combiner, Type::tensor(t.operands[1]->type.dtype(), {}), cl));
  } else {
    t.regions.push_back(reducer_body(p, n));
  }
  return t.done();
}

// `stablehlo.while(%iterArg = %x, ...) : T, ...\n cond {..} do {..}`
bool print_while(Printer& pr, const Op& op, int indent) {
  if (!op.attrs.empty() || op.operands.empty() || op.regions.size() != 2) return false;
  const Block& c = *op.regions[0];
  const Block& b = *op.regions[1];
  if (c.args.size() != op.operands.size() || b.args.size() != op.operands.size()) return false;
  std::vector<std::string> inits;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    std::string it = pr.fresh_iter_arg();
    pr.set_name(c.args[i].get(), it);
    pr.set_name(b.args[i].get(), it);
    inits.push_back(fmt::format("{} = {}", it, pr.name(op.operands[i])));
  }
  pr.out_ += fmt::format("{}({}) : {}\n{} cond ", op.name(), fmt::join(inits, ", "),
                         types_str(op.operand_types()), indent_str(indent));
  pr.print_region(c, indent, false);
  pr.out_ += " do ";
  pr.print_region(b, indent, false);
  return true;
}
Op* parse_while(OpText& t) {
  Parser& p = t.p;
  p.expect("(", "opening while operands");
  std::vector<std::string> names;
  if (!p.accept(")")) {
    do {
      if (p.peek().kind != Tok::kPercentId)
        p.error_here("expected '%name = %value' in while operands");
      names.push_back(p.next().text);
      p.expect("=", "in a while operand");
      t.operands.push_back(p.parse_operand());
    } while (p.accept(","));
    p.expect(")", "closing while operands");
  }
  std::vector<Type> ts;
  if (p.accept(":")) ts = p.parse_type_list();
  t.check_operand_types(ts);
  if (p.accept_kw("attributes")) p.parse_attr_dict(t.attrs);
  std::vector<std::pair<std::string, Type>> args;
  for (size_t i = 0; i < names.size(); ++i) args.push_back({names[i], ts[i]});
  p.expect_kw("cond", "introducing the while condition");
  t.regions.push_back(p.parse_region(&args));
  p.expect_kw("do", "introducing the while body");
  t.regions.push_back(p.parse_region(&args));
  t.types = ts;
  return t.done();
}

// `call @f(%a, %b) : (T, U) -> R` (`func.call` inside a stablehlo op's region)
bool print_call(Printer& pr, const Op& op, int) {
  auto* c = op.attrs.get_if<SymbolRef>("callee");
  if (!c || op.attrs.map().size() != 1) return false;
  std::vector<Type> rs = op.result_types();
  std::string res = rs.size() == 1 ? rs[0].str() : "(" + types_str(rs) + ")";
  // Inside a stablehlo op's region the default dialect is stablehlo, so `call` must be
  // spelled with its dialect there (XLA and IREE reject a bare `call`), as MLIR prints it.
  bool nested = op.parent && op.parent->parent_op;
  pr.out_ += fmt::format("{} {}({}) : ({}) -> {}", nested ? "func.call" : "call", attr_str(*c),
                         pr.operands_str(op), types_str(op.operand_types()), res);
  return true;
}
Op* parse_call(OpText& t) {
  Parser& p = t.p;
  if (p.peek().kind != Tok::kAtId) p.error_here("expected @callee after call");
  t.attrs.set("callee", SymbolRef{p.next().text});
  p.expect("(", "opening call arguments");
  t.operands = p.parse_operand_list();
  p.expect(")", "closing call arguments");
  t.opt_attrs();
  t.functional_type();
  return t.done();
}

// `stablehlo.return %a : T`, `return %a : T`, `stablehlo.optimization_barrier %a : T`
bool print_operands_then_types(Printer& pr, const Op& op, int) {
  if (!op.attrs.empty()) return false;
  if (op.kind == OpKind::kOptimizationBarrier) {
    if (op.operands.empty()) return false;
    pr.out_ +=
        fmt::format("{} {} : {}", op.name(), pr.operands_str(op), types_str(op.operand_types()));
    return true;
  }
  std::string kw = op.kind == OpKind::kReturn ? "stablehlo.return" : "return";
  if (op.operands.empty())
    pr.out_ += kw;
  else
    pr.out_ += fmt::format("{} {} : {}", kw, pr.operands_str(op), types_str(op.operand_types()));
  return true;
}
Op* parse_operands_then_types(OpText& t) {
  t.read_operands();
  t.opt_attrs();
  if (!t.operands.empty()) {
    t.p.expect(":", "before the operand types");
    t.check_operand_types(t.p.parse_type_list());
  }
  if (t.kind == OpKind::kOptimizationBarrier)
    for (auto* v : t.operands) t.types.push_back(v->type);
  return t.done();
}

}  // namespace

void register_control_syntaxes(SyntaxTable& t) {
  t.set(OpKind::kReduce, print_reduce, parse_reduce);
  t.set(OpKind::kWhile, print_while, parse_while);
  t.set(OpKind::kCall, print_call, parse_call);
  t.set(OpKind::kReturn, print_operands_then_types, parse_operands_then_types);
  t.set(OpKind::kFuncReturn, print_operands_then_types, parse_operands_then_types);
  t.set(OpKind::kOptimizationBarrier, print_operands_then_types, parse_operands_then_types);
}

}  // namespace netspec::hlo
