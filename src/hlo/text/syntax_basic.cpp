// Custom syntaxes of constants, iota, compare, select, reduce_precision, rng_bit_generator and
// the default elementwise form `stablehlo.add %a, %b : T` (also reshape, convert, ...).
#include <fmt/format.h>

#include <cstdio>

#include "hlo/text/syntax.h"

namespace netspec::hlo {
namespace {

// `stablehlo.constant dense<...> : tensor<...>`
bool print_constant(Printer& pr, const Op& op, int) {
  if (!only_attrs(op, {"value"}) || !op.attrs.get_if<DenseAttr>("value")) return false;
  pr.out_ += fmt::format("{} {}", op.name(), dense_str(op.attrs.get<DenseAttr>("value").value));
  return true;
}
Op* parse_constant(OpText& t) {
  t.opt_attrs();
  Location vloc = t.p.peek().loc;
  if (!t.p.peek().is(Tok::kIdent, "dense"))
    t.p.error_here("expected dense<...> after stablehlo.constant");
  auto v = t.p.parse_attr_value();
  auto* d = v ? std::get_if<DenseAttr>(&*v) : nullptr;
  if (!d) t.p.error(vloc, "expected dense<...> after stablehlo.constant");
  t.types = {Type::tensor(d->value.dtype(), d->value.shape())};
  t.attrs.set("value", *d);
  return t.done();
}

// `stablehlo.iota dim = 0 : T`
bool print_iota(Printer& pr, const Op& op, int) {
  const Attrs& a = op.attrs;
  if (!only_attrs(op, {"iota_dimension"}) || !a.get_if<IntAttr>("iota_dimension")) return false;
  pr.out_ += fmt::format("{} dim = {} : {}", op.name(), a.get_int("iota_dimension"),
                         op.result(0)->type.str());
  return true;
}
Op* parse_iota(OpText& t) {
  t.keyword_eq("dim");
  t.attrs.set("iota_dimension", IntAttr{t.p.parse_int("iota dimension"), DType::kI64});
  t.opt_attrs();
  t.p.expect(":", "before the iota type");
  t.types = {t.p.parse_type()};
  return t.done();
}

// `stablehlo.compare  LT, %a, %b,  FLOAT : (T, T) -> R`
bool print_compare(Printer& pr, const Op& op, int) {
  const Attrs& a = op.attrs;
  auto* dir = a.get_if<EnumAttr>("comparison_direction");
  auto* ct = a.get_if<EnumAttr>("compare_type");
  if (!dir || !only_attrs(op, {"comparison_direction", "compare_type"}) ||
      (a.has("compare_type") && !ct))
    return false;
  std::string s = fmt::format("{}  {}, {}", op.name(), dir->value, pr.operands_str(op));
  if (ct) s += fmt::format(",  {}", ct->value);
  pr.out_ += s + " : " + functional_type(op);
  return true;
}
Op* parse_compare(OpText& t) {
  std::string dir = t.p.expect_ident("a comparison direction");
  t.p.expect(",", "after the comparison direction");
  t.read_operands();
  t.attrs.set("comparison_direction", EnumAttr{"comparison_direction", dir});
  if (t.comma)
    t.attrs.set("compare_type", EnumAttr{"comparison_type", t.p.expect_ident("a compare type")});
  return t.done_after_attrs_and_type();
}

// `stablehlo.select %p, %a, %b : pred_type, T` or `: (..) -> R`
bool print_select(Printer& pr, const Op& op, int) {
  if (!op.attrs.empty() || op.operands.size() != 3) return false;
  const Type& r = op.result(0)->type;
  if (op.operand_type(1) == r && op.operand_type(2) == r)
    pr.out_ += fmt::format("{} {} : {}, {}", op.name(), pr.operands_str(op),
                           op.operand_type(0).str(), r.str());
  else
    pr.out_ += fmt::format("{} {} : {}", op.name(), pr.operands_str(op), functional_type(op));
  return true;
}
Op* parse_select(OpText& t) {
  t.read_operands();
  t.opt_attrs();
  t.p.expect(":", "before the op's type");
  if (t.p.peek().punct("(")) {
    auto [ins, outs] = t.p.parse_function_type();
    t.check_operand_types(ins);
    t.types = outs;
  } else {
    std::vector<Type> ts = t.p.parse_type_list();
    if (ts.size() != 2 || t.operands.size() != 3)
      t.p.error(t.loc, "select takes `%pred, %a, %b : pred_type, type`");
    t.check_operand_types({ts[0], ts[1], ts[1]});
    t.types = {ts[1]};
  }
  return t.done();
}

// `stablehlo.reduce_precision %x, format = e5m10 : T`
bool print_reduce_precision(Printer& pr, const Op& op, int) {
  auto* e = op.attrs.get_if<IntAttr>("exponent_bits");
  auto* m = op.attrs.get_if<IntAttr>("mantissa_bits");
  if (!e || !m || !only_attrs(op, {"exponent_bits", "mantissa_bits"})) return false;
  print_operands_then(pr, op, "format", fmt::format("e{}m{}", e->value, m->value),
                      same_or_functional(op));
  return true;
}
Op* parse_reduce_precision(OpText& t) {
  t.operands_then("format", "format = eXmY");
  Location floc = t.p.peek().loc;
  std::string f = t.p.expect_ident("a format like e5m10");
  int e = 0, m = 0;
  if (std::sscanf(f.c_str(), "e%dm%d", &e, &m) != 2 || fmt::format("e{}m{}", e, m) != f)
    t.p.error(floc, fmt::format("bad reduce_precision format '{}' (expected eXmY)", f));
  t.attrs.set("exponent_bits", IntAttr{e, DType::kI32});
  t.attrs.set("mantissa_bits", IntAttr{m, DType::kI32});
  return t.done_after_attrs_and_type();
}

// `stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (..) -> (..)`
bool print_rng_bit_generator(Printer& pr, const Op& op, int) {
  auto* alg = op.attrs.get_if<EnumAttr>("rng_algorithm");
  if (!alg || op.attrs.map().size() != 1) return false;
  print_operands_then(pr, op, "algorithm", alg->value, functional_type(op));
  return true;
}
Op* parse_rng_bit_generator(OpText& t) {
  t.operands_then("algorithm", "algorithm = ...");
  t.attrs.set("rng_algorithm", EnumAttr{"rng_algorithm", t.p.expect_ident("an rng algorithm")});
  t.opt_attrs();
  t.functional_type();
  return t.done();
}

// Elementwise ops, reshape, dynamic_update_slice, convert, bitcast_convert:
// `%a, %b : T` or `: (T, ..) -> R` (reshape, dynamic_update_slice, bitcast_convert always).
bool print_elementwise(Printer& pr, const Op& op, int) {
  if (!op.attrs.empty() || op.results.size() != 1 || op.operands.empty()) return false;
  bool always_functional = op.kind == OpKind::kReshape || op.kind == OpKind::kDynamicUpdateSlice ||
                           op.kind == OpKind::kBitcastConvert;
  pr.out_ += fmt::format("{} {} : {}", op.name(), pr.operands_str(op),
                         always_functional ? functional_type(op) : same_or_functional(op));
  return true;
}
Op* parse_elementwise(OpText& t) {
  t.read_operands();
  if (t.comma) t.p.error_here(fmt::format("unexpected '{}' after the operands", t.p.peek().text));
  return t.done_after_attrs_and_type();
}

// CHLO unary ops (chlo.erf) as MLIR prints them: `%x : T -> R`.
bool print_chlo_unary(Printer& pr, const Op& op, int) {
  if (!op.attrs.empty() || op.results.size() != 1 || op.operands.size() != 1) return false;
  pr.out_ += fmt::format("{} {} : {} -> {}", op.name(), pr.operands_str(op),
                         op.operand_type(0).str(), op.result(0)->type.str());
  return true;
}
Op* parse_chlo_unary(OpText& t) {
  t.read_operands();
  if (t.comma) t.p.error_here(fmt::format("unexpected '{}' after the operand", t.p.peek().text));
  t.opt_attrs();
  t.p.expect(":", "before the op's type");
  Type in = t.p.parse_type();
  t.p.expect("->", "in a chlo op's type");
  t.check_operand_types({in});
  t.types = {t.p.parse_type()};
  return t.done();
}

}  // namespace

void register_basic_syntaxes(SyntaxTable& t) {
  for (size_t k = 0; k < kNumOpKinds; ++k)
    t.set(static_cast<OpKind>(k), print_elementwise, parse_elementwise);
  t.set(OpKind::kConstant, print_constant, parse_constant);
  t.set(OpKind::kIota, print_iota, parse_iota);
  t.set(OpKind::kCompare, print_compare, parse_compare);
  t.set(OpKind::kSelect, print_select, parse_select);
  t.set(OpKind::kErf, print_chlo_unary, parse_chlo_unary);
  t.set(OpKind::kReducePrecision, print_reduce_precision, parse_reduce_precision);
  t.set(OpKind::kRngBitGenerator, print_rng_bit_generator, parse_rng_bit_generator);
  // Generic form only (their regions or dimension attributes have no pretty form here).
  for (OpKind k :
       {OpKind::kIf, OpKind::kCase, OpKind::kMap, OpKind::kSort, OpKind::kGather, OpKind::kScatter,
        OpKind::kReduceWindow, OpKind::kSelectAndScatter, OpKind::kAllReduce})
    t.set(k, nullptr, nullptr);
}

}  // namespace netspec::hlo
