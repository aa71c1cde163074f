// The op table of the JAX emitter (translator.h): StableHLO semantics kept op for op.
#include "jax/translator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "autodiff/vjp.h"
#include "core/error.h"
#include "hlo/builder.h"
#include "jax/translate.h"

namespace netspec::jax {
namespace {

using hlo::OpKind;

// numpy's spelling: f32 -> float32, ui8 -> uint8, i1 -> bool_.
std::string np_dtype_name(DType t) {
  std::string n(dtype_name(t));
  if (t == DType::kI1) return "bool_";
  if (t == DType::kBF16) return "bfloat16";
  if (n.starts_with("ui")) return "uint" + n.substr(2);
  if (n[0] == 'f') return "float" + n.substr(1);
  return "int" + n.substr(1);
}

std::string scalar_literal(const Tensor& t, int64_t i) {
  DType d = t.dtype();
  if (is_bool(d)) return t.as_int64(i) ? "True" : "False";
  if (!is_float(d)) return fmt::format("{}", t.as_int64(i));
  double v = t.as_double(i);
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "-float('inf')";
  std::string s = d == DType::kF32 ? fmt::format("{:.9g}", v) : fmt::format("{:.17g}", v);
  return s;
}

bool is_splat(const Tensor& t) {
  for (int64_t i = 1; i < t.numel(); ++i)
    if (t.as_double(i) != t.as_double(0) &&
        !(std::isnan(t.as_double(i)) && std::isnan(t.as_double(0))))
      return false;
  return true;
}

const char* unary_fn(OpKind k) {
  switch (k) {
    case OpKind::kNegate:
      return "lax.neg";
    case OpKind::kAbs:
      return "lax.abs";
    case OpKind::kSign:
      return "lax.sign";
    case OpKind::kExponential:
      return "lax.exp";
    case OpKind::kExponentialMinusOne:
      return "lax.expm1";
    case OpKind::kLog:
      return "lax.log";
    case OpKind::kLogPlusOne:
      return "lax.log1p";
    case OpKind::kLogistic:
      return "lax.logistic";
    case OpKind::kTanh:
      return "lax.tanh";
    case OpKind::kErf:
      return "lax.erf";
    case OpKind::kSqrt:
      return "lax.sqrt";
    case OpKind::kRsqrt:
      return "lax.rsqrt";
    case OpKind::kCbrt:
      return "lax.cbrt";
    case OpKind::kSine:
      return "lax.sin";
    case OpKind::kCosine:
      return "lax.cos";
    case OpKind::kTan:
      return "lax.tan";
    case OpKind::kFloor:
      return "lax.floor";
    case OpKind::kCeil:
      return "lax.ceil";
    case OpKind::kIsFinite:
      return "lax.is_finite";
    case OpKind::kNot:
      return "lax.bitwise_not";
    case OpKind::kPopcnt:
      return "lax.population_count";
    case OpKind::kCountLeadingZeros:
      return "lax.clz";
    default:
      return nullptr;
  }
}

const char* binary_fn(OpKind k) {
  switch (k) {
    case OpKind::kAdd:
      return "lax.add";
    case OpKind::kSubtract:
      return "lax.sub";
    case OpKind::kMultiply:
      return "lax.mul";
    case OpKind::kDivide:
      return "lax.div";
    case OpKind::kRemainder:
      return "lax.rem";
    case OpKind::kPower:
      return "lax.pow";
    case OpKind::kMaximum:
      return "lax.max";
    case OpKind::kMinimum:
      return "lax.min";
    case OpKind::kAtan2:
      return "lax.atan2";
    case OpKind::kAnd:
      return "lax.bitwise_and";
    case OpKind::kOr:
      return "lax.bitwise_or";
    case OpKind::kXor:
      return "lax.bitwise_xor";
    case OpKind::kShiftLeft:
      return "lax.shift_left";
    case OpKind::kShiftRightArithmetic:
      return "lax.shift_right_arithmetic";
    case OpKind::kShiftRightLogical:
      return "lax.shift_right_logical";
    default:
      return nullptr;
  }
}

// The identity of a monoid combiner as a concrete numpy scalar (JAX then picks its
// differentiable reduce_sum / reduce_max ...), or nullopt when `k` is no monoid.
std::optional<std::string> identity(OpKind k, DType d) {
  std::string dt = "np." + np_dtype_name(d);
  bool f = is_float(d), b = is_bool(d);
  auto lit = [&](const std::string& v) { return fmt::format("np.array({}, {})", v, dt); };
  switch (k) {
    case OpKind::kAdd:
      return lit(b ? "False" : "0");
    case OpKind::kMultiply:
      return lit(b ? "True" : "1");
    case OpKind::kMaximum:
      return lit(f ? "-np.inf" : b ? "False" : fmt::format("np.iinfo({}).min", dt));
    case OpKind::kMinimum:
      return lit(f ? "np.inf" : b ? "True" : fmt::format("np.iinfo({}).max", dt));
    case OpKind::kAnd:
      return lit(b ? "True" : "-1");
    case OpKind::kOr:
      return lit(b ? "False" : "0");
    default:
      return std::nullopt;
  }
}

// The combiner of a region `(a, b) -> op(a, b)` with one binary op, or nullopt.
std::optional<OpKind> monoid_body(const hlo::Block& r) {
  if (r.args.size() != 2 || r.ops.size() != 2) return std::nullopt;
  const hlo::Op& o = *r.ops[0];
  if (o.operands.size() != 2 || r.ops[1]->operands.size() != 1 ||
      r.ops[1]->operand(0) != o.result())
    return std::nullopt;
  bool args_ok = (o.operand(0) == r.arg(0) && o.operand(1) == r.arg(1)) ||
                 (o.operand(0) == r.arg(1) && o.operand(1) == r.arg(0));
  if (!args_ok || !identity(o.kind, o.result()->type.dtype())) return std::nullopt;
  return o.kind;
}

// The value of a splat constant of rank 0, or nullopt.
std::optional<double> const_scalar(const hlo::Value* v) {
  if (!v->def || v->def->kind != OpKind::kConstant) return std::nullopt;
  const Tensor& t = v->def->attrs.get<hlo::DenseAttr>("value").value;
  if (t.numel() != 1) return std::nullopt;
  return t.as_double(0);
}

bool is_identity_value(OpKind k, double v, DType d) {
  switch (k) {
    case OpKind::kAdd:
    case OpKind::kOr:
      return v == 0;
    case OpKind::kMultiply:
      return v == 1;
    case OpKind::kAnd:
      return is_bool(d) ? v != 0 : v == -1;
    case OpKind::kMaximum:
      return is_float(d) ? std::isinf(v) && v < 0 : false;
    case OpKind::kMinimum:
      return is_float(d) ? std::isinf(v) && v > 0 : false;
    default:
      return false;
  }
}

// A while whose condition is `arg_k < N` (N constant), whose carry k starts at a constant c0 and
// whose body adds 1 to it runs N - c0 times: JAX's fori_loop with static bounds (a scan) can be
// reverse-differentiated, its while_loop cannot (flash attention's key loop is one of these).
std::optional<int64_t> static_trip_count(const hlo::Op& w) {
  const hlo::Block &cond = *w.region(0), &body = *w.region(1);
  const hlo::Value* p = cond.terminator()->operand(0);
  if (!p->def || p->def->kind != OpKind::kCompare ||
      p->def->attrs.get_enum("comparison_direction") != "LT" ||
      !p->def->operand(0)->is_block_arg() || p->def->operand(0)->block != &cond)
    return std::nullopt;
  const size_t k = static_cast<size_t>(p->def->operand(0)->index);
  auto n = const_scalar(p->def->operand(1));
  auto c0 = const_scalar(w.operand(k));
  const hlo::Value* next = body.terminator()->operand(k);
  if (!n || !c0 || !next->def || next->def->kind != OpKind::kAdd) return std::nullopt;
  const hlo::Op& add = *next->def;
  bool inc = (add.operand(0) == body.arg(k) && const_scalar(add.operand(1)) == 1.0) ||
             (add.operand(1) == body.arg(k) && const_scalar(add.operand(0)) == 1.0);
  if (!inc) return std::nullopt;
  return std::max<int64_t>(0, static_cast<int64_t>(*n - *c0));
}

std::vector<int64_t> i64s_or(const hlo::Op& op, const char* name, size_t n, int64_t dflt) {
  if (auto* p = op.attrs.get_if<hlo::I64s>(name)) return *p;
  return std::vector<int64_t>(n, dflt);
}

std::string padding_pairs(const hlo::Op& op, size_t n) {
  std::vector<std::string> pairs;
  const auto* p = op.attrs.get_if<hlo::DenseAttr>("padding");
  for (size_t i = 0; i < n; ++i) {
    int64_t lo = p ? p->value.as_int64(static_cast<int64_t>(2 * i)) : 0;
    int64_t hi = p ? p->value.as_int64(static_cast<int64_t>(2 * i + 1)) : 0;
    pairs.push_back(fmt::format("({}, {})", lo, hi));
  }
  return n == 1 ? fmt::format("({},)", pairs[0]) : fmt::format("({})", fmt::join(pairs, ", "));
}

std::string py_list_of(const std::vector<std::string>& v) {
  return v.size() == 1 ? fmt::format("({},)", v[0]) : fmt::format("({})", fmt::join(v, ", "));
}

}  // namespace

std::string py_dtype(DType t) { return "jnp." + np_dtype_name(t); }

std::string constant_expr(const Tensor& t) {
  std::string dt = py_dtype(t.dtype());
  if (t.shape().empty()) return fmt::format("jnp.array({}, {})", scalar_literal(t, 0), dt);
  if (t.numel() == 0 || is_splat(t))
    return fmt::format("jnp.full({}, {}, {})", py_tuple(t.shape()),
                       t.numel() ? scalar_literal(t, 0) : "0", dt);
  std::vector<std::string> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(scalar_literal(t, i));
  return fmt::format("jnp.array([{}], {}).reshape({})", fmt::join(v, ", "), dt,
                     py_tuple(t.shape()));
}

std::string Translator::name(const hlo::Value* v) const {
  auto it = names_.find(v);
  if (it == names_.end())
    fail("emit jax", "value of type {} used before its definition", v->type.str());
  return it->second;
}

std::string Translator::text() const {
  std::string s;
  for (const auto& l : lines_) s += l + "\n";
  return s;
}

std::string Translator::operands(const hlo::Op& op, size_t from, size_t n) const {
  std::vector<std::string> v;
  for (size_t i = from; i < op.operands.size() && i - from < n; ++i)
    v.push_back(name(op.operand(i)));
  return fmt::format("{}", fmt::join(v, ", "));
}

std::string Translator::region(const hlo::Block& r, Pack pack, bool ret_tuple) {
  std::string fn = fresh("_r");
  std::vector<std::string> args;
  for (size_t i = 0; i < r.args.size(); ++i) {
    args.push_back(fresh("a"));
    bind(r.arg(i), args.back());
  }
  std::string sig;
  if (pack == Pack::kPlain) sig = fmt::format("{}", fmt::join(args, ", "));
  if (pack == Pack::kOneTuple) sig = "s";
  if (pack == Pack::kTwoTuples) sig = "s0, s1";
  line(fmt::format("def {}({}):", fn, sig));
  indent(1);
  if (pack == Pack::kOneTuple) line(fmt::format("{}, = s", fmt::join(args, ", ")));
  if (pack == Pack::kTwoTuples) {
    size_t h = args.size() / 2;
    line(fmt::format("{}, = s0",
                     fmt::join(args.begin(), args.begin() + static_cast<long>(h), ", ")));
    line(fmt::format("{}, = s1", fmt::join(args.begin() + static_cast<long>(h), args.end(), ", ")));
  }
  for (const auto& o : r.ops)
    if (o->kind != OpKind::kReturn) op(*o);
  const hlo::Op* t = r.terminator();
  std::string rets = operands(*t);
  line(ret_tuple ? fmt::format("return ({},)", rets) : fmt::format("return {}", rets));
  indent(-1);
  return fn;
}

std::string Translator::reduce(const hlo::Op& op) {
  size_t n = op.operands.size() / 2;
  std::string dims = py_tuple(op.attrs.get_i64s("dimensions"));
  auto k = n == 1 ? monoid_body(*op.region(0)) : std::nullopt;
  if (k) {
    DType d = op.result()->type.dtype();
    std::string r = fmt::format("lax.reduce({}, {}, {}, {})", name(op.operand(0)), *identity(*k, d),
                                binary_fn(*k), dims);
    auto c = const_scalar(op.operand(1));
    if (c && is_identity_value(*k, *c, d)) return r;
    return fmt::format("{}({}, {})", binary_fn(*k), r, name(op.operand(1)));  // init once
  }
  std::string fn = region(*op.region(0), n == 1 ? Pack::kPlain : Pack::kTwoTuples, n > 1);
  if (n == 1)
    return fmt::format("lax.reduce({}, {}, {}, {})", name(op.operand(0)), name(op.operand(1)), fn,
                       dims);
  return fmt::format("lax.reduce(({},), ({},), {}, {})", operands(op, 0, n), operands(op, n, n), fn,
                     dims);
}

std::string Translator::reduce_window(const hlo::Op& op) {
  size_t n = op.operands.size() / 2;
  size_t rank = op.operand_type(0).shape().size();
  std::string win =
      fmt::format("{}, {}, {}, {}, {}", py_tuple(op.attrs.get_i64s("window_dimensions")),
                  py_tuple(i64s_or(op, "window_strides", rank, 1)), padding_pairs(op, rank),
                  py_tuple(i64s_or(op, "base_dilations", rank, 1)),
                  py_tuple(i64s_or(op, "window_dilations", rank, 1)));
  auto k = n == 1 ? monoid_body(*op.region(0)) : std::nullopt;
  DType d = op.result()->type.dtype();
  auto c = n == 1 ? const_scalar(op.operand(1)) : std::nullopt;
  if (k && c) {
    std::string r = fmt::format("lax.reduce_window({}, {}, {}, {})", name(op.operand(0)),
                                *identity(*k, d), binary_fn(*k), win);
    if (is_identity_value(*k, *c, d)) return r;
    // max / min: padding with the identity, then one max with the init, is the same window max.
    if (*k == OpKind::kMaximum || *k == OpKind::kMinimum)
      return fmt::format("{}({}, {})", binary_fn(*k), r, name(op.operand(1)));
  }
  std::string fn = region(*op.region(0), n == 1 ? Pack::kPlain : Pack::kTwoTuples, n > 1);
  if (n == 1)
    return fmt::format("lax.reduce_window({}, {}, {}, {})", name(op.operand(0)),
                       name(op.operand(1)), fn, win);
  return fmt::format("lax.reduce_window(({},), ({},), {}, {})", operands(op, 0, n),
                     operands(op, n, n), fn, win);
}

// Comparators `compare(arg0, arg1, LT|GT)` only: JAX sorts ascending by the first operand.
std::string Translator::sort(const hlo::Op& op) {
  const hlo::Block& r = *op.region(0);
  const hlo::Op& c = *r.ops[0];
  bool ok = r.ops.size() == 2 && c.kind == OpKind::kCompare && c.operand(0) == r.arg(0) &&
            c.operand(1) == r.arg(1);
  std::string dir = ok ? c.attrs.get_enum("comparison_direction") : "";
  if (dir != "LT" && dir != "GT")
    fail("emit jax", "stablehlo.sort: only comparators compare(a0, a1, LT|GT) have a JAX form");
  std::string dim =
      fmt::format("dimension={}, is_stable={}, num_keys=1", op.attrs.get_int("dimension"),
                  op.attrs.get_bool_or("is_stable", false) ? "True" : "False");
  std::string key = name(op.operand(0));
  if (dir == "LT") return fmt::format("lax.sort(({},), {})", operands(op), dim);
  std::string tmp = fresh("t");
  line(fmt::format("{} = lax.sort((lax.neg({}),{}), {})", tmp, key,
                   op.operands.size() > 1 ? " " + operands(op, 1) + "," : "", dim));
  std::vector<std::string> rs{fmt::format("lax.neg({}[0])", tmp)};
  for (size_t i = 1; i < op.operands.size(); ++i) rs.push_back(fmt::format("{}[{}]", tmp, i));
  return fmt::format("({},)", fmt::join(rs, ", "));
}

std::string Translator::gather_scatter(const hlo::Op& op) {
  bool g = op.kind == OpKind::kGather;
  const hlo::Value* idx = op.operand(1);
  int64_t rank = static_cast<int64_t>(idx->type.shape().size());
  int64_t ivd = g ? op.attrs.get<hlo::GatherDims>("dimension_numbers").index_vector_dim
                  : op.attrs.get<hlo::ScatterDims>("scatter_dimension_numbers").index_vector_dim;
  // JAX keeps the index vector in the last dimension of the indices.
  std::string ix = name(idx);
  if (ivd == rank)
    ix = fmt::format("lax.expand_dims({}, ({},))", ix, rank);
  else if (ivd != rank - 1)
    ix = fmt::format("jnp.moveaxis({}, {}, -1)", ix, ivd);
  if (g) {
    const auto& d = op.attrs.get<hlo::GatherDims>("dimension_numbers");
    return fmt::format(
        "lax.gather({}, {}, lax.GatherDimensionNumbers(offset_dims={}, collapsed_slice_dims={}, "
        "start_index_map={}, operand_batching_dims={}, start_indices_batching_dims={}), "
        "slice_sizes={}, indices_are_sorted={}, mode=lax.GatherScatterMode.CLIP)",
        name(op.operand(0)), ix, py_tuple(d.offset_dims), py_tuple(d.collapsed_slice_dims),
        py_tuple(d.start_index_map), py_tuple(d.operand_batching_dims),
        py_tuple(d.start_indices_batching_dims), py_tuple(op.attrs.get_i64s("slice_sizes")),
        op.attrs.get_bool_or("indices_are_sorted", false) ? "True" : "False");
  }
  if (op.operands.size() != 3)
    fail("emit jax", "stablehlo.scatter: one operand only has a JAX form");
  const hlo::Block& r = *op.region(0);
  std::string fn;
  auto k = monoid_body(r);
  if (k == OpKind::kAdd)
    fn = "lax.scatter_add";
  else if (k == OpKind::kMaximum)
    fn = "lax.scatter_max";
  else if (k == OpKind::kMinimum)
    fn = "lax.scatter_min";
  else if (k == OpKind::kMultiply)
    fn = "lax.scatter_mul";
  else if (r.ops.size() == 1 && r.ops[0]->operand(0) == r.arg(1))
    fn = "lax.scatter";
  else
    fail("emit jax", "stablehlo.scatter: only add/max/min/mul/replace bodies have a JAX form");
  const auto& d = op.attrs.get<hlo::ScatterDims>("scatter_dimension_numbers");
  return fmt::format(
      "{}({}, {}, {}, lax.ScatterDimensionNumbers(update_window_dims={}, inserted_window_dims={}, "
      "scatter_dims_to_operand_dims={}, operand_batching_dims={}, "
      "scatter_indices_batching_dims={}), indices_are_sorted={}, unique_indices={}, "
      "mode=lax.GatherScatterMode.FILL_OR_DROP)",
      fn, name(op.operand(0)), ix, name(op.operand(2)), py_tuple(d.update_window_dims),
      py_tuple(d.inserted_window_dims), py_tuple(d.scatter_dims_to_operand_dims),
      py_tuple(d.input_batching_dims), py_tuple(d.scatter_indices_batching_dims),
      op.attrs.get_bool_or("indices_are_sorted", false) ? "True" : "False",
      op.attrs.get_bool_or("unique_indices", false) ? "True" : "False");
}

std::string Translator::convolution(const hlo::Op& op) {
  const auto& d = op.attrs.get<hlo::ConvDims>("dimension_numbers");
  size_t ns = d.input_spatial.size();
  auto spec = [](int64_t a, int64_t b, const hlo::I64s& s) {
    hlo::I64s v{a, b};
    v.insert(v.end(), s.begin(), s.end());
    return py_tuple(v);
  };
  std::string rhs = name(op.operand(1));
  if (const auto* rev = op.attrs.get_if<std::vector<bool>>("window_reversal")) {
    hlo::I64s dims;
    for (size_t i = 0; i < rev->size(); ++i)
      if ((*rev)[i]) dims.push_back(d.kernel_spatial[i]);
    if (!dims.empty()) rhs = fmt::format("lax.rev({}, {})", rhs, py_tuple(dims));
  }
  return fmt::format(
      "lax.conv_general_dilated({}, {}, window_strides={}, padding={}, lhs_dilation={}, "
      "rhs_dilation={}, dimension_numbers=lax.ConvDimensionNumbers(lhs_spec={}, rhs_spec={}, "
      "out_spec={}), feature_group_count={}, batch_group_count={}, "
      "precision=lax.Precision.HIGHEST, preferred_element_type={})",
      name(op.operand(0)), rhs, py_tuple(i64s_or(op, "window_strides", ns, 1)),
      padding_pairs(op, ns), py_tuple(i64s_or(op, "lhs_dilation", ns, 1)),
      py_tuple(i64s_or(op, "rhs_dilation", ns, 1)),
      spec(d.input_batch, d.input_feature, d.input_spatial),
      spec(d.kernel_output_feature, d.kernel_input_feature, d.kernel_spatial),
      spec(d.output_batch, d.output_feature, d.output_spatial),
      op.attrs.get_int_or("feature_group_count", 1), op.attrs.get_int_or("batch_group_count", 1),
      py_dtype(op.result()->type.dtype()));
}

// `def <py>(a0, ...):` with f's body; `ret` writes the return line from the terminator's names.
std::string Translator::function_def(const hlo::Func& f, const std::string& py,
                                     const ReturnFn& ret) {
  Translator t(callees_, *f.module);
  std::vector<std::string> args;
  for (size_t i = 0; i < f.num_args(); ++i) {
    args.push_back(fmt::format("a{}", i));
    t.bind(f.arg(i), args.back());
  }
  t.next_ = static_cast<int>(f.num_args());
  t.line(fmt::format("def {}({}):", py, fmt::join(args, ", ")));
  t.indent(1);
  for (const auto& o : f.body->ops)
    if (o->kind != OpKind::kFuncReturn) t.op(*o);
  t.line(ret(t, *f.body->terminator()));
  return t.text();
}

// netspec's registered backward of @f (a CustomVjpFn builds IR) built into a function
// (args..., results..., result cotangents...) -> one cotangent per arg, translated: `None` where
// the builder gives none (zero: AF2's stop-gradient) or the arg carries no cotangent (ints).
std::string Translator::custom_vjp_backward(const hlo::Func& f, const autodiff::CustomVjpFn& fn,
                                            const std::string& py) {
  const size_t na = f.num_args(), nr = f.result_types.size();
  std::vector<hlo::Type> in;
  for (size_t i = 0; i < na; ++i) in.push_back(f.arg(i)->type);
  for (int k = 0; k < 2; ++k) in.insert(in.end(), f.result_types.begin(), f.result_types.end());
  hlo::Module bm;  // the builder may add helper functions (nested custom calls) here
  hlo::Func* g = bm.add_func(py, in);
  hlo::Builder b(g->body.get());
  autodiff::CustomVjpArgs a;
  for (size_t i = 0; i < na; ++i) {
    a.args.push_back(g->arg(i));
    a.wants.push_back(autodiff::is_differentiable_type(f.arg(i)->type));
  }
  for (size_t i = 0; i < nr; ++i) {
    a.results.push_back(g->arg(na + i));
    a.result_cots.push_back(g->arg(na + nr + i));
  }
  std::vector<hlo::Value*> cots = fn(b, a);
  if (cots.size() != na)
    fail("emit jax", "custom VJP of @{} returned {} cotangents (expected {})", f.name, cots.size(),
         na);
  std::vector<hlo::Value*> rets;
  for (size_t i = 0; i < na; ++i)
    if (cots[i] && a.wants[i]) rets.push_back(cots[i]);
  b.func_return(rets);
  return function_def(*g, py, [&](const Translator& t, const hlo::Op&) {
    std::vector<std::string> r;
    for (size_t i = 0; i < na; ++i) r.push_back(cots[i] && a.wants[i] ? t.name(cots[i]) : "None");
    return fmt::format("return ({},)", fmt::join(r, ", "));
  });
}

// A plain call is the callee's Python function. A call whose callee has a custom VJP
// (autodiff::call_with_custom_vjp: flash attention, AF2's stop-gradient) is jax.custom_vjp with
// the callee as forward and netspec's backward (the program's _custom_vjp), so JAX
// differentiates it as netspec does: a stop-gradient stays one.
std::string Translator::call(const hlo::Op& op) {
  const std::string& callee = op.attrs.get<hlo::SymbolRef>("callee").name;
  std::string fn = "fn_" + callee;
  const hlo::Func* f = module_.find(callee);
  if (!f) fail("emit jax", "func.call: no function @{}", callee);
  if (!callees_.count(fn)) {
    callees_[fn] = "";  // recursion guard
    callees_[fn] = function_def(*f, fn, [](const Translator& t, const hlo::Op& ret) {
      return fmt::format("return {}", t.operands(ret));
    });
  }
  const autodiff::CustomVjpFn* custom = autodiff::find_custom_vjp(callee);
  if (!custom) return fmt::format("{}({})", fn, operands(op));
  std::string vjp = fn + "_vjp";  // sorts after fn: defined after it in the program
  if (!callees_.count(vjp)) {
    callees_[vjp] = "";
    callees_[vjp] = custom_vjp_backward(*f, *custom, fn + "_bwd") +
                    fmt::format("\n\n{} = _custom_vjp({}, {}_bwd)", vjp, fn, fn);
  }
  return fmt::format("{}({})", vjp, operands(op));
}

std::string Translator::expr(const hlo::Op& op) {
  const hlo::Type& rt = op.results.empty() ? op.operand_type(0) : op.result()->type;
  std::string dt = op.results.empty() ? "" : py_dtype(rt.dtype());
  auto a = [&](size_t i) { return name(op.operand(i)); };
  if (const char* f = unary_fn(op.kind)) return fmt::format("{}({})", f, a(0));
  if (const char* f = binary_fn(op.kind)) return fmt::format("{}({}, {})", f, a(0), a(1));
  switch (op.kind) {
    case OpKind::kConstant:
      return constant_expr(op.attrs.get<hlo::DenseAttr>("value").value);
    case OpKind::kIota:
      return fmt::format("lax.broadcasted_iota({}, {}, {})", dt, py_tuple(rt.shape()),
                         op.attrs.get_int("iota_dimension"));
    case OpKind::kRoundNearestAfz:
      return fmt::format("lax.round({}, lax.RoundingMethod.AWAY_FROM_ZERO)", a(0));
    case OpKind::kRoundNearestEven:
      return fmt::format("lax.round({}, lax.RoundingMethod.TO_NEAREST_EVEN)", a(0));
    case OpKind::kConvert:
      return fmt::format("lax.convert_element_type({}, {})", a(0), dt);
    case OpKind::kBitcastConvert:
      return fmt::format("lax.bitcast_convert_type({}, {})", a(0), dt);
    case OpKind::kReducePrecision:
      return fmt::format("lax.reduce_precision({}, exponent_bits={}, mantissa_bits={})", a(0),
                         op.attrs.get_int("exponent_bits"), op.attrs.get_int("mantissa_bits"));
    case OpKind::kCompare: {
      static const std::map<std::string, std::string> fns{{"EQ", "lax.eq"}, {"NE", "lax.ne"},
                                                          {"LT", "lax.lt"}, {"LE", "lax.le"},
                                                          {"GT", "lax.gt"}, {"GE", "lax.ge"}};
      return fmt::format("{}({}, {})", fns.at(op.attrs.get_enum("comparison_direction")), a(0),
                         a(1));
    }
    case OpKind::kClamp:
      return fmt::format("lax.clamp({}, {}, {})", a(0), a(1), a(2));
    case OpKind::kSelect:
      if (op.operand_type(0).shape().size() != rt.shape().size())  // scalar predicate
        return fmt::format("lax.select(jnp.broadcast_to({}, {}), {}, {})", a(0),
                           py_tuple(rt.shape()), a(1), a(2));
      return fmt::format("lax.select({}, {}, {})", a(0), a(1), a(2));
    case OpKind::kReshape:
      return fmt::format("lax.reshape({}, {})", a(0), py_tuple(rt.shape()));
    case OpKind::kBroadcastInDim: {
      // StableHLO allows unsorted broadcast_dimensions (a transpose folded in); JAX's transpose
      // rule assumes them increasing, so the transpose is made explicit first.
      const auto& d = op.attrs.get_i64s("broadcast_dimensions");
      std::vector<int64_t> perm(d.size());
      for (size_t i = 0; i < d.size(); ++i) perm[i] = static_cast<int64_t>(i);
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
        return d[static_cast<size_t>(x)] < d[static_cast<size_t>(y)];
      });
      if (std::is_sorted(d.begin(), d.end()))
        return fmt::format("lax.broadcast_in_dim({}, {}, {})", a(0), py_tuple(rt.shape()),
                           py_tuple(d));
      std::vector<int64_t> sorted(d.begin(), d.end());
      std::sort(sorted.begin(), sorted.end());
      return fmt::format("lax.broadcast_in_dim(lax.transpose({}, {}), {}, {})", a(0),
                         py_tuple(perm), py_tuple(rt.shape()), py_tuple(sorted));
    }
    case OpKind::kTranspose:
      return fmt::format("lax.transpose({}, {})", a(0), py_tuple(op.attrs.get_i64s("permutation")));
    case OpKind::kSlice: {
      size_t n = rt.shape().size();
      return fmt::format(
          "lax.slice({}, {}, {}, {})", a(0), py_tuple(op.attrs.get_i64s("start_indices")),
          py_tuple(op.attrs.get_i64s("limit_indices")), py_tuple(i64s_or(op, "strides", n, 1)));
    }
    case OpKind::kDynamicSlice:
      return fmt::format("lax.dynamic_slice({}, ({},), {})", a(0), operands(op, 1),
                         py_tuple(op.attrs.get_i64s("slice_sizes")));
    case OpKind::kDynamicUpdateSlice:
      return fmt::format("lax.dynamic_update_slice({}, {}, ({},))", a(0), a(1), operands(op, 2));
    case OpKind::kConcatenate:
      return fmt::format("lax.concatenate(({},), {})", operands(op), op.attrs.get_int("dimension"));
    case OpKind::kPad: {
      const auto &lo = op.attrs.get_i64s("edge_padding_low"),
                 &hi = op.attrs.get_i64s("edge_padding_high");
      auto in = i64s_or(op, "interior_padding", lo.size(), 0);
      std::vector<std::string> cfg;
      for (size_t i = 0; i < lo.size(); ++i)
        cfg.push_back(fmt::format("({}, {}, {})", lo[i], hi[i], in[i]));
      return fmt::format("lax.pad({}, {}, {})", a(0), a(1), py_list_of(cfg));
    }
    case OpKind::kReverse:
      return fmt::format("lax.rev({}, {})", a(0), py_tuple(op.attrs.get_i64s("dimensions")));
    case OpKind::kDotGeneral: {
      const auto& d = op.attrs.get<hlo::DotDims>("dot_dimension_numbers");
      return fmt::format(
          "lax.dot_general({}, {}, (({}, {}), ({}, {})), precision=lax.Precision.HIGHEST, "
          "preferred_element_type={})",
          a(0), a(1), py_tuple(d.lhs_contracting), py_tuple(d.rhs_contracting),
          py_tuple(d.lhs_batching), py_tuple(d.rhs_batching), dt);
    }
    case OpKind::kConvolution:
      return convolution(op);
    case OpKind::kReduce:
      return reduce(op);
    case OpKind::kReduceWindow:
      return reduce_window(op);
    case OpKind::kGather:
    case OpKind::kScatter:
      return gather_scatter(op);
    case OpKind::kSort:
      return sort(op);
    case OpKind::kWhile: {
      if (auto n = static_trip_count(op)) {  // a counted loop: fori_loop -> scan, differentiable
        std::string b = region(*op.region(1), Pack::kOneTuple, true);
        return fmt::format("lax.fori_loop(0, {}, lambda _, s: {}(s), ({},))", *n, b, operands(op));
      }
      std::string c = region(*op.region(0), Pack::kOneTuple, false);
      std::string b = region(*op.region(1), Pack::kOneTuple, true);
      return fmt::format("lax.while_loop({}, {}, ({},))", c, b, operands(op));
    }
    case OpKind::kIf: {
      std::string t = region(*op.region(0), Pack::kNone, true);
      std::string f = region(*op.region(1), Pack::kNone, true);
      return fmt::format("lax.cond({}, {}, {})", a(0), t, f);
    }
    case OpKind::kCase: {
      std::vector<std::string> bs;
      for (const auto& r : op.regions) bs.push_back(region(*r, Pack::kNone, true));
      return fmt::format("lax.switch({}, [{}])", a(0), fmt::join(bs, ", "));
    }
    case OpKind::kTuple:
      return fmt::format("({},)", operands(op));
    case OpKind::kGetTupleElement:
      return fmt::format("{}[{}]", a(0), op.attrs.get_int("index"));
    case OpKind::kOptimizationBarrier:
      return fmt::format("lax.optimization_barrier(({},))", operands(op));
    case OpKind::kCall:
      return call(op);
    default:
      fail("emit jax", "{} has no JAX translation (got it in a forward, loss or optimizer)",
           op.name());
  }
}

void Translator::op(const hlo::Op& o) {
  std::string e = expr(o);
  if (o.kind == OpKind::kConstant && o.result()->type.shape().empty())
    return bind(o.result(), e);  // scalars read inline where used
  std::vector<std::string> rs;
  for (const auto& r : o.results) {
    rs.push_back(fresh("t"));
    bind(r.get(), rs.back());
  }
  // Multi-result ops (and the tuple-returning control ops) unpack; call returns a tuple if > 1.
  bool tuple_result = o.kind == OpKind::kWhile || o.kind == OpKind::kIf ||
                      o.kind == OpKind::kCase || o.kind == OpKind::kOptimizationBarrier ||
                      o.kind == OpKind::kSort ||
                      (o.kind == OpKind::kReduce && o.results.size() > 1) ||
                      (o.kind == OpKind::kReduceWindow && o.results.size() > 1);
  if (rs.empty()) return line(e);
  if (tuple_result && rs.size() == 1) return line(fmt::format("{}, = {}", rs[0], e));
  line(fmt::format("{} = {}", fmt::join(rs, ", "), e));
}

}  // namespace netspec::jax
