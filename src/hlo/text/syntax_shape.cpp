// Custom syntaxes of the shape ops: broadcast_in_dim/transpose/reverse `dims = [..]`, slice
// ranges `[0:2, 1:3:2]`, dynamic_slice `sizes = [..]`, concatenate `dim = N`, pad
// `low/high/interior`, tuple and get_tuple_element `%t[1]`.
#include <fmt/format.h>

#include "hlo/text/syntax.h"

namespace netspec::hlo {
namespace {

// The one integer-list attribute that `dims = [...]` stands for.
std::string dims_attr(OpKind kind) {
  return kind == OpKind::kBroadcastInDim ? "broadcast_dimensions"
         : kind == OpKind::kTranspose    ? "permutation"
                                         : "dimensions";
}

// `stablehlo.transpose %x, dims = [1, 0] : (T) -> R` (reverse: `: T` when the types agree)
bool print_dims(Printer& pr, const Op& op, int) {
  auto* d = op.attrs.get_if<I64s>(dims_attr(op.kind));
  if (!d || op.attrs.map().size() != 1) return false;
  std::string ty = op.kind == OpKind::kReverse ? same_or_functional(op) : functional_type(op);
  print_operands_then(pr, op, "dims", ints_str(*d), ty);
  return true;
}
Op* parse_dims(OpText& t) {
  t.operands_then("dims", "dims = [...]");
  t.attrs.set(dims_attr(t.kind), t.p.parse_int_list("dims"));
  return t.done_after_attrs_and_type();
}

// `stablehlo.slice %x [0:2, 1:5:2] : (T) -> R` (a stride of 1 is left out)
bool print_slice(Printer& pr, const Op& op, int) {
  auto* s = op.attrs.get_if<I64s>("start_indices");
  auto* l = op.attrs.get_if<I64s>("limit_indices");
  auto* st = op.attrs.get_if<I64s>("strides");
  if (!s || !l || !st || !only_attrs(op, {"start_indices", "limit_indices", "strides"}) ||
      s->size() != l->size() || st->size() != s->size())
    return false;
  std::vector<std::string> r;
  for (size_t i = 0; i < s->size(); ++i)
    r.push_back((*st)[i] == 1 ? fmt::format("{}:{}", (*s)[i], (*l)[i])
                              : fmt::format("{}:{}:{}", (*s)[i], (*l)[i], (*st)[i]));
  pr.out_ += fmt::format("{} {} [{}] : {}", op.name(), pr.operands_str(op), fmt::join(r, ", "),
                         functional_type(op));
  return true;
}
Op* parse_slice(OpText& t) {
  Parser& p = t.p;
  t.read_operands();
  p.expect("[", "opening the slice ranges");
  I64s start, limit, strides;
  if (!p.accept("]")) {
    do {
      start.push_back(p.parse_int("slice start"));
      p.expect(":", "in a slice range");
      limit.push_back(p.parse_int("slice limit"));
      strides.push_back(p.accept(":") ? p.parse_int("slice stride") : 1);
    } while (p.accept(","));
    p.expect("]", "closing the slice ranges");
  }
  t.attrs.set("start_indices", start);
  t.attrs.set("limit_indices", limit);
  t.attrs.set("strides", strides);
  return t.done_after_attrs_and_type();
}

// `stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 2] : (..) -> R`
bool print_dynamic_slice(Printer& pr, const Op& op, int) {
  auto* s = op.attrs.get_if<I64s>("slice_sizes");
  if (!s || op.attrs.map().size() != 1) return false;
  print_operands_then(pr, op, "sizes", ints_str(*s), functional_type(op));
  return true;
}
Op* parse_dynamic_slice(OpText& t) {
  t.operands_then("sizes", "sizes = [...]");
  t.attrs.set("slice_sizes", t.p.parse_int_list("sizes"));
  return t.done_after_attrs_and_type();
}

// `stablehlo.concatenate %a, %b, dim = 0 : (..) -> R`
bool print_concatenate(Printer& pr, const Op& op, int) {
  auto* d = op.attrs.get_if<IntAttr>("dimension");
  if (!d || op.attrs.map().size() != 1 || op.operands.empty()) return false;
  print_operands_then(pr, op, "dim", fmt::format("{}", d->value), functional_type(op));
  return true;
}
Op* parse_concatenate(OpText& t) {
  t.operands_then("dim", "dim = N");
  t.attrs.set("dimension", IntAttr{t.p.parse_int("dimension"), DType::kI64});
  return t.done_after_attrs_and_type();
}

// `stablehlo.pad %x, %v, low = [..], high = [..], interior = [..] : (..) -> R`
bool print_pad(Printer& pr, const Op& op, int) {
  auto* lo = op.attrs.get_if<I64s>("edge_padding_low");
  auto* hi = op.attrs.get_if<I64s>("edge_padding_high");
  auto* in = op.attrs.get_if<I64s>("interior_padding");
  if (!lo || !hi || !in || op.attrs.map().size() != 3) return false;
  pr.out_ +=
      fmt::format("{} {}, low = {}, high = {}, interior = {} : {}", op.name(), pr.operands_str(op),
                  ints_str(*lo), ints_str(*hi), ints_str(*in), functional_type(op));
  return true;
}
Op* parse_pad(OpText& t) {
  t.operands_then("low", "low = [...]");
  t.attrs.set("edge_padding_low", t.p.parse_int_list("low"));
  t.p.expect(",", "after low = [...]");
  t.keyword_eq("high");
  t.attrs.set("edge_padding_high", t.p.parse_int_list("high"));
  t.p.expect(",", "after high = [...]");
  t.keyword_eq("interior");
  t.attrs.set("interior_padding", t.p.parse_int_list("interior"));
  return t.done_after_attrs_and_type();
}

// `stablehlo.tuple %a, %b : tuple<T, U>`
bool print_tuple(Printer& pr, const Op& op, int) {
  if (!op.attrs.empty()) return false;
  pr.out_ += fmt::format("{}{}{} : {}", op.name(), op.operands.empty() ? "" : " ",
                         pr.operands_str(op), op.result(0)->type.str());
  return true;
}
Op* parse_tuple(OpText& t) {
  t.read_operands();
  t.opt_attrs();
  t.p.expect(":", "before the tuple type");
  Location tl = t.p.peek().loc;
  t.types = {t.p.parse_type()};
  if (!t.types[0].is_tuple()) t.p.error(tl, "stablehlo.tuple needs a tuple<...> type");
  return t.done();
}

// `stablehlo.get_tuple_element %t[1] : (tuple<..>) -> T`
bool print_get_tuple_element(Printer& pr, const Op& op, int) {
  auto* i = op.attrs.get_if<IntAttr>("index");
  if (!i || op.attrs.map().size() != 1) return false;
  pr.out_ +=
      fmt::format("{} {}[{}] : {}", op.name(), pr.operands_str(op), i->value, functional_type(op));
  return true;
}
Op* parse_get_tuple_element(OpText& t) {
  t.operands = {t.p.parse_operand()};
  t.p.expect("[", "before the tuple index");
  t.attrs.set("index", IntAttr{t.p.parse_int("tuple index"), DType::kI32});
  t.p.expect("]", "after the tuple index");
  return t.done_after_attrs_and_type();
}

}  // namespace

void register_shape_syntaxes(SyntaxTable& t) {
  t.set(OpKind::kBroadcastInDim, print_dims, parse_dims);
  t.set(OpKind::kTranspose, print_dims, parse_dims);
  t.set(OpKind::kReverse, print_dims, parse_dims);
  t.set(OpKind::kSlice, print_slice, parse_slice);
  t.set(OpKind::kDynamicSlice, print_dynamic_slice, parse_dynamic_slice);
  t.set(OpKind::kConcatenate, print_concatenate, parse_concatenate);
  t.set(OpKind::kPad, print_pad, parse_pad);
  t.set(OpKind::kTuple, print_tuple, parse_tuple);
  t.set(OpKind::kGetTupleElement, print_get_tuple_element, parse_get_tuple_element);
}

}  // namespace netspec::hlo
