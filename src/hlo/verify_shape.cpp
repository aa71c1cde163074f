// Type rules: reshape, broadcast_in_dim, transpose, slice, dynamic_slice, dynamic_update_slice,
// concatenate, pad, reverse.
#include "hlo/op_families.h"
#include "hlo/op_family.h"
#include "hlo/verify_internal.h"

namespace netspec::hlo {
namespace {
using namespace vr;

std::vector<Type> rule_reshape(const Op& op, const std::vector<Type>& given) {
  const Type& x = sole_tensor_operand(op);
  const Type& r = given_with_dtype_of(op, given, x);
  // C2: size(operand) = size(result).
  int64_t xn = checked_numel(op, x), rn = checked_numel(op, r);
  if (rn != xn)
    fail("reshape", "element count differs (got {} -> {}: {} vs {})", x.str(), r.str(), xn, rn);
  return given;
}

std::vector<Type> rule_broadcast_in_dim(const Op& op, const std::vector<Type>& given) {
  const Type& x = sole_tensor_operand(op);
  const Type& r = given_with_dtype_of(op, given, x);
  const I64s& bd = op.attrs.get_i64s("broadcast_dimensions");
  // C2: size(broadcast_dimensions) = rank(operand); C3/C4: in range, unique.
  check_size(op, bd.size(), static_cast<size_t>(x.rank()), "broadcast_dimensions");
  check_dims(op, bd, r.rank(), "broadcast_dimensions");
  // C5: dim(operand, i) = 1 or dim(operand, i) = dim(result, bd[i]).
  for (size_t i = 0; i < bd.size(); ++i) {
    int64_t d = x.dim(static_cast<int64_t>(i)), rd = r.dim(bd[i]);
    if (d != 1 && d != rd)
      fail("broadcast_in_dim",
           "operand dim {} (size {}) cannot broadcast to result dim {} (size {})", i, d, bd[i], rd);
  }
  return given;
}

std::vector<Type> rule_transpose(const Op& op, const std::vector<Type>& given) {
  const Type& x = sole_tensor_operand(op);
  const I64s& p = op.attrs.get_i64s("permutation");
  // C2: permutation is a permutation of range(rank(operand)).
  check_size(op, p.size(), static_cast<size_t>(x.rank()), "permutation");
  check_dims(op, p, x.rank(), "permutation");
  Shape s;
  for (int64_t d : p) s.push_back(x.dim(d));
  return check_given(op, given, {x.with_shape(s)});
}

std::vector<Type> rule_slice(const Op& op, const std::vector<Type>& given) {
  const Type& x = sole_tensor_operand(op);
  size_t r = static_cast<size_t>(x.rank());
  const I64s& st = i64s_of_size(op, "start_indices", r);
  const I64s& li = i64s_of_size(op, "limit_indices", r);
  I64s str = i64s_or(op, "strides", r, 1);
  Shape s;
  for (size_t i = 0; i < r; ++i) {
    int64_t d = x.dim(static_cast<int64_t>(i));
    // C3: 0 <= start <= limit <= dim; C4: strides > 0.
    if (st[i] < 0 || st[i] > li[i] || li[i] > d)
      fail("slice",
           "bad bounds on dim {} (got start {} limit {}, expected 0 <= start <= limit <= {})", i,
           st[i], li[i], d);
    if (str[i] <= 0) fail("slice", "strides must be > 0 (got {} on dim {})", str[i], i);
    s.push_back(li[i] == st[i] ? 0 : (li[i] - st[i] - 1) / str[i] + 1);  // ceil(len / stride)
  }
  return check_given(op, given, {x.with_shape(s)});
}

void check_index_scalars(const Op& op, size_t first, size_t n) {
  // Start indices: 0-d integer tensors of one type.
  const Type* t0 = nullptr;
  for (size_t i = first; i < first + n; ++i) {
    const Type& t = tensor_operand(op, i, "start index");
    if (t.rank() != 0 || !is_integer(t.dtype()))
      fail(mn(op), "start indices must be 0-d integer tensors (got {} at #{})", t.str(), i - first);
    if (t0 && t != *t0)
      fail(mn(op), "start indices must share one type (got {} vs {})", t0->str(), t.str());
    t0 = &t;
  }
}

std::vector<Type> rule_dynamic_slice(const Op& op, const std::vector<Type>& given) {
  expect_min_operands(op, 1);
  const Type& x = tensor_operand(op, 0);
  size_t r = static_cast<size_t>(x.rank());
  // C2: size(start_indices) = size(slice_sizes) = rank(operand).
  check_size(op, op.operands.size() - 1, r, "start_indices");
  check_index_scalars(op, 1, r);
  const I64s& ss = i64s_of_size(op, "slice_sizes", r);
  for (size_t i = 0; i < r; ++i)  // C4: 0 <= slice_sizes <= shape(operand).
    if (ss[i] < 0 || ss[i] > x.dim(static_cast<int64_t>(i)))
      fail("dynamic_slice", "slice size out of range on dim {} (got {}, expected in [0, {}])", i,
           ss[i], x.dim(static_cast<int64_t>(i)));
  return check_given(op, given, {x.with_shape(ss)});
}

std::vector<Type> rule_dynamic_update_slice(const Op& op, const std::vector<Type>& given) {
  expect_min_operands(op, 2);
  const Type& x = tensor_operand(op, 0);
  const Type& u = tensor_operand(op, 1, "update");
  size_t r = static_cast<size_t>(x.rank());
  // C2: element types agree; C3: rank(update) = rank(operand); C5: dim(update) <= dim(operand).
  if (u.dtype() != x.dtype())
    fail("dynamic_update_slice", "update element type differs (got {}, expected {})", u.str(),
         u.with_dtype(x.dtype()).str());
  if (u.rank() != x.rank())
    fail("dynamic_update_slice", "update rank differs (got {}, expected {})", u.rank(), x.rank());
  for (size_t i = 0; i < r; ++i)
    if (u.dim(static_cast<int64_t>(i)) > x.dim(static_cast<int64_t>(i)))
      fail("dynamic_update_slice", "update larger than operand on dim {} (got {}, expected <= {})",
           i, u.dim(static_cast<int64_t>(i)), x.dim(static_cast<int64_t>(i)));
  check_size(op, op.operands.size() - 2, r, "start_indices");
  check_index_scalars(op, 2, r);
  return check_given(op, given, {x});
}

std::vector<Type> rule_concatenate(const Op& op, const std::vector<Type>& given) {
  expect_min_operands(op, 1);
  const Type& a = tensor_operand(op, 0, "input");
  int64_t d = op.attrs.get_int("dimension");
  // C4: 0 <= dimension < rank(inputs[0]).
  if (d < 0 || d >= a.rank())
    fail("concatenate", "dimension out of range (got {}, expected in [0, {}))", d, a.rank());
  Shape s = a.shape();
  for (size_t i = 1; i < op.operands.size(); ++i) {
    const Type& t = tensor_operand(op, i, "input");
    // C1: same element type; C2: same shape except at dimension.
    if (t.dtype() != a.dtype() || t.rank() != a.rank())
      fail("concatenate", "input #{} type does not match (got {}, expected rank {} {})", i, t.str(),
           a.rank(), dtype_name(a.dtype()));
    for (int64_t k = 0; k < a.rank(); ++k)
      if (k != d && t.dim(k) != a.dim(k))
        fail("concatenate", "input #{} differs on dim {} (got {}, expected {})", i, k, t.dim(k),
             a.dim(k));
    s[static_cast<size_t>(d)] = checked_add(op, s[static_cast<size_t>(d)], t.dim(d));
  }
  return check_given(op, given, {a.with_shape(s)});
}

std::vector<Type> rule_pad(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 2);
  const Type& x = tensor_operand(op, 0);
  const Type& pv = tensor_operand(op, 1, "padding_value");
  if (pv.rank() != 0 || pv.dtype() != x.dtype())
    fail("pad", "padding_value must be a 0-d {} tensor (got {})", dtype_name(x.dtype()), pv.str());
  size_t r = static_cast<size_t>(x.rank());
  const I64s& lo = i64s_of_size(op, "edge_padding_low", r);
  const I64s& hi = i64s_of_size(op, "edge_padding_high", r);
  I64s in = i64s_or(op, "interior_padding", r, 0);
  Shape s;
  for (size_t i = 0; i < r; ++i) {
    // C3: interior_padding >= 0; C4: dim = lo + d + (d-1)*interior + hi (d = 0: lo + hi).
    if (in[i] < 0) fail("pad", "interior_padding must be >= 0 (got {} on dim {})", in[i], i);
    int64_t d = x.dim(static_cast<int64_t>(i));
    int64_t inner = d > 0 ? checked_mul(op, d - 1, in[i]) : 0;
    int64_t n = checked_add(op, checked_add(op, checked_add(op, lo[i], hi[i]), d), inner);
    if (n < 0) fail("pad", "negative result size on dim {} (got {})", i, n);
    s.push_back(n);
  }
  return check_given(op, given, {x.with_shape(s)});
}

std::vector<Type> rule_reverse(const Op& op, const std::vector<Type>& given) {
  const Type& x = sole_tensor_operand(op);
  // C2: dimensions unique; C3: in [0, rank).
  check_dims(op, op.attrs.get_i64s("dimensions"), x.rank(), "dimensions");
  return check_given(op, given, {x});
}

}  // namespace

void register_shape_rules(InferRule* t) {
  FamilyTable<InferRule> ft(t, "verify_shape.cpp", {"shape"});
#define NETSPEC_SET_RULE(kind, name) ft.set(OpKind::kind, rule_##name);
  NETSPEC_SHAPE_FAMILY(NETSPEC_SET_RULE)
#undef NETSPEC_SET_RULE
}

}  // namespace netspec::hlo
