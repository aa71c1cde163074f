// Modules, functions, the generic op form, attribute values and dense literals. Floats print
// as `%.6e` when that reads back exactly (MLIR's style), else with more digits; NaN and inf
// print as their bit pattern (0x7FC00000), which MLIR also uses.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "hlo/dims_fields.h"
#include "hlo/text/parser_float.h"
#include "hlo/text/printer_impl.h"

namespace netspec::hlo {

std::string indent_str(int n) { return std::string(static_cast<size_t>(n), ' '); }

std::string ints_str(const I64s& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

static std::string quote(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c == '\n') {
      o += "\\n";
    } else if (c < 0x20 || c >= 0x7F) {
      o += fmt::format("\\{:02X}", c);
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

static bool plain_symbol(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$')) return false;
  return true;
}

static std::string symbol_str(const std::string& s) { return "@" + (plain_symbol(s) ? s : quote(s)); }

// ---------------------------------------------------------------- dense literals

namespace {

template <typename F, typename Parse>
std::string float_str(F v, uint64_t bits, int hex_digits, int max_prec, Parse&& reads_back) {
  if (!std::isfinite(static_cast<double>(v))) return fmt::format("0x{:0{}X}", bits, hex_digits);
  for (int p = 6; p < max_prec; ++p) {
    std::string s = fmt::format("{:.{}e}", v, p);
    if (reads_back(s)) return s;
  }
  return fmt::format("{:.{}e}", v, max_prec);
}

// An f32 / f64 element at p: the shortest decimal (up to max_prec digits) that strtof / strtod
// reads back to the same bits, else its bits in hex.
template <typename F, typename Bits>
std::string ieee_str(const uint8_t* p, int max_prec) {
  F v;
  std::memcpy(&v, p, sizeof v);
  const Bits b = std::bit_cast<Bits>(v);
  return float_str(v, b, 2 * static_cast<int>(sizeof v), max_prec, [&](const std::string& s) {
    if constexpr (std::is_same_v<F, float>)
      return std::bit_cast<Bits>(std::strtof(s.c_str(), nullptr)) == b;
    else
      return std::bit_cast<Bits>(std::strtod(s.c_str(), nullptr)) == b;
  });
}

std::string element_str(const Tensor& t, int64_t i) {
  const auto* p = static_cast<const uint8_t*>(t.raw()) + i * static_cast<int64_t>(dtype_size(t.dtype()));
  switch (t.dtype()) {
    case DType::kI1: return *p ? "true" : "false";
    case DType::kF32: return ieee_str<float, uint32_t>(p, 9);
    case DType::kF64: return ieee_str<double, uint64_t>(p, 17);
    case DType::kBF16:
    case DType::kF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      bool bf = t.dtype() == DType::kBF16;
      float f = bf ? bf16_to_float(h) : f16_to_float(h);
      return float_str(f, h, 4, 9, [&](const std::string& s) {
        float r = std::strtof(s.c_str(), nullptr);
        return (bf ? float_to_bf16(r) : float_to_f16(r)) == h;
      });
    }
    default: break;
  }
  if (is_unsigned_integer(t.dtype())) {
    uint64_t u = 0;
    std::memcpy(&u, p, dtype_size(t.dtype()));
    return fmt::format("{}", u);
  }
  return fmt::format("{}", t.as_int64(i));
}

void nested(const Tensor& t, size_t dim, int64_t& i, std::string& o) {
  if (dim == t.shape().size()) {
    o += element_str(t, i++);
    return;
  }
  o += '[';
  for (int64_t k = 0; k < t.shape()[dim]; ++k) {
    if (k) o += ", ";
    nested(t, dim + 1, i, o);
  }
  o += ']';
}

}  // namespace

std::string dense_body(const Tensor& t) {
  int64_t n = t.numel();
  if (n == 0) return "";
  size_t es = dtype_size(t.dtype());
  const auto* p = static_cast<const uint8_t*>(t.raw());
  bool splat = true;
  for (int64_t i = 1; i < n && splat; ++i) splat = std::memcmp(p, p + i * es, es) == 0;
  if (splat) return element_str(t, 0);
  if (n > 256 && t.dtype() != DType::kI1) {  // large literals: raw little-endian bytes, as MLIR does
    std::string o = "\"0x";
    o.reserve(3 + t.nbytes() * 2 + 1);
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (size_t b = 0; b < t.nbytes(); ++b) {
      o += kHex[p[b] >> 4];
      o += kHex[p[b] & 15];
    }
    return o + "\"";
  }
  std::string o;
  int64_t i = 0;
  nested(t, 0, i, o);
  return o;
}

std::string dense_str(const Tensor& t) {
  return fmt::format("dense<{}> : tensor<{}{}{}>", dense_body(t), shape_str(t.shape()),
                     t.shape().empty() ? "" : "x", dtype_name(t.dtype()));
}

// ---------------------------------------------------------------- attributes

std::string conv_dims_str(const ConvDims& d) {
  auto side = [](int64_t a, int64_t b, const I64s& sp, char ca, char cb) {
    size_t n = sp.size() + 2;
    std::vector<std::string> slots(n, "?");
    if (a >= 0 && static_cast<size_t>(a) < n) slots[static_cast<size_t>(a)] = std::string(1, ca);
    if (b >= 0 && static_cast<size_t>(b) < n) slots[static_cast<size_t>(b)] = std::string(1, cb);
    for (size_t k = 0; k < sp.size(); ++k)
      if (sp[k] >= 0 && static_cast<size_t>(sp[k]) < n) slots[static_cast<size_t>(sp[k])] = std::to_string(k);
    return fmt::format("[{}]", fmt::join(slots, ", "));
  };
  return side(d.input_batch, d.input_feature, d.input_spatial, 'b', 'f') + "x" +
         side(d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial, 'i', 'o') + "->" +
         side(d.output_batch, d.output_feature, d.output_spatial, 'b', 'f');
}

std::string dot_algorithm_fields(const DotAlgorithm& a) {
  return fmt::format(
      "lhs_precision_type = {}, rhs_precision_type = {}, accumulation_type = {}, "
      "lhs_component_count = {}, rhs_component_count = {}, num_primitive_operations = {}, "
      "allow_imprecise_accumulation = {}",
      a.lhs_precision_type, a.rhs_precision_type, a.accumulation_type, a.lhs_component_count,
      a.rhs_component_count, a.num_primitive_operations, a.allow_imprecise_accumulation);
}

// `name = [..]` for each non-empty list field of a dimension-numbers attribute.
template <typename Dims, size_t N>
static std::vector<std::string> list_fields(const Dims& x,
                                            const std::array<DimsField<Dims>, N>& fields) {
  std::vector<std::string> fs;
  for (auto [name, member] : fields)
    if (!(x.*member).empty()) fs.push_back(fmt::format("{} = {}", name, ints_str(x.*member)));
  return fs;
}

std::string attr_str(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, IntAttr>) {
          return fmt::format("{} : {}", x.value, dtype_name(x.type));
        } else if constexpr (std::is_same_v<T, UnitAttr>) {
          return "unit";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quote(x);
        } else if constexpr (std::is_same_v<T, I64s>) {
          return x.empty() ? "array<i64>" : fmt::format("array<i64: {}>", fmt::join(x, ", "));
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          std::vector<std::string> s;
          for (bool b : x) s.push_back(b ? "true" : "false");
          return x.empty() ? "array<i1>" : fmt::format("array<i1: {}>", fmt::join(s, ", "));
        } else if constexpr (std::is_same_v<T, DenseAttr>) {
          return dense_str(x.value);
        } else if constexpr (std::is_same_v<T, EnumAttr>) {
          return fmt::format("#stablehlo<{} {}>", x.kind, x.value);
        } else if constexpr (std::is_same_v<T, std::vector<EnumAttr>>) {
          std::vector<std::string> s;
          for (const auto& e : x) s.push_back(fmt::format("#stablehlo<{} {}>", e.kind, e.value));
          return fmt::format("[{}]", fmt::join(s, ", "));
        } else if constexpr (std::is_same_v<T, SymbolRef>) {
          return symbol_str(x.name);
        } else if constexpr (std::is_same_v<T, DotDims>) {
          return fmt::format("#stablehlo.dot<{}>",
                             fmt::join(list_fields(x, kDotDimsFields), ", "));
        } else if constexpr (std::is_same_v<T, ConvDims>) {
          return fmt::format("#stablehlo.conv<{}>", conv_dims_str(x));
        } else if constexpr (std::is_same_v<T, GatherDims>) {
          std::vector<std::string> fs = list_fields(x, kGatherDimsFields);
          fs.push_back(fmt::format("index_vector_dim = {}", x.index_vector_dim));
          return fmt::format("#stablehlo.gather<{}>", fmt::join(fs, ", "));
        } else if constexpr (std::is_same_v<T, ScatterDims>) {
          std::vector<std::string> fs = list_fields(x, kScatterDimsFields);
          fs.push_back(fmt::format("index_vector_dim = {}", x.index_vector_dim));
          return fmt::format("#stablehlo.scatter<{}>", fmt::join(fs, ", "));
        } else if constexpr (std::is_same_v<T, ChannelHandle>) {
          return fmt::format("#stablehlo.channel_handle<handle = {}, type = {}>", x.handle, x.type);
        } else {
          static_assert(std::is_same_v<T, DotAlgorithm>);
          return fmt::format("#stablehlo.dot_algorithm<{}>", dot_algorithm_fields(x));
        }
      },
      v);
}

static std::string attr_dict(const Attrs& a, const std::vector<std::string>& skip = {}) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : a.map()) {
    if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
    std::string key = plain_symbol(k) ? k : quote(k);
    if (std::holds_alternative<UnitAttr>(v)) parts.push_back(key);
    else parts.push_back(fmt::format("{} = {}", key, attr_str(v)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// ---------------------------------------------------------------- values and ops

std::string Printer::name(const Value* v) const {
  auto it = names_.find(v);
  return it == names_.end() ? "%<<UNKNOWN>>" : it->second;
}

std::string Printer::operands_str(const Op& op, size_t from, size_t to) const {
  std::string s;
  for (size_t i = from; i < op.operands.size() && i < to; ++i) s += (i > from ? ", " : "") + name(op.operands[i]);
  return s;
}

std::string Printer::arg_def(const Value* v) {
  std::string n = fmt::format("%arg{}", next_arg_++);
  names_[v] = n;
  return n + ": " + v->type.str();
}

std::string Printer::fresh_iter_arg() {
  int k = next_iter_++;
  return k == 0 ? "%iterArg" : fmt::format("%iterArg_{}", k - 1);
}

void Printer::name_results(const Op& op) {
  if (op.results.empty()) return;
  int id = next_value_++;
  if (op.results.size() == 1) {
    names_[op.results[0].get()] = fmt::format("%{}", id);
  } else {
    for (size_t i = 0; i < op.results.size(); ++i) names_[op.results[i].get()] = fmt::format("%{}#{}", id, i);
  }
  if (!op.results.empty()) {
    out_ += op.results.size() == 1 ? fmt::format("%{} = ", id) : fmt::format("%{}:{} = ", id, op.results.size());
  }
}

std::string functional_type(const Op& op) {
  std::vector<Type> rs = op.result_types();
  std::string res = rs.size() == 1 ? rs[0].str() : "(" + types_str(rs) + ")";
  return fmt::format("({}) -> {}", types_str(op.operand_types()), res);
}

void Printer::print_op(const Op& op, int indent) {
  out_ += indent_str(indent);
  name_results(op);
  size_t after_names = out_.size();
  if (!opts_.generic && print_custom_op(op, indent)) {
    out_ += '\n';
    return;
  }
  out_.resize(after_names);  // a custom printer that declined wrote nothing, but be sure
  print_generic_op(op, indent);
  out_ += '\n';
}

void Printer::print_generic_op(const Op& op, int indent) {
  out_ += fmt::format("\"{}\"({})", op.name(), operands_str(op));
  if (!op.attrs.empty()) out_ += fmt::format(" <{{{}}}>", attr_dict(op.attrs));
  if (!op.regions.empty()) {
    out_ += " (";
    for (size_t i = 0; i < op.regions.size(); ++i) {
      if (i) out_ += ", ";
      print_region(*op.regions[i], indent, true);
    }
    out_ += ")";
  }
  out_ += " : " + functional_type(op);
}

void Printer::print_block_ops(const Block& b, int indent) {
  for (const auto& op : b.ops) print_op(*op, indent);
}

void Printer::print_region(const Block& b, int indent, bool label) {
  out_ += "{\n";
  if (label && !b.args.empty()) {
    std::vector<std::string> defs;
    for (const auto& a : b.args) defs.push_back(arg_def(a.get()));
    out_ += fmt::format("{}^bb0({}):\n", indent_str(indent), fmt::join(defs, ", "));
  }
  print_block_ops(b, indent + 2);
  out_ += indent_str(indent) + "}";
}

void Printer::print_func(const Func& f, int indent) {
  next_value_ = next_arg_ = next_iter_ = 0;
  names_.clear();
  std::string in = indent_str(indent);
  std::string res = f.result_types.size() == 1 ? f.result_types[0].str() : "(" + types_str(f.result_types) + ")";
  if (opts_.generic) {
    std::string fty = fmt::format("({}) -> {}", types_str(f.arg_types()), res);
    std::string vis = f.is_public ? "" : ", sym_visibility = \"private\"";
    out_ += fmt::format("{}\"func.func\"() <{{function_type = {}, sym_name = {}{}}}> (", in, fty, quote(f.name), vis);
    print_region(*f.body, indent, true);
    out_ += ") : () -> ()\n";
    return;
  }
  std::vector<std::string> args;
  for (const auto& a : f.body->args) args.push_back(arg_def(a.get()));
  out_ += fmt::format("{}func.func {} {}({})", in, f.is_public ? "public" : "private", symbol_str(f.name),
                      fmt::join(args, ", "));
  if (!f.result_types.empty()) out_ += " -> " + res;
  out_ += " {\n";
  print_block_ops(*f.body, indent + 2);
  out_ += in + "}\n";
}

void Printer::print_module(const Module& m) {
  if (opts_.generic) {
    out_ += "\"builtin.module\"()";
    if (!m.name.empty()) out_ += fmt::format(" <{{sym_name = {}}}>", quote(m.name));
    out_ += " ({\n";
    for (const auto& f : m.funcs) print_func(*f, 2);
    out_ += "}) : () -> ()\n";
    return;
  }
  out_ += m.name.empty() ? "module {\n" : fmt::format("module {} {{\n", symbol_str(m.name));
  for (const auto& f : m.funcs) print_func(*f, 2);
  out_ += "}\n";
}

std::string print_module(const Module& m, const PrintOptions& opts) {
  Printer p(opts);
  p.print_module(m);
  return p.take();
}

std::string print_func(const Func& f, const PrintOptions& opts) {
  Printer p(opts);
  p.print_func(f, 0);
  return p.take();
}

}  // namespace netspec::hlo
