// Custom syntaxes of dot_general (`batching_dims = [0] x [0], contracting_dims = [2] x [1],
// precision = [..], algorithm = <..>`) and convolution (`dim_numbers = [b, 0, 1, f]x[0, 1, i, o]
// ->[b, 0, 1, f], window = {stride = [..], pad = [[..]], lhs_dilate, rhs_dilate, reverse}`).
#include <fmt/format.h>

#include <algorithm>

#include "hlo/text/syntax.h"

namespace netspec::hlo {

ConvDims parse_conv_dims(Parser& p);          // parser_attrs.cpp
DotAlgorithm parse_dot_algorithm(Parser& p);  // parser_attrs.cpp

namespace {

std::string precision_str(const std::vector<EnumAttr>& p) {
  std::vector<std::string> s;
  for (const auto& e : p) s.push_back(e.value);
  return fmt::format("[{}]", fmt::join(s, ", "));
}

std::vector<EnumAttr> precision_list(Parser& p) {
  p.expect("[", "opening the precision list");
  std::vector<EnumAttr> v;
  if (!p.accept("]")) {
    do v.push_back(EnumAttr{"precision", p.expect_ident("a precision (DEFAULT, HIGH, HIGHEST)")});
    while (p.accept(","));
    p.expect("]", "closing the precision list");
  }
  return v;
}

bool print_dot_general(Printer& pr, const Op& op, int) {
  const Attrs& a = op.attrs;
  auto* d = a.get_if<DotDims>("dot_dimension_numbers");
  auto* p = a.get_if<std::vector<EnumAttr>>("precision_config");
  auto* alg = a.get_if<DotAlgorithm>("algorithm");
  if (!d || !only_attrs(op, {"dot_dimension_numbers", "precision_config", "algorithm"}) ||
      (a.has("precision_config") && !p) || (a.has("algorithm") && !alg))
    return false;
  std::string s = fmt::format("{} {}, ", op.name(), pr.operands_str(op));
  if (!d->lhs_batching.empty() || !d->rhs_batching.empty())
    s += fmt::format("batching_dims = {} x {}, ", ints_str(d->lhs_batching),
                     ints_str(d->rhs_batching));
  s += fmt::format("contracting_dims = {} x {}", ints_str(d->lhs_contracting),
                   ints_str(d->rhs_contracting));
  if (p) s += ", precision = " + precision_str(*p);
  if (alg) s += ", algorithm = <" + dot_algorithm_fields(*alg) + ">";
  pr.out_ += s + " : " + functional_type(op);
  return true;
}
Op* parse_dot_general(OpText& t) {
  Parser& p = t.p;
  t.read_operands();
  t.need_comma("contracting_dims = [...] x [...]");
  DotDims d;
  if (p.accept_kw("batching_dims")) {
    p.expect("=", "after batching_dims");
    d.lhs_batching = p.parse_int_list("batching dims");
    p.expect_kw("x", "between lhs and rhs batching dims");
    d.rhs_batching = p.parse_int_list("batching dims");
    p.expect(",", "after batching_dims");
  }
  t.keyword_eq("contracting_dims");
  d.lhs_contracting = p.parse_int_list("contracting dims");
  p.expect_kw("x", "between lhs and rhs contracting dims");
  d.rhs_contracting = p.parse_int_list("contracting dims");
  t.attrs.set("dot_dimension_numbers", d);
  while (p.accept(",")) {
    Location kl = p.peek().loc;
    std::string key = p.expect_ident("precision = [...] or algorithm = <...>");
    p.expect("=", "after a keyword");
    if (key == "precision")
      t.attrs.set("precision_config", precision_list(p));
    else if (key == "algorithm")
      t.attrs.set("algorithm", parse_dot_algorithm(p));
    else
      p.error(kl, fmt::format("unsupported dot_general clause '{}'", key));
  }
  t.opt_attrs();
  t.functional_type();
  return t.done();
}

// The window attributes of a convolution and their names in `window = {...}`.
constexpr std::pair<const char*, const char*> kWindowFields[] = {{"window_strides", "stride"},
                                                                 {"padding", "pad"},
                                                                 {"lhs_dilation", "lhs_dilate"},
                                                                 {"rhs_dilation", "rhs_dilate"},
                                                                 {"window_reversal", "reverse"}};

// One `name = value` of the window, or "" when the attribute's kind has no window spelling.
std::string window_field(const std::string& attr, const AttrValue& v) {
  if (attr == "padding") {
    auto* d = std::get_if<DenseAttr>(&v);
    if (!d) return "";
    const Tensor& t = d->value;
    if (t.rank() != 2 || t.shape()[1] != 2 || !is_integer(t.dtype())) return "";
    std::vector<std::string> rows;
    for (int64_t i = 0; i < t.shape()[0]; ++i)
      rows.push_back(fmt::format("[{}, {}]", t.as_int64(2 * i), t.as_int64(2 * i + 1)));
    return fmt::format("pad = [{}]", fmt::join(rows, ", "));
  }
  if (attr == "window_reversal") {
    auto* b = std::get_if<std::vector<bool>>(&v);
    if (!b) return "";
    std::vector<std::string> s;
    for (bool x : *b) s.push_back(x ? "true" : "false");
    return fmt::format("reverse = [{}]", fmt::join(s, ", "));
  }
  auto* ints = std::get_if<I64s>(&v);
  if (!ints) return "";
  for (auto [a, w] : kWindowFields)
    if (attr == a) return fmt::format("{} = {}", w, ints_str(*ints));
  return "";
}

bool print_convolution(Printer& pr, const Op& op, int) {
  const Attrs& a = op.attrs;
  auto* d = a.get_if<ConvDims>("dimension_numbers");
  if (!d || op.operands.size() != 2) return false;
  std::vector<std::string> w;
  std::vector<std::string> used = {"dimension_numbers"};
  for (auto [attr, name] : kWindowFields) {
    if (!a.has(attr)) continue;
    std::string f = window_field(attr, *a.find(attr));
    if (f.empty()) return false;  // a window name with a kind the window syntax cannot show
    w.push_back(f);
    used.push_back(attr);
  }
  std::string s =
      fmt::format("{}({}) dim_numbers = {}", op.name(), pr.operands_str(op), conv_dims_str(*d));
  s += fmt::format(", window = {{{}}}", fmt::join(w, ", "));  // MLIR requires it, even empty
  std::vector<std::string> rest;
  for (const auto& [k, v] : a.map())
    if (std::find(used.begin(), used.end(), k) == used.end()) {
      if (std::holds_alternative<UnitAttr>(v))
        rest.push_back(k);
      else
        rest.push_back(fmt::format("{} = {}", k, attr_str(v)));
    }
  if (!rest.empty()) s += fmt::format(" {{{}}}", fmt::join(rest, ", "));
  pr.out_ += s + " : " + functional_type(op);
  return true;
}

// `pad = [[lo, hi], ...]` into an Nx2 i64 tensor.
DenseAttr parse_padding(Parser& p) {
  p.expect("[", "opening the padding");
  std::vector<int64_t> flat;
  int64_t rows = 0;
  if (!p.accept("]")) {
    do {
      Location rl = p.peek().loc;
      I64s r = p.parse_int_list("padding");
      if (r.size() != 2) p.error(rl, "each padding entry is [low, high]");
      flat.insert(flat.end(), r.begin(), r.end());
      ++rows;
    } while (p.accept(","));
    p.expect("]", "closing the padding");
  }
  return DenseAttr{Tensor::from<int64_t>(DType::kI64, {rows, 2}, flat)};
}

void parse_window(OpText& t) {
  Parser& p = t.p;
  t.keyword_eq("window");
  p.expect("{", "opening the convolution window");
  if (p.accept("}")) return;
  do {
    Location kl = p.peek().loc;
    std::string key = p.expect_ident("a window field");
    p.expect("=", "after a window field");
    if (key == "stride")
      t.attrs.set("window_strides", p.parse_int_list(key));
    else if (key == "lhs_dilate")
      t.attrs.set("lhs_dilation", p.parse_int_list(key));
    else if (key == "rhs_dilate")
      t.attrs.set("rhs_dilation", p.parse_int_list(key));
    else if (key == "reverse")
      t.attrs.set("window_reversal", p.parse_bool_list(key));
    else if (key == "pad")
      t.attrs.set("padding", parse_padding(p));
    else
      p.error(kl, fmt::format("unknown convolution window field '{}'", key));
  } while (p.accept(","));
  p.expect("}", "closing the convolution window");
}

Op* parse_convolution(OpText& t) {
  Parser& p = t.p;
  p.expect("(", "opening convolution operands");
  t.operands = p.parse_operand_list();
  p.expect(")", "closing convolution operands");
  t.keyword_eq("dim_numbers");
  t.attrs.set("dimension_numbers", parse_conv_dims(p));
  if (p.accept(",")) parse_window(t);
  t.opt_attrs();
  t.functional_type();
  return t.done();
}

}  // namespace

void register_dot_conv_syntaxes(SyntaxTable& t) {
  t.set(OpKind::kDotGeneral, print_dot_general, parse_dot_general);
  t.set(OpKind::kConvolution, print_convolution, parse_convolution);
}

}  // namespace netspec::hlo
