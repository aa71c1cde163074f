// The pretty syntaxes StableHLO's own printer uses (see parser_ops.cpp for the grammar). An op
// whose attributes do not fit its custom syntax falls back to the generic form.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "hlo/printer_impl.h"

namespace netspec::hlo {
namespace {

// True when every attribute of op is one of `known`.
bool only_attrs(const Op& op, std::initializer_list<std::string_view> known) {
  for (const auto& [k, v] : op.attrs.map()) {
    bool ok = false;
    for (auto n : known) ok = ok || k == n;
    if (!ok) return false;
  }
  return true;
}

// `T` when all operands and results share one type, else `(T, ...) -> R`.
std::string same_or_functional(const Op& op) {
  if (op.results.size() == 1) {
    bool same = true;
    for (auto* v : op.operands) same = same && v->type == op.results[0]->type;
    if (same) return op.results[0]->type.str();
  }
  return functional_type(op);
}

std::string precision_str(const std::vector<EnumAttr>& p) {
  std::vector<std::string> s;
  for (const auto& e : p) s.push_back(e.value);
  return fmt::format("[{}]", fmt::join(s, ", "));
}

const std::set<OpKind> kCompactReducers = {OpKind::kAdd, OpKind::kMultiply, OpKind::kMaximum,
                                           OpKind::kMinimum, OpKind::kAnd, OpKind::kOr, OpKind::kXor};

// A single-input reduce whose body is `r = op(arg0, arg1); return r` prints as `applies op`.
const Op* compact_reducer(const Op& op) {
  if (op.operands.size() != 2 || op.regions.size() != 1) return nullptr;
  const Block& b = *op.regions[0];
  if (b.args.size() != 2 || b.ops.size() != 2) return nullptr;
  const Op& c = *b.ops[0];
  const Op& r = *b.ops[1];
  Type scalar = Type::tensor(op.operand_type(1).dtype(), {});
  if (!kCompactReducers.count(c.kind) || !c.attrs.empty() || !c.regions.empty() ||
      c.operands.size() != 2 || c.operands[0] != b.args[0].get() || c.operands[1] != b.args[1].get() ||
      b.args[0]->type != scalar || b.args[1]->type != scalar || c.results.size() != 1 ||
      c.results[0]->type != scalar)
    return nullptr;
  if (r.kind != OpKind::kReturn || r.operands.size() != 1 || r.operands[0] != c.results[0].get() ||
      !r.attrs.empty())
    return nullptr;
  return &c;
}

}  // namespace

bool Printer::print_custom_op(const Op& op, int indent) {
  const Attrs& a = op.attrs;
  std::string mn = std::string(op.name());
  auto emit = [&](const std::string& s) {
    out_ += s;
    return true;
  };
  switch (op.kind) {
    case OpKind::kConstant: {
      if (!only_attrs(op, {"value"}) || !a.get_if<DenseAttr>("value")) return false;
      return emit(fmt::format("{} {}", mn, dense_str(a.get<DenseAttr>("value").value)));
    }
    case OpKind::kIota:
      if (!only_attrs(op, {"iota_dimension"}) || !a.get_if<IntAttr>("iota_dimension")) return false;
      return emit(fmt::format("{} dim = {} : {}", mn, a.get_int("iota_dimension"), op.result(0)->type.str()));
    case OpKind::kCompare: {
      auto* dir = a.get_if<EnumAttr>("comparison_direction");
      auto* ct = a.get_if<EnumAttr>("compare_type");
      if (!dir || !only_attrs(op, {"comparison_direction", "compare_type"}) || (a.has("compare_type") && !ct))
        return false;
      std::string s = fmt::format("{}  {}, {}", mn, dir->value, operands_str(op));
      if (ct) s += fmt::format(",  {}", ct->value);
      return emit(s + " : " + functional_type(op));
    }
    case OpKind::kSelect: {
      if (!a.empty() || op.operands.size() != 3) return false;
      const Type& r = op.result(0)->type;
      if (op.operand_type(1) == r && op.operand_type(2) == r)
        return emit(fmt::format("{} {} : {}, {}", mn, operands_str(op), op.operand_type(0).str(), r.str()));
      return emit(fmt::format("{} {} : {}", mn, operands_str(op), functional_type(op)));
    }
    case OpKind::kReducePrecision: {
      auto* e = a.get_if<IntAttr>("exponent_bits");
      auto* m = a.get_if<IntAttr>("mantissa_bits");
      if (!e || !m || !only_attrs(op, {"exponent_bits", "mantissa_bits"})) return false;
      return emit(fmt::format("{} {}, format = e{}m{} : {}", mn, operands_str(op), e->value, m->value,
                              same_or_functional(op)));
    }
    case OpKind::kBroadcastInDim:
    case OpKind::kTranspose:
    case OpKind::kReverse: {
      std::string an = op.kind == OpKind::kBroadcastInDim ? "broadcast_dimensions"
                       : op.kind == OpKind::kTranspose    ? "permutation"
                                                          : "dimensions";
      auto* d = a.get_if<I64s>(an);
      if (!d || a.map().size() != 1) return false;
      std::string ty = op.kind == OpKind::kReverse ? same_or_functional(op) : functional_type(op);
      return emit(fmt::format("{} {}, dims = {} : {}", mn, operands_str(op), ints_str(*d), ty));
    }
    case OpKind::kSlice: {
      auto* s = a.get_if<I64s>("start_indices");
      auto* l = a.get_if<I64s>("limit_indices");
      auto* st = a.get_if<I64s>("strides");
      if (!s || !l || !st || !only_attrs(op, {"start_indices", "limit_indices", "strides"}) ||
          s->size() != l->size() || st->size() != s->size())
        return false;
      std::vector<std::string> r;
      for (size_t i = 0; i < s->size(); ++i)
        r.push_back((*st)[i] == 1 ? fmt::format("{}:{}", (*s)[i], (*l)[i])
                                  : fmt::format("{}:{}:{}", (*s)[i], (*l)[i], (*st)[i]));
      return emit(fmt::format("{} {} [{}] : {}", mn, operands_str(op), fmt::join(r, ", "), functional_type(op)));
    }
    case OpKind::kDynamicSlice: {
      auto* s = a.get_if<I64s>("slice_sizes");
      if (!s || a.map().size() != 1) return false;
      return emit(fmt::format("{} {}, sizes = {} : {}", mn, operands_str(op), ints_str(*s), functional_type(op)));
    }
    case OpKind::kConcatenate: {
      auto* d = a.get_if<IntAttr>("dimension");
      if (!d || a.map().size() != 1 || op.operands.empty()) return false;
      return emit(fmt::format("{} {}, dim = {} : {}", mn, operands_str(op), d->value, functional_type(op)));
    }
    case OpKind::kPad: {
      auto* lo = a.get_if<I64s>("edge_padding_low");
      auto* hi = a.get_if<I64s>("edge_padding_high");
      auto* in = a.get_if<I64s>("interior_padding");
      if (!lo || !hi || !in || a.map().size() != 3) return false;
      return emit(fmt::format("{} {}, low = {}, high = {}, interior = {} : {}", mn, operands_str(op),
                              ints_str(*lo), ints_str(*hi), ints_str(*in), functional_type(op)));
    }
    case OpKind::kDotGeneral: {
      auto* d = a.get_if<DotDims>("dot_dimension_numbers");
      auto* p = a.get_if<std::vector<EnumAttr>>("precision_config");
      if (!d || !only_attrs(op, {"dot_dimension_numbers", "precision_config"}) ||
          (a.has("precision_config") && !p))
        return false;
      std::string s = fmt::format("{} {}, ", mn, operands_str(op));
      if (!d->lhs_batching.empty() || !d->rhs_batching.empty())
        s += fmt::format("batching_dims = {} x {}, ", ints_str(d->lhs_batching), ints_str(d->rhs_batching));
      s += fmt::format("contracting_dims = {} x {}", ints_str(d->lhs_contracting), ints_str(d->rhs_contracting));
      if (p) s += ", precision = " + precision_str(*p);
      return emit(s + " : " + functional_type(op));
    }
    case OpKind::kConvolution: {
      auto* d = a.get_if<ConvDims>("dimension_numbers");
      if (!d || op.operands.size() != 2) return false;
      std::vector<std::string> w;
      std::vector<std::string> used = {"dimension_numbers"};
      if (auto* v = a.get_if<I64s>("window_strides")) {
        w.push_back("stride = " + ints_str(*v));
        used.push_back("window_strides");
      }
      if (auto* v = a.get_if<DenseAttr>("padding")) {
        const Tensor& t = v->value;
        if (t.rank() != 2 || t.shape()[1] != 2 || !is_integer(t.dtype())) return false;
        std::vector<std::string> rows;
        for (int64_t i = 0; i < t.shape()[0]; ++i)
          rows.push_back(fmt::format("[{}, {}]", t.as_int64(2 * i), t.as_int64(2 * i + 1)));
        w.push_back(fmt::format("pad = [{}]", fmt::join(rows, ", ")));
        used.push_back("padding");
      }
      if (auto* v = a.get_if<I64s>("lhs_dilation")) {
        w.push_back("lhs_dilate = " + ints_str(*v));
        used.push_back("lhs_dilation");
      }
      if (auto* v = a.get_if<I64s>("rhs_dilation")) {
        w.push_back("rhs_dilate = " + ints_str(*v));
        used.push_back("rhs_dilation");
      }
      if (auto* v = a.get_if<std::vector<bool>>("window_reversal")) {
        std::vector<std::string> b;
        for (bool x : *v) b.push_back(x ? "true" : "false");
        w.push_back(fmt::format("reverse = [{}]", fmt::join(b, ", ")));
        used.push_back("window_reversal");
      }
      // Any attribute of a window name but another kind cannot be shown in the window syntax.
      for (const char* n : {"window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal"})
        if (a.has(n) && std::find(used.begin(), used.end(), n) == used.end()) return false;
      std::string s = fmt::format("{}({}) dim_numbers = {}", mn, operands_str(op), conv_dims_str(*d));
      s += fmt::format(", window = {{{}}}", fmt::join(w, ", "));  // MLIR requires it, even empty
      std::vector<std::string> rest;
      for (const auto& [k, v] : a.map())
        if (std::find(used.begin(), used.end(), k) == used.end()) {
          if (std::holds_alternative<UnitAttr>(v)) rest.push_back(k);
          else rest.push_back(fmt::format("{} = {}", k, attr_str(v)));
        }
      if (!rest.empty()) s += fmt::format(" {{{}}}", fmt::join(rest, ", "));
      return emit(s + " : " + functional_type(op));
    }
    case OpKind::kReduce: {
      auto* dims = a.get_if<I64s>("dimensions");
      size_t n = op.operands.size() / 2;
      if (!dims || a.map().size() != 1 || n == 0 || op.operands.size() % 2 || op.regions.size() != 1 ||
          op.regions[0]->args.size() != 2 * n)
        return false;
      std::vector<std::string> ins;
      for (size_t i = 0; i < n; ++i)
        ins.push_back(fmt::format("({} init: {})", name(op.operands[i]), name(op.operands[n + i])));
      std::string head = fmt::format("{}{}", mn, fmt::join(ins, ", "));
      if (const Op* c = compact_reducer(op)) {
        return emit(fmt::format("{} applies {} across dimensions = {} : {}", head, c->name(), ints_str(*dims),
                                functional_type(op)));
      }
      out_ += fmt::format("{} across dimensions = {} : {}\n{} reducer", head, ints_str(*dims), functional_type(op),
                          indent_str(indent));
      const Block& b = *op.regions[0];
      for (size_t i = 0; i < n; ++i) {
        std::string x = arg_def(b.args[i].get());
        std::string y = arg_def(b.args[n + i].get());
        out_ += fmt::format("({}, {}) ", x, y);
      }
      print_region(b, indent, false);
      return true;
    }
    case OpKind::kWhile: {
      if (!a.empty() || op.operands.empty() || op.regions.size() != 2) return false;
      const Block& c = *op.regions[0];
      const Block& b = *op.regions[1];
      if (c.args.size() != op.operands.size() || b.args.size() != op.operands.size()) return false;
      std::vector<std::string> inits;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        std::string it = fresh_iter_arg();
        set_name(c.args[i].get(), it);
        set_name(b.args[i].get(), it);
        inits.push_back(fmt::format("{} = {}", it, name(op.operands[i])));
      }
      out_ += fmt::format("{}({}) : {}\n{} cond ", mn, fmt::join(inits, ", "), types_str(op.operand_types()),
                          indent_str(indent));
      print_region(c, indent, false);
      out_ += " do ";
      print_region(b, indent, false);
      return true;
    }
    case OpKind::kTuple:
      if (!a.empty()) return false;
      return emit(fmt::format("{}{}{} : {}", mn, op.operands.empty() ? "" : " ", operands_str(op),
                              op.result(0)->type.str()));
    case OpKind::kGetTupleElement: {
      auto* i = a.get_if<IntAttr>("index");
      if (!i || a.map().size() != 1) return false;
      return emit(fmt::format("{} {}[{}] : {}", mn, operands_str(op), i->value, functional_type(op)));
    }
    case OpKind::kOptimizationBarrier:
      if (!a.empty() || op.operands.empty()) return false;
      return emit(fmt::format("{} {} : {}", mn, operands_str(op), types_str(op.operand_types())));
    case OpKind::kReturn:
    case OpKind::kFuncReturn: {
      if (!a.empty()) return false;
      std::string kw = op.kind == OpKind::kReturn ? "stablehlo.return" : "return";
      if (op.operands.empty()) return emit(kw);
      return emit(fmt::format("{} {} : {}", kw, operands_str(op), types_str(op.operand_types())));
    }
    case OpKind::kCall: {
      auto* c = a.get_if<SymbolRef>("callee");
      if (!c || a.map().size() != 1) return false;
      std::vector<Type> rs = op.result_types();
      std::string res = rs.size() == 1 ? rs[0].str() : "(" + types_str(rs) + ")";
      // Inside a stablehlo op's region the default dialect is stablehlo, so `call` must be
      // spelled with its dialect there (XLA and IREE reject a bare `call`), as MLIR prints it.
      bool nested = op.parent && op.parent->parent_op;
      return emit(fmt::format("{} {}({}) : ({}) -> {}", nested ? "func.call" : "call", attr_str(*c),
                              operands_str(op),
                              types_str(op.operand_types()), res));
    }
    case OpKind::kRngBitGenerator: {
      auto* alg = a.get_if<EnumAttr>("rng_algorithm");
      if (!alg || a.map().size() != 1) return false;
      return emit(fmt::format("{} {}, algorithm = {} : {}", mn, operands_str(op), alg->value, functional_type(op)));
    }
    case OpKind::kIf:
    case OpKind::kCase:
    case OpKind::kMap:
    case OpKind::kSort:
    case OpKind::kGather:
    case OpKind::kScatter:
    case OpKind::kReduceWindow:
    case OpKind::kSelectAndScatter:
    case OpKind::kAllReduce:
      return false;
    default: break;
  }
  // Elementwise ops, reshape, dynamic_update_slice, convert, bitcast_convert.
  if (!a.empty() || op.results.size() != 1 || op.operands.empty()) return false;
  bool always_functional = op.kind == OpKind::kReshape || op.kind == OpKind::kDynamicUpdateSlice ||
                           op.kind == OpKind::kBitcastConvert;
  return emit(fmt::format("{} {} : {}", mn, operands_str(op),
                          always_functional ? functional_type(op) : same_or_functional(op)));
}

}  // namespace netspec::hlo
