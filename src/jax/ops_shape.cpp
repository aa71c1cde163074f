// JAX forms of the shape family: reshape, broadcast, transpose, slices, concatenate, pad,
// reverse, each one jax.lax call with StableHLO's attributes spelled out.
#include <algorithm>

#include "hlo/op_family.h"
#include "jax/ops.h"

namespace netspec::jax {
namespace {

std::string py_list_of(const std::vector<std::string>& v) {
  return v.size() == 1 ? fmt::format("({},)", v[0]) : fmt::format("({})", fmt::join(v, ", "));
}

// StableHLO allows unsorted broadcast_dimensions (a transpose folded in); JAX's transpose rule
// assumes them increasing, so the transpose is made explicit first.
std::string broadcast_in_dim(Translator& t, const hlo::Op& op) {
  const auto& d = op.attrs.get_i64s("broadcast_dimensions");
  const std::string x = t.name(op.operand(0)), shape = py_tuple(op.result()->type.shape());
  std::vector<int64_t> perm(d.size());
  for (size_t i = 0; i < d.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    return d[static_cast<size_t>(a)] < d[static_cast<size_t>(b)];
  });
  if (std::is_sorted(d.begin(), d.end()))
    return fmt::format("lax.broadcast_in_dim({}, {}, {})", x, shape, py_tuple(d));
  std::vector<int64_t> sorted(d.begin(), d.end());
  std::sort(sorted.begin(), sorted.end());
  return fmt::format("lax.broadcast_in_dim(lax.transpose({}, {}), {}, {})", x, py_tuple(perm),
                     shape, py_tuple(sorted));
}

// A dynamic (update) slice's start indices from operand `from` on, as a Python tuple's items.
// StableHLO clamps a start into [0, dim - size]; lax.dynamic_slice first wraps a negative one
// NumPy-style (-1 -> dim - 1), so each start is raised to 0 here first, which every JAX version
// reads the same way (found by the random programs of tests/jax/random_cases.cpp).
std::string clamped_starts(Translator& t, const hlo::Op& op, size_t from) {
  std::string out;
  for (size_t i = from; i < op.operands.size(); ++i)
    out += fmt::format("jnp.maximum({}, 0), ", t.name(op.operand(i)));
  return out;
}

std::string pad(Translator& t, const hlo::Op& op) {
  const auto &lo = op.attrs.get_i64s("edge_padding_low"),
             &hi = op.attrs.get_i64s("edge_padding_high");
  auto in = attr_i64s_or(op, "interior_padding", lo.size(), 0);
  std::vector<std::string> cfg;
  for (size_t i = 0; i < lo.size(); ++i)
    cfg.push_back(fmt::format("({}, {}, {})", lo[i], hi[i], in[i]));
  return fmt::format("lax.pad({}, {}, {})", t.name(op.operand(0)), t.name(op.operand(1)),
                     py_list_of(cfg));
}

}  // namespace

void register_shape_ops(OpRule* t) {
  hlo::FamilyTable<OpRule> ft(t, "jax/ops_shape.cpp", {"shape"});
  using K = hlo::OpKind;
  ft.set(K::kReshape, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.reshape({}, {})", t.name(op.operand(0)),
                              py_tuple(op.result()->type.shape()));
         }));
  ft.set(K::kBroadcastInDim, translated(broadcast_in_dim));
  ft.set(K::kTranspose, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.transpose({}, {})", t.name(op.operand(0)),
                              py_tuple(op.attrs.get_i64s("permutation")));
         }));
  ft.set(K::kSlice, translated([](Translator& t, const hlo::Op& op) {
           size_t n = op.result()->type.shape().size();
           return fmt::format("lax.slice({}, {}, {}, {})", t.name(op.operand(0)),
                              py_tuple(op.attrs.get_i64s("start_indices")),
                              py_tuple(op.attrs.get_i64s("limit_indices")),
                              py_tuple(attr_i64s_or(op, "strides", n, 1)));
         }));
  ft.set(K::kDynamicSlice, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.dynamic_slice({}, ({}), {})", t.name(op.operand(0)),
                              clamped_starts(t, op, 1), py_tuple(op.attrs.get_i64s("slice_sizes")));
         }));
  ft.set(K::kDynamicUpdateSlice, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.dynamic_update_slice({}, {}, ({}))", t.name(op.operand(0)),
                              t.name(op.operand(1)), clamped_starts(t, op, 2));
         }));
  ft.set(K::kConcatenate, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.concatenate(({},), {})", t.operands(op),
                              op.attrs.get_int("dimension"));
         }));
  ft.set(K::kPad, translated(pad));
  ft.set(K::kReverse, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.rev({}, {})", t.name(op.operand(0)),
                              py_tuple(op.attrs.get_i64s("dimensions")));
         }));
}

}  // namespace netspec::jax
