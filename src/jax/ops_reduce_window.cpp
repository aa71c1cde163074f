// JAX forms of the reduce and window families. A reduction whose body is one add / max / min /
// multiply (/ and / or) with a constant identity init becomes JAX's monoid reduction
// (reduce_sum, reduce_window_max ...), which jax.grad differentiates; any other body becomes a
// nested Python function. select_and_scatter and map are refused (the reasons below).
#include "hlo/op_family.h"
#include "hlo/passes.h"
#include "jax/ops.h"

namespace netspec::jax {
namespace {

using hlo::OpKind;
using Pack = Translator::Pack;

std::string reduce(Translator& t, const hlo::Op& op) {
  size_t n = op.operands.size() / 2;
  std::string dims = py_tuple(op.attrs.get_i64s("dimensions"));
  auto k = n == 1 ? monoid_body(*op.region(0)) : std::nullopt;
  if (k) {
    DType d = op.result()->type.dtype();
    std::string r = fmt::format("lax.reduce({}, {}, {}, {})", t.name(op.operand(0)),
                                *monoid_identity(*k, d), lax_binary(*k), dims);
    auto c = hlo::constant_scalar(op.operand(1));
    if (c && is_identity_value(*k, *c, d)) return r;
    return fmt::format("{}({}, {})", lax_binary(*k), r, t.name(op.operand(1)));  // init once
  }
  std::string fn = t.region(*op.region(0), n == 1 ? Pack::kPlain : Pack::kTwoTuples, n > 1);
  if (n == 1)
    return fmt::format("lax.reduce({}, {}, {}, {})", t.name(op.operand(0)), t.name(op.operand(1)),
                       fn, dims);
  return fmt::format("lax.reduce(({},), ({},), {}, {})", t.operands(op, 0, n), t.operands(op, n, n),
                     fn, dims);
}

std::string reduce_window(Translator& t, const hlo::Op& op) {
  size_t n = op.operands.size() / 2;
  size_t rank = op.operand_type(0).shape().size();
  std::string win =
      fmt::format("{}, {}, {}, {}, {}", py_tuple(op.attrs.get_i64s("window_dimensions")),
                  py_tuple(attr_i64s_or(op, "window_strides", rank, 1)), padding_pairs(op, rank),
                  py_tuple(attr_i64s_or(op, "base_dilations", rank, 1)),
                  py_tuple(attr_i64s_or(op, "window_dilations", rank, 1)));
  auto k = n == 1 ? monoid_body(*op.region(0)) : std::nullopt;
  DType d = op.result()->type.dtype();
  auto c = n == 1 ? hlo::constant_scalar(op.operand(1)) : std::nullopt;
  if (k && c) {
    std::string r = fmt::format("lax.reduce_window({}, {}, {}, {})", t.name(op.operand(0)),
                                *monoid_identity(*k, d), lax_binary(*k), win);
    if (is_identity_value(*k, *c, d)) return r;
    // max / min: padding with the identity, then one max with the init, is the same window max.
    if (*k == OpKind::kMaximum || *k == OpKind::kMinimum)
      return fmt::format("{}({}, {})", lax_binary(*k), r, t.name(op.operand(1)));
  }
  std::string fn = t.region(*op.region(0), n == 1 ? Pack::kPlain : Pack::kTwoTuples, n > 1);
  if (n == 1)
    return fmt::format("lax.reduce_window({}, {}, {}, {})", t.name(op.operand(0)),
                       t.name(op.operand(1)), fn, win);
  return fmt::format("lax.reduce_window(({},), ({},), {}, {})", t.operands(op, 0, n),
                     t.operands(op, n, n), fn, win);
}

}  // namespace

void register_reduce_window_ops(OpRule* t) {
  hlo::FamilyTable<OpRule> ft(t, "jax/ops_reduce_window.cpp", {"reduce", "window"});
  ft.set(OpKind::kReduce, translated(reduce));
  ft.set(OpKind::kReduceWindow, translated(reduce_window));
  ft.set(OpKind::kSelectAndScatter,
         refused("netspec emits it only in backward passes (the max-pool VJP); the program's "
                 "backward is jax.grad's"));
  ft.set(OpKind::kMap,
         refused("no lowering emits it, and jax.lax has no elementwise map of a region "
                 "(lax.map maps over the leading axis)"));
}

}  // namespace netspec::jax
