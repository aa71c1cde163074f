// Attribute values: integers, booleans, strings, arrays, dense literals (nested, splat, hex),
// #stablehlo enums and dimension-number attributes. Unknown attribute kinds are skipped.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>

#include "hlo/dims_fields.h"
#include "hlo/text/parser_float.h"
#include "hlo/text/parser_impl.h"

namespace netspec::hlo {
namespace {

// Integer-array attributes that older files spell as dense<[...]> : tensor<Nxi64>.
const std::set<std::string, std::less<>> kI64ArrayAttrs = {
    "broadcast_dimensions", "permutation",     "dimensions",       "start_indices",
    "limit_indices",        "strides",         "slice_sizes",      "edge_padding_low",
    "edge_padding_high",    "interior_padding", "window_dimensions", "window_strides",
    "base_dilations",       "window_dilations", "lhs_dilation",     "rhs_dilation"};

int hex_val(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

struct Leaf {
  Token tok;
  size_t level = 0;  // nesting depth; all leaves of a rectangular literal share it
};

}  // namespace

std::string Parser::parse_enum_value(std::string_view kind) {
  expect("<", "opening a #stablehlo enum");
  std::string k = expect_ident("an enum kind");
  if (!kind.empty() && k != kind) error_here(fmt::format("expected #stablehlo<{} ...> (got {})", kind, k));
  std::string v = expect_ident("an enum value");
  expect(">", "closing a #stablehlo enum");
  return v;
}

static void parse_conv_side(Parser& p, int64_t& a, int64_t& b, I64s& spatial, char ca, char cb) {
  p.expect("[", "opening convolution dimension numbers");
  std::vector<std::pair<int64_t, int64_t>> sp;  // (spatial index, position)
  bool seen_a = false, seen_b = false;
  int64_t pos = 0;
  Location loc = p.peek().loc;
  if (!p.peek().punct("]")) {
    do {
      const Token& t = p.peek();
      if (t.kind == Tok::kInt) {
        int64_t idx = p.parse_int("spatial dimension");
        if (idx < 0 || idx > 64) p.error(loc, "bad spatial dimension in convolution dimension numbers");
        sp.push_back({idx, pos});
      } else {
        std::string s = p.expect_ident("a convolution dimension letter");
        if (s.size() == 1 && s[0] == ca && !seen_a) {
          a = pos;
          seen_a = true;
        } else if (s.size() == 1 && s[0] == cb && !seen_b) {
          b = pos;
          seen_b = true;
        } else {
          p.error(loc, fmt::format("unexpected '{}' in convolution dimension numbers", s));
        }
      }
      ++pos;
      if (pos > 66) p.error(loc, "too many convolution dimensions");
    } while (p.accept(","));
  }
  p.expect("]", "closing convolution dimension numbers");
  if (!seen_a || !seen_b)
    p.error(loc, fmt::format("convolution dimension numbers need '{}' and '{}'", ca, cb));
  spatial.assign(sp.size(), -1);
  for (auto [idx, at] : sp) {
    if (idx >= static_cast<int64_t>(sp.size()) || spatial[idx] != -1)
      p.error(loc, "spatial dimensions must be 0..n-1, each once");
    spatial[idx] = at;
  }
}

// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`
ConvDims parse_conv_dims(Parser& p) {
  ConvDims d;
  parse_conv_side(p, d.input_batch, d.input_feature, d.input_spatial, 'b', 'f');
  p.expect_kw("x", "between convolution dimension numbers");
  parse_conv_side(p, d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial, 'i', 'o');
  p.expect("->", "in convolution dimension numbers");
  parse_conv_side(p, d.output_batch, d.output_feature, d.output_spatial, 'b', 'f');
  return d;
}

// Fields `name = [..]` / `name = N` inside #stablehlo.dot<...>, gather<...>, scatter<...>.
template <typename F>
static void parse_fields(Parser& p, std::string_view what, F&& on_field) {
  p.expect("<", fmt::format("opening #stablehlo.{}", what));
  if (p.accept(">")) return;
  do {
    Location loc = p.peek().loc;
    std::string name = p.expect_ident("a field name");
    p.expect("=", "after a field name");
    if (!on_field(name)) p.error(loc, fmt::format("unknown field '{}' in #stablehlo.{}", name, what));
  } while (p.accept(","));
  p.expect(">", fmt::format("closing #stablehlo.{}", what));
}

// Reads the list field `name` of d when fields hold it; false when they do not.
template <typename Dims, size_t N>
static bool parse_list_field(Parser& p, const std::string& name, Dims& d,
                             const std::array<DimsField<Dims>, N>& fields) {
  for (auto [n, member] : fields)
    if (name == n) {
      d.*member = p.parse_int_list(name);
      return true;
    }
  return false;
}

// #stablehlo.gather<...> / scatter<...>: the list fields of `fields` and index_vector_dim.
template <typename Dims, size_t N>
static Dims parse_indexing_dims(Parser& p, std::string_view what,
                                const std::array<DimsField<Dims>, N>& fields) {
  Dims d;
  parse_fields(p, what, [&](const std::string& n) {
    if (n != "index_vector_dim") return parse_list_field(p, n, d, fields);
    d.index_vector_dim = p.parse_int(n);
    return true;
  });
  return d;
}

// `array<i64: 1, 2>`, `array<i1: true>` (after `array`).
AttrValue Parser::parse_array_attr(Location loc) {
  expect("<", "after 'array'");
  std::string et = expect_ident("an array element type");
  if (et != "i64" && et != "i1" && et != "i32") error(loc, fmt::format("unsupported array<{}>", et));
  I64s ints;
  std::vector<bool> bools;
  if (accept(":")) {
    do {
      if (et == "i1") {
        if (accept_kw("true")) bools.push_back(true);
        else if (accept_kw("false")) bools.push_back(false);
        else bools.push_back(parse_int("array element") != 0);
      } else {
        if (ints.size() > (1u << 24)) error(loc, "array too long");
        ints.push_back(parse_int("array element"));
      }
    } while (accept(","));
  }
  expect(">", "closing array<...>");
  if (et == "i1") return bools;
  return ints;
}

// `<lhs_precision_type = tf32, ..., allow_imprecise_accumulation = false>`: the body of
// #stablehlo.dot_algorithm and of dot_general's pretty `algorithm = <...>`.
DotAlgorithm parse_dot_algorithm(Parser& p) {
  DotAlgorithm a;
  Location loc = p.peek().loc;
  parse_fields(p, "dot_algorithm", [&](const std::string& n) {
    if (n == "lhs_precision_type")
      a.lhs_precision_type = p.expect_ident("a precision type");
    else if (n == "rhs_precision_type")
      a.rhs_precision_type = p.expect_ident("a precision type");
    else if (n == "accumulation_type")
      a.accumulation_type = p.expect_ident("an accumulation type");
    else if (n == "lhs_component_count")
      a.lhs_component_count = p.parse_int(n);
    else if (n == "rhs_component_count")
      a.rhs_component_count = p.parse_int(n);
    else if (n == "num_primitive_operations")
      a.num_primitive_operations = p.parse_int(n);
    else if (n == "allow_imprecise_accumulation") {
      if (p.accept_kw("true"))
        a.allow_imprecise_accumulation = true;
      else if (p.accept_kw("false"))
        a.allow_imprecise_accumulation = false;
      else
        p.error_here(fmt::format("expected true or false (got '{}')", p.peek().text));
    } else {
      return false;
    }
    return true;
  });
  if (a.lhs_precision_type.empty() || a.rhs_precision_type.empty() || a.accumulation_type.empty())
    p.error(loc,
            "a dot algorithm needs lhs_precision_type, rhs_precision_type and accumulation_type");
  return a;
}

// `#stablehlo<kind VALUE>` enums and the #stablehlo.dot/conv/gather/scatter/channel_handle
// attributes; other dialects' attributes are skipped (nullopt).
std::optional<AttrValue> Parser::parse_hash_attr(Location loc) {
  std::string h = next().text;
  if (h == "stablehlo" && peek().punct("<")) {
    expect("<", "opening a #stablehlo enum");
    std::string kind = expect_ident("an enum kind");
    std::string v = expect_ident("an enum value");
    expect(">", "closing a #stablehlo enum");
    return EnumAttr{kind, v};
  }
  if (h == "stablehlo.dot") {
    DotDims d;
    parse_fields(*this, "dot", [&](const std::string& n) {
      return parse_list_field(*this, n, d, kDotDimsFields);
    });
    return d;
  }
  if (h == "stablehlo.conv") {
    expect("<", "opening #stablehlo.conv");
    ConvDims d;
    if (accept_kw("raw")) error(loc, "#stablehlo.conv<raw ...> is not supported; use the [b, 0, f]x... form");
    d = parse_conv_dims(*this);
    expect(">", "closing #stablehlo.conv");
    return d;
  }
  if (h == "stablehlo.gather") return parse_indexing_dims(*this, "gather", kGatherDimsFields);
  if (h == "stablehlo.scatter") return parse_indexing_dims(*this, "scatter", kScatterDimsFields);
  if (h == "stablehlo.dot_algorithm") return parse_dot_algorithm(*this);
  if (h == "stablehlo.channel_handle") {
    ChannelHandle c;
    parse_fields(*this, "channel_handle", [&](const std::string& n) {
      if (n == "handle") c.handle = parse_int(n);
      else if (n == "type") c.type = parse_int(n);
      else return false;
      return true;
    });
    return c;
  }
  if (peek().punct("<")) {  // another dialect's attribute
    next();
    skip_balanced_value();
    expect(">", "closing an attribute");
  }
  return std::nullopt;
}

std::optional<AttrValue> Parser::parse_attr_value() {
  DepthGuard g(*this, peek().loc);
  const Token& t = peek();
  Location loc = t.loc;
  if (t.kind == Tok::kInt) {
    int64_t v = parse_int("attribute");
    if (!accept(":")) return IntAttr{v, DType::kI64};
    Location tl = peek().loc;
    std::string ty = expect_ident("an integer type");
    auto dt = dtype_from_name(ty);
    if (!dt) error(tl, fmt::format("unknown type '{}'", ty));
    if (is_float(*dt)) return std::nullopt;
    if (*dt == DType::kI1) return v != 0;
    // The value must fit its declared width (an i32 attribute of 2^32 would not print back).
    if (int bits = dtype_bits(*dt); bits < 64) {
      bool u = is_unsigned_integer(*dt);
      int64_t lo = u ? 0 : -(int64_t{1} << (bits - 1));
      int64_t hi = u ? (int64_t{1} << bits) - 1 : (int64_t{1} << (bits - 1)) - 1;
      if (v < lo || v > hi) error(loc, fmt::format("attribute value {} does not fit {}", v, ty));
    }
    return IntAttr{v, *dt};
  }
  if (t.kind == Tok::kFloat) {
    next();
    if (accept(":")) expect_ident("a float type");
    return std::nullopt;
  }
  if (t.kind == Tok::kString) return next().text;
  if (t.kind == Tok::kAtId) return SymbolRef{next().text};
  if (t.kind == Tok::kIdent) {
    std::string id = next().text;
    if (id == "true") return true;
    if (id == "false") return false;
    if (id == "unit") return UnitAttr{};
    if (id == "array") return parse_array_attr(loc);
    if (id == "dense") {
      expect("<", "after 'dense'");
      Tensor v = parse_dense_literal(Type(), loc);
      return DenseAttr{std::move(v)};
    }
    if (id == "loc") {
      expect("(", "after 'loc'");
      skip_balanced_value();
      expect(")", "closing 'loc('");
      return std::nullopt;
    }
    // Other bare keywords (type attributes, affine maps): skip what follows.
    if (peek().punct("<")) {
      next();
      skip_balanced_value();
      expect(">", "closing an attribute");
    }
    return std::nullopt;
  }
  if (t.kind == Tok::kHashId) return parse_hash_attr(loc);
  if (t.punct("[")) {
    next();
    std::vector<EnumAttr> enums;
    bool all_enums = true;
    if (!accept("]")) {
      do {
        if (peek().kind == Tok::kIdent && !peek().is(Tok::kIdent, "true") &&
            !peek().is(Tok::kIdent, "false") && !peek().is(Tok::kIdent, "array") &&
            !peek().is(Tok::kIdent, "dense")) {
          // bare enum value inside a list of precisions, e.g. [DEFAULT, HIGH]
          enums.push_back(EnumAttr{"precision", next().text});
          continue;
        }
        auto v = parse_attr_value();
        auto* e = v ? std::get_if<EnumAttr>(&*v) : nullptr;
        if (e) enums.push_back(*e);
        else all_enums = false;
      } while (accept(","));
      expect("]", "closing a list attribute");
    }
    if (!all_enums) return std::nullopt;
    return enums;
  }
  if (t.punct("{") || t.punct("(")) {
    std::string close = t.text == "{" ? "}" : ")";
    next();
    skip_balanced_value();
    while (accept(",")) skip_balanced_value();
    expect(close, "closing an attribute");
    if (close == ")" && accept("->")) skip_balanced_value();  // function type attribute
    return std::nullopt;
  }
  error(loc, fmt::format("expected an attribute value (got '{}')", t.text));
}

void Parser::parse_attr_dict(Attrs& attrs, std::string_view close) {
  expect("{", "opening an attribute dictionary");
  if (accept(close)) return;
  do {
    const Token& k = peek();
    if (k.kind != Tok::kIdent && k.kind != Tok::kString)
      error_here(fmt::format("expected an attribute name (got '{}')", k.text));
    Token key = next();
    std::optional<AttrValue> v = UnitAttr{};
    if (accept("=")) v = parse_attr_value();
    if (!v || key.text.find('.') != std::string::npos) continue;
    if (kI64ArrayAttrs.count(key.text)) {
      if (auto* d = std::get_if<DenseAttr>(&*v); d && d->value.rank() <= 1 && is_integer(d->value.dtype())) {
        I64s ints;
        for (int64_t i = 0; i < d->value.numel(); ++i) ints.push_back(d->value.as_int64(i));
        v = ints;
      }
    }
    if (key.text == "window_reversal") {
      if (auto* d = std::get_if<DenseAttr>(&*v); d && d->value.rank() <= 1) {
        std::vector<bool> bs;
        for (int64_t i = 0; i < d->value.numel(); ++i) bs.push_back(d->value.as_int64(i) != 0);
        v = bs;
      }
    }
    attrs.set(key.text, std::move(*v));
  } while (accept(","));
  expect(close, "closing an attribute dictionary");
}

// ---------------------------------------------------------------- dense literals

namespace {

void collect(Parser& p, std::vector<Leaf>& leaves, Shape& shape, size_t level, bool& has_list,
             int64_t max_leaves) {
  Parser::DepthGuard g(p, p.peek().loc);
  if (p.peek().punct("[")) {
    has_list = true;
    Location loc = p.next().loc;
    int64_t n = 0;
    if (!p.peek().punct("]")) {
      do {
        collect(p, leaves, shape, level + 1, has_list, max_leaves);
        ++n;
      } while (p.accept(","));
    }
    p.expect("]", "closing a dense literal row");
    if (shape.size() <= level) shape.resize(level + 1, -1);
    if (shape[level] == -1) {
      shape[level] = n;
    } else if (shape[level] != n) {
      p.error(loc, fmt::format("ragged dense literal (row of {} elements, expected {})", n, shape[level]));
    }
    return;
  }
  Leaf leaf;
  const Token& t = p.peek();
  if (t.punct("-")) {  // `-0x7FC00000` is not MLIR, but `- 1.0` never occurs either
    p.error(t.loc, "unexpected '-' in a dense literal");
  }
  if (t.kind != Tok::kInt && t.kind != Tok::kFloat && !t.is(Tok::kIdent, "true") &&
      !t.is(Tok::kIdent, "false"))
    p.error(t.loc, fmt::format("expected a dense literal element (got '{}')", t.text));
  if (static_cast<int64_t>(leaves.size()) >= max_leaves) p.error(t.loc, "dense literal too large");
  leaf.level = level;
  leaf.tok = p.next();
  leaves.push_back(std::move(leaf));
}

}  // namespace

Tensor Parser::parse_dense_literal(const Type&, Location loc) {
  // Contents first (the type comes after `>`), then the type, then the conversion.
  std::vector<Leaf> leaves;
  Shape lit_shape;
  bool has_list = false;
  std::string hex;
  bool is_hex = false;
  Location hex_loc{};
  if (peek().kind == Tok::kString) {
    hex_loc = peek().loc;
    hex = next().text;
    is_hex = true;
  } else if (!peek().punct(">")) {
    collect(*this, leaves, lit_shape, 0, has_list, kMaxDenseBytes);
  }
  expect(">", "closing dense<...>");
  expect(":", "before the dense literal's type");
  Location tloc = peek().loc;
  Type type = parse_type();
  if (!type.is_tensor()) error(tloc, "dense literal needs a tensor type");
  DType dt = type.dtype();
  int64_t numel = type.numel();
  int64_t esize = static_cast<int64_t>(dtype_size(dt));
  if (numel > kMaxDenseBytes / esize) error(tloc, fmt::format("dense literal of {} too large", type.str()));
  Tensor out(dt, type.shape());
  auto* bytes = static_cast<uint8_t*>(out.raw());
  if (is_hex) {
    if (hex.size() < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X') || hex.size() % 2)
      error(hex_loc, "hex dense literal must look like \"0x0011...\"");
    size_t nb = (hex.size() - 2) / 2;
    std::vector<uint8_t> raw(nb);
    for (size_t i = 0; i < nb; ++i) {
      int hi = hex_val(hex[2 + 2 * i]), lo = hex_val(hex[3 + 2 * i]);
      if (hi < 0 || lo < 0) error(hex_loc, "bad hex digit in dense literal");
      raw[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    size_t total = static_cast<size_t>(numel * esize);
    if (nb == total) {
      if (total) std::memcpy(bytes, raw.data(), total);
    } else if (nb == static_cast<size_t>(esize) && numel > 0) {
      for (int64_t i = 0; i < numel; ++i) std::memcpy(bytes + i * esize, raw.data(), esize);
    } else if (dt == DType::kI1 && nb == static_cast<size_t>((numel + 7) / 8)) {
      for (int64_t i = 0; i < numel; ++i) bytes[i] = (raw[i / 8] >> (i % 8)) & 1;
    } else {
      error(hex_loc, fmt::format("hex dense literal has {} bytes (expected {} for {})", nb, total, type.str()));
    }
    if (dt == DType::kI1)
      for (int64_t i = 0; i < numel; ++i) bytes[i] = bytes[i] != 0;
    return out;
  }
  bool splat = !has_list && leaves.size() == 1;
  for (const auto& l : leaves)
    if (l.level != lit_shape.size()) error(l.tok.loc, "ragged dense literal");
  for (int64_t d : lit_shape)
    if (d < 0) error(loc, "ragged dense literal");
  if (!splat) {
    if (!has_list && leaves.empty()) lit_shape = {};
    if (lit_shape != type.shape() && !(leaves.empty() && numel == 0))
      error(loc, fmt::format("dense literal of shape [{}] does not match {}", fmt::join(lit_shape, ", "), type.str()));
    if (static_cast<int64_t>(leaves.size()) != numel)
      error(loc, fmt::format("dense literal has {} elements (expected {})", leaves.size(), numel));
  }
  auto convert = [&](const Token& tk, uint8_t* dst) {
    const std::string& s = tk.text;
    if (dt == DType::kI1) {
      if (tk.is(Tok::kIdent, "true")) *dst = 1;
      else if (tk.is(Tok::kIdent, "false")) *dst = 0;
      else if (tk.kind == Tok::kInt && (s == "0" || s == "1")) *dst = s == "1";
      else error(tk.loc, fmt::format("expected true or false for i1 (got {})", s));
      return;
    }
    if (tk.kind == Tok::kIdent) error(tk.loc, fmt::format("'{}' is not a {} value", s, dtype_name(dt)));
    bool hexbits = tk.kind == Tok::kInt && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    if (is_integer(dt)) {
      if (tk.kind != Tok::kInt) error(tk.loc, fmt::format("expected an integer for {} (got {})", dtype_name(dt), s));
      bool neg = s[0] == '-';
      uint64_t u = 0;
      std::string_view digits = std::string_view(s).substr(neg ? 1 : 0);
      int base = 10;
      if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        digits.remove_prefix(2);
        base = 16;
      }
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
      int bits = dtype_bits(dt);
      bool ok = ec == std::errc() && p == digits.data() + digits.size();
      if (ok && is_unsigned_integer(dt)) ok = !neg && (bits == 64 || u < (uint64_t{1} << bits));
      else if (ok && base == 16) ok = !neg && (bits == 64 || u < (uint64_t{1} << bits));
      else if (ok) ok = neg ? u <= (uint64_t{1} << (bits - 1)) : u < (uint64_t{1} << (bits - 1));
      if (!ok) error(tk.loc, fmt::format("{} out of range for {}", s, dtype_name(dt)));
      uint64_t bitsval = neg ? 0 - u : u;
      std::memcpy(dst, &bitsval, static_cast<size_t>(esize));  // little-endian truncation
      return;
    }
    // floats
    if (hexbits) {
      if (s.size() - 2 > static_cast<size_t>(esize) * 2) error(tk.loc, fmt::format("hex float {} too wide for {}", s, dtype_name(dt)));
      uint64_t u = std::strtoull(s.c_str() + 2, nullptr, 16);
      std::memcpy(dst, &u, static_cast<size_t>(esize));
      return;
    }
    if (s[0] == '-' && s.size() > 3 && s[1] == '0' && (s[2] == 'x' || s[2] == 'X'))
      error(tk.loc, "negative hex float literal");
    // A decimal literal past the type's largest finite value is refused (as MLIR does), not
    // read as inf; infinities are written as hex bits.
    auto overflow = [&] {
      error(tk.loc, fmt::format("{} is out of range for {} (it would round to infinity)", s,
                                dtype_name(dt)));
    };
    if (dt == DType::kF32) {
      float f = std::strtof(s.c_str(), nullptr);
      if (std::isinf(f)) overflow();
      std::memcpy(dst, &f, 4);
    } else if (dt == DType::kF64) {
      double d = std::strtod(s.c_str(), nullptr);
      if (std::isinf(d)) overflow();
      std::memcpy(dst, &d, 8);
    } else {
      float f = std::strtof(s.c_str(), nullptr);
      uint16_t h = dt == DType::kBF16 ? float_to_bf16(f) : float_to_f16(f);
      // Exponent all ones with a zero mantissa: ±inf in both 16-bit formats.
      const bool inf16 = dt == DType::kBF16 ? (h & 0x7fff) == 0x7f80 : (h & 0x7fff) == 0x7c00;
      if (std::isinf(f) || inf16) overflow();
      std::memcpy(dst, &h, 2);
    }
  };
  if (splat) {
    if (numel == 0) return out;
    convert(leaves[0].tok, bytes);
    for (int64_t i = 1; i < numel; ++i) std::memcpy(bytes + i * esize, bytes, static_cast<size_t>(esize));
    return out;
  }
  for (int64_t i = 0; i < numel; ++i) convert(leaves[static_cast<size_t>(i)].tok, bytes + i * esize);
  return out;
}

}  // namespace netspec::hlo
