// The pretty (custom) syntaxes of StableHLO ops, as stablehlo-opt and JAX print them:
// `stablehlo.add %a, %b : T`, `stablehlo.compare LT, %a, %b, FLOAT : (..) -> ..`, slices
// `[0:2, 1:3:2]`, dot_general/convolution dimension syntax, reduce `applies ... across` and
// `reducer(...)`, while `cond {..} do {..}`, tuple/get_tuple_element, call and return.
#include <fmt/format.h>

#include "hlo/parser_impl.h"

namespace netspec::hlo {

ConvDims parse_conv_dims(Parser& p);  // parser_attrs.cpp

namespace {

// Operands up to the first non-value after a comma; `*comma` tells whether a comma was eaten.
std::vector<Value*> operands_then(Parser& p, bool* comma) {
  std::vector<Value*> vs;
  *comma = false;
  if (p.peek().kind != Tok::kPercentId) return vs;
  for (;;) {
    vs.push_back(p.parse_operand());
    if (!p.accept(",")) return vs;
    if (p.peek().kind != Tok::kPercentId) {
      *comma = true;
      return vs;
    }
  }
}

void check_operand_types(Parser& p, const std::vector<Value*>& ops, const std::vector<Type>& ins,
                         Location loc) {
  if (ins.size() != ops.size())
    p.error(loc, fmt::format("{} operands but {} operand types", ops.size(), ins.size()));
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i] != ops[i]->type)
      p.error(loc, fmt::format("operand #{} has type {} (got {} in the op's type)", i,
                               ops[i]->type.str(), ins[i].str()));
}

// `: T` (operands and the result share T) or `: (T, ...) -> R`.
std::vector<Type> same_or_functional(Parser& p, const std::vector<Value*>& ops, Location loc) {
  p.expect(":", "before the op's type");
  if (p.peek().punct("(")) {
    auto [ins, outs] = p.parse_function_type();
    check_operand_types(p, ops, ins, loc);
    return outs;
  }
  Type t = p.parse_type();
  check_operand_types(p, ops, std::vector<Type>(ops.size(), t), loc);
  return {t};
}

std::vector<Type> functional(Parser& p, const std::vector<Value*>& ops, Location loc) {
  p.expect(":", "before the op's type");
  auto [ins, outs] = p.parse_function_type();
  check_operand_types(p, ops, ins, loc);
  return outs;
}

void opt_attrs(Parser& p, Attrs& a) {
  if (p.peek().punct("{")) p.parse_attr_dict(a);
}

void keyword_eq(Parser& p, std::string_view kw) {
  p.expect_kw(kw, "in the op's custom syntax");
  p.expect("=", fmt::format("after '{}'", kw));
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

Tensor pairs_tensor(const std::vector<I64s>& rows) {
  std::vector<int64_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return Tensor::from<int64_t>(DType::kI64, {static_cast<int64_t>(rows.size()), 2}, flat);
}

}  // namespace

Op* Parser::parse_custom_op(Block* block, OpKind kind, Location loc) {
  Attrs a;
  std::vector<Value*> ops;
  std::vector<Type> types;
  std::vector<std::unique_ptr<Block>> regions;
  bool comma = false;
  auto done = [&]() {
    return create_op(block, kind, std::move(ops), std::move(a), std::move(types), std::move(regions), loc);
  };
  auto need_comma = [&](std::string_view what) {
    if (!comma) error_here(fmt::format("expected ', {}' (got '{}')", what, peek().text));
  };
  switch (kind) {
    case OpKind::kConstant: {
      opt_attrs(*this, a);
      Location vloc = peek().loc;
      if (!peek().is(Tok::kIdent, "dense")) error_here("expected dense<...> after stablehlo.constant");
      auto v = parse_attr_value();
      auto* d = v ? std::get_if<DenseAttr>(&*v) : nullptr;
      if (!d) error(vloc, "expected dense<...> after stablehlo.constant");
      types = {Type::tensor(d->value.dtype(), d->value.shape())};
      a.set("value", *d);
      return done();
    }
    case OpKind::kIota:
      keyword_eq(*this, "dim");
      a.set("iota_dimension", IntAttr{parse_int("iota dimension"), DType::kI64});
      opt_attrs(*this, a);
      expect(":", "before the iota type");
      types = {parse_type()};
      return done();
    case OpKind::kCompare: {
      std::string dir = expect_ident("a comparison direction");
      expect(",", "after the comparison direction");
      ops = operands_then(*this, &comma);
      a.set("comparison_direction", EnumAttr{"comparison_direction", dir});
      if (comma) a.set("compare_type", EnumAttr{"comparison_type", expect_ident("a compare type")});
      opt_attrs(*this, a);
      types = same_or_functional(*this, ops, loc);
      return done();
    }
    case OpKind::kSelect: {
      ops = operands_then(*this, &comma);
      opt_attrs(*this, a);
      expect(":", "before the op's type");
      if (peek().punct("(")) {
        auto [ins, outs] = parse_function_type();
        check_operand_types(*this, ops, ins, loc);
        types = outs;
      } else {
        std::vector<Type> ts = parse_type_list();
        if (ts.size() != 2 || ops.size() != 3) error(loc, "select takes `%pred, %a, %b : pred_type, type`");
        check_operand_types(*this, ops, {ts[0], ts[1], ts[1]}, loc);
        types = {ts[1]};
      }
      return done();
    }
    case OpKind::kReducePrecision: {
      ops = operands_then(*this, &comma);
      need_comma("format = eXmY");
      keyword_eq(*this, "format");
      Location floc = peek().loc;
      std::string f = expect_ident("a format like e5m10");
      int e = 0, m = 0;
      if (std::sscanf(f.c_str(), "e%dm%d", &e, &m) != 2 || fmt::format("e{}m{}", e, m) != f)
        error(floc, fmt::format("bad reduce_precision format '{}' (expected eXmY)", f));
      a.set("exponent_bits", IntAttr{e, DType::kI32});
      a.set("mantissa_bits", IntAttr{m, DType::kI32});
      opt_attrs(*this, a);
      types = same_or_functional(*this, ops, loc);
      return done();
    }
    case OpKind::kBroadcastInDim:
    case OpKind::kTranspose:
    case OpKind::kReverse: {
      ops = operands_then(*this, &comma);
      need_comma("dims = [...]");
      keyword_eq(*this, "dims");
      std::string name = kind == OpKind::kBroadcastInDim ? "broadcast_dimensions"
                         : kind == OpKind::kTranspose    ? "permutation"
                                                         : "dimensions";
      a.set(name, parse_int_list("dims"));
      opt_attrs(*this, a);
      types = same_or_functional(*this, ops, loc);
      return done();
    }
    case OpKind::kSlice: {
      ops = operands_then(*this, &comma);
      expect("[", "opening the slice ranges");
      I64s start, limit, strides;
      if (!accept("]")) {
        do {
          start.push_back(parse_int("slice start"));
          expect(":", "in a slice range");
          limit.push_back(parse_int("slice limit"));
          strides.push_back(accept(":") ? parse_int("slice stride") : 1);
        } while (accept(","));
        expect("]", "closing the slice ranges");
      }
      a.set("start_indices", start);
      a.set("limit_indices", limit);
      a.set("strides", strides);
      opt_attrs(*this, a);
      types = same_or_functional(*this, ops, loc);
      return done();
    }
    case OpKind::kDynamicSlice: {
      ops = operands_then(*this, &comma);
      need_comma("sizes = [...]");
      keyword_eq(*this, "sizes");
      a.set("slice_sizes", parse_int_list("sizes"));
      opt_attrs(*this, a);
      types = same_or_functional(*this, ops, loc);
      return done();
    }
    case OpKind::kConcatenate: {
      ops = operands_then(*this, &comma);
      need_comma("dim = N");
      keyword_eq(*this, "dim");
      a.set("dimension", IntAttr{parse_int("dimension"), DType::kI64});
      opt_attrs(*this, a);
      types = same_or_functional(*this, ops, loc);
      return done();
    }
    case OpKind::kPad: {
      ops = operands_then(*this, &comma);
      need_comma("low = [...]");
      keyword_eq(*this, "low");
      a.set("edge_padding_low", parse_int_list("low"));
      expect(",", "after low = [...]");
      keyword_eq(*this, "high");
      a.set("edge_padding_high", parse_int_list("high"));
      expect(",", "after high = [...]");
      keyword_eq(*this, "interior");
      a.set("interior_padding", parse_int_list("interior"));
      opt_attrs(*this, a);
      types = same_or_functional(*this, ops, loc);
      return done();
    }
    case OpKind::kDotGeneral: {
      ops = operands_then(*this, &comma);
      need_comma("contracting_dims = [...] x [...]");
      DotDims d;
      if (accept_kw("batching_dims")) {
        expect("=", "after batching_dims");
        d.lhs_batching = parse_int_list("batching dims");
        expect_kw("x", "between lhs and rhs batching dims");
        d.rhs_batching = parse_int_list("batching dims");
        expect(",", "after batching_dims");
      }
      keyword_eq(*this, "contracting_dims");
      d.lhs_contracting = parse_int_list("contracting dims");
      expect_kw("x", "between lhs and rhs contracting dims");
      d.rhs_contracting = parse_int_list("contracting dims");
      a.set("dot_dimension_numbers", d);
      while (accept(",")) {
        Location kl = peek().loc;
        std::string key = expect_ident("precision = [...]");
        expect("=", "after a keyword");
        if (key == "precision") a.set("precision_config", precision_list(*this));
        else error(kl, fmt::format("unsupported dot_general clause '{}'", key));
      }
      opt_attrs(*this, a);
      types = functional(*this, ops, loc);
      return done();
    }
    case OpKind::kConvolution: {
      expect("(", "opening convolution operands");
      ops = parse_operand_list();
      expect(")", "closing convolution operands");
      keyword_eq(*this, "dim_numbers");
      a.set("dimension_numbers", parse_conv_dims(*this));
      if (accept(",")) {
        keyword_eq(*this, "window");
        expect("{", "opening the convolution window");
        if (!accept("}")) {
          do {
            Location kl = peek().loc;
            std::string key = expect_ident("a window field");
            expect("=", "after a window field");
            if (key == "stride") a.set("window_strides", parse_int_list(key));
            else if (key == "lhs_dilate") a.set("lhs_dilation", parse_int_list(key));
            else if (key == "rhs_dilate") a.set("rhs_dilation", parse_int_list(key));
            else if (key == "reverse") a.set("window_reversal", parse_bool_list(key));
            else if (key == "pad") {
              expect("[", "opening the padding");
              std::vector<I64s> rows;
              if (!accept("]")) {
                do {
                  Location rl = peek().loc;
                  rows.push_back(parse_int_list("padding"));
                  if (rows.back().size() != 2) error(rl, "each padding entry is [low, high]");
                } while (accept(","));
                expect("]", "closing the padding");
              }
              a.set("padding", DenseAttr{pairs_tensor(rows)});
            } else {
              error(kl, fmt::format("unknown convolution window field '{}'", key));
            }
          } while (accept(","));
          expect("}", "closing the convolution window");
        }
      }
      opt_attrs(*this, a);
      types = functional(*this, ops, loc);
      return done();
    }
    case OpKind::kReduce: {
      std::vector<Value*> inits;
      do {
        expect("(", "opening a reduce operand");
        ops.push_back(parse_operand());
        expect_kw("init", "in a reduce operand");
        expect(":", "after 'init'");
        inits.push_back(parse_operand());
        expect(")", "closing a reduce operand");
      } while (accept(","));
      std::optional<OpKind> combiner;
      Location cl = peek().loc;
      if (accept_kw("applies")) {
        std::string cname = expect_ident("the reduction op");
        combiner = op_kind_from_name(cname);
        if (!combiner || op_family(*combiner) != "binary" || *combiner == OpKind::kCompare ||
            *combiner == OpKind::kSelect || *combiner == OpKind::kClamp)
          error(cl, fmt::format("'{}' cannot be a reduce body", cname));
      }
      expect_kw("across", "in stablehlo.reduce");
      keyword_eq(*this, "dimensions");
      a.set("dimensions", parse_int_list("dimensions"));
      size_t n = ops.size();
      ops.insert(ops.end(), inits.begin(), inits.end());
      opt_attrs(*this, a);
      types = functional(*this, ops, loc);
      if (combiner) {
        if (n != 1) error(cl, "'applies' needs a single-input reduce");
        auto body = std::make_unique<Block>();
        Type st = Type::tensor(ops[1]->type.dtype(), {});
        Value* x = body->add_arg(st);
        Value* y = body->add_arg(st);
        Op* c = create_op(body.get(), *combiner, {x, y}, {}, {}, {}, cl);
        create_op(body.get(), OpKind::kReturn, {c->result(0)}, {}, {}, {}, cl);
        regions.push_back(std::move(body));
      } else {
        expect_kw("reducer", "introducing the reduce body");
        std::vector<std::pair<std::string, Type>> acc, cur;
        for (size_t i = 0; i < n; ++i) {
          expect("(", "opening reducer arguments");
          Type t1, t2;
          std::string a1 = parse_arg_def(&t1);
          expect(",", "between reducer arguments");
          std::string a2 = parse_arg_def(&t2);
          expect(")", "closing reducer arguments");
          acc.push_back({a1, t1});
          cur.push_back({a2, t2});
        }
        acc.insert(acc.end(), cur.begin(), cur.end());
        regions.push_back(parse_region(&acc));
      }
      return done();
    }
    case OpKind::kWhile: {
      expect("(", "opening while operands");
      std::vector<std::string> names;
      std::vector<Location> locs;
      if (!accept(")")) {
        do {
          const Token& t = peek();
          if (t.kind != Tok::kPercentId) error_here("expected '%name = %value' in while operands");
          locs.push_back(t.loc);
          names.push_back(next().text);
          expect("=", "in a while operand");
          ops.push_back(parse_operand());
        } while (accept(","));
        expect(")", "closing while operands");
      }
      std::vector<Type> ts;
      if (accept(":")) ts = parse_type_list();
      check_operand_types(*this, ops, ts, loc);
      if (accept_kw("attributes")) parse_attr_dict(a);
      std::vector<std::pair<std::string, Type>> args;
      for (size_t i = 0; i < names.size(); ++i) args.push_back({names[i], ts[i]});
      expect_kw("cond", "introducing the while condition");
      regions.push_back(parse_region(&args));
      expect_kw("do", "introducing the while body");
      regions.push_back(parse_region(&args));
      types = ts;
      return done();
    }
    case OpKind::kTuple: {
      ops = operands_then(*this, &comma);
      opt_attrs(*this, a);
      expect(":", "before the tuple type");
      Location tl = peek().loc;
      types = {parse_type()};
      if (!types[0].is_tuple()) error(tl, "stablehlo.tuple needs a tuple<...> type");
      return done();
    }
    case OpKind::kGetTupleElement: {
      ops = {parse_operand()};
      expect("[", "before the tuple index");
      a.set("index", IntAttr{parse_int("tuple index"), DType::kI32});
      expect("]", "after the tuple index");
      opt_attrs(*this, a);
      types = same_or_functional(*this, ops, loc);
      return done();
    }
    case OpKind::kOptimizationBarrier:
    case OpKind::kReturn:
    case OpKind::kFuncReturn: {
      ops = operands_then(*this, &comma);
      opt_attrs(*this, a);
      if (!ops.empty()) {
        expect(":", "before the operand types");
        check_operand_types(*this, ops, parse_type_list(), loc);
      }
      if (kind == OpKind::kOptimizationBarrier)
        for (auto* v : ops) types.push_back(v->type);
      return done();
    }
    case OpKind::kCall: {
      if (peek().kind != Tok::kAtId) error_here("expected @callee after call");
      a.set("callee", SymbolRef{next().text});
      expect("(", "opening call arguments");
      ops = parse_operand_list();
      expect(")", "closing call arguments");
      opt_attrs(*this, a);
      types = functional(*this, ops, loc);
      return done();
    }
    case OpKind::kRngBitGenerator: {
      ops = operands_then(*this, &comma);
      need_comma("algorithm = ...");
      keyword_eq(*this, "algorithm");
      a.set("rng_algorithm", EnumAttr{"rng_algorithm", expect_ident("an rng algorithm")});
      opt_attrs(*this, a);
      types = functional(*this, ops, loc);
      return done();
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
      error(loc, fmt::format("'{}' has no custom syntax; write it in the generic form \"{}\"(...)",
                             op_name(kind), op_name(kind)));
    default: break;
  }
  // Elementwise ops, reshape, dynamic_update_slice: `%a, %b : T` or `: (T, ..) -> R`.
  ops = operands_then(*this, &comma);
  if (comma) error_here(fmt::format("unexpected '{}' after the operands", peek().text));
  opt_attrs(*this, a);
  types = same_or_functional(*this, ops, loc);
  return done();
}

}  // namespace netspec::hlo
