// The per-op table of the JAX emitter (ops.h), built from the family files, and the helpers
// they share (attributes with defaults, monoid reductions).
#include "jax/ops.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "core/tensor.h"
#include "hlo/op_table.h"

namespace netspec::jax {

using hlo::OpKind;

const OpRule& op_rule(OpKind k) {
  static const auto table = hlo::fill_op_table<OpRule>(
      {register_misc_ops, register_elementwise_ops, register_shape_ops, register_dot_conv_ops,
       register_reduce_window_ops, register_gather_sort_ops, register_control_ops});
  return table[static_cast<size_t>(k)];
}

std::string padding_pairs(const hlo::Op& op, size_t n) {
  std::vector<std::string> pairs;
  for (auto [lo, hi] : hlo::attr_padding(op, n)) pairs.push_back(fmt::format("({}, {})", lo, hi));
  return n == 1 ? fmt::format("({},)", pairs[0]) : fmt::format("({})", fmt::join(pairs, ", "));
}

std::optional<std::string> monoid_identity(OpKind k, DType d) {
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

std::optional<OpKind> monoid_body(const hlo::Block& r) {
  if (r.args.size() != 2 || r.ops.size() != 2) return std::nullopt;
  const hlo::Op& o = *r.ops[0];
  if (o.operands.size() != 2 || r.ops[1]->operands.size() != 1 ||
      r.ops[1]->operand(0) != o.result())
    return std::nullopt;
  bool args_ok = (o.operand(0) == r.arg(0) && o.operand(1) == r.arg(1)) ||
                 (o.operand(0) == r.arg(1) && o.operand(1) == r.arg(0));
  if (!args_ok || !monoid_identity(o.kind, o.result()->type.dtype())) return std::nullopt;
  return o.kind;
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

}  // namespace netspec::jax
