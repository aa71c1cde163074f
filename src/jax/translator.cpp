// The JAX emitter's Python writer (translator.h): names, regions, functions, and op(), which
// writes each op by its rule in the per-op table (ops.h).
#include "jax/translator.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "jax/ops.h"

namespace netspec::jax {
namespace {

using hlo::OpKind;

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

}  // namespace

std::string np_dtype_name(DType t) {
  std::string n(dtype_name(t));
  if (t == DType::kI1) return "bool_";
  if (t == DType::kBF16) return "bfloat16";
  if (n.starts_with("ui")) return "uint" + n.substr(2);
  if (n[0] == 'f') return "float" + n.substr(1);
  return "int" + n.substr(1);
}

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

void Translator::op(const hlo::Op& o) {
  const OpRule& rule = op_rule(o.kind);
  if (!rule.expr)
    fail("emit jax", "{} has no JAX translation (got it in a forward, loss or optimizer): {}",
         o.name(), rule.refusal);
  std::string e = rule.expr(*this, o);
  if (rule.inline_scalar && o.result()->type.shape().empty())
    return bind(o.result(), e);  // scalars read inline where used
  std::vector<std::string> rs;
  for (const auto& r : o.results) {
    rs.push_back(fresh("t"));
    bind(r.get(), rs.back());
  }
  // Multi-result ops unpack; a tuple-valued expression with one result too (`t0, = ...`).
  if (rs.empty()) return line(e);
  if (rule.tuple && rs.size() == 1) return line(fmt::format("{}, = {}", rs[0], e));
  line(fmt::format("{} = {}", fmt::join(rs, ", "), e));
}

}  // namespace netspec::jax
