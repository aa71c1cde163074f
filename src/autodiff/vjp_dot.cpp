// VJP rule of dot_general: both cotangents are dot_generals of dy with the other operand
// (batch dims stay batch dims, dy's free dims contract with the other operand's free dims),
// followed by a transpose into the operand's dimension order.
#include <algorithm>

#include "autodiff/rules.h"
#include "hlo/dims_fields.h"
#include "hlo/op_family.h"

namespace netspec::autodiff {
namespace {

using hlo::DotDims;
using hlo::I64s;
using hlo::OpKind;
using hlo::Value;

bool contains(const I64s& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int64_t index_of(const I64s& v, int64_t x) { return std::find(v.begin(), v.end(), x) - v.begin(); }

Value* transpose_if_needed(hlo::Builder& b, Value* v, const I64s& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return b.transpose(v, perm);
  return v;
}

// Cotangent of `self` (the operand whose dims are self_*) from dy and `other`. y's dims are
// [batch, lhs free, rhs free]; dy_self_free / dy_other_free are dy's dims holding those.
Value* operand_cot(hlo::Builder& b, Value* dy, Value* self, Value* other, const I64s& self_batch,
                   const I64s& self_contract, const I64s& other_batch, const I64s& other_contract,
                   const I64s& dy_self_free, const I64s& dy_other_free) {
  int64_t nb = static_cast<int64_t>(self_batch.size());
  I64s other_free = hlo::free_dims(other->type.rank(), other_batch, other_contract);
  I64s self_free = hlo::free_dims(self->type.rank(), self_batch, self_contract);
  // Mixed precision (bf16 operands, f32 result): dy is rounded to the operands' type and the
  // product accumulates in dy's type; the cotangent is rounded to self's type at the end.
  const DType acc = dy->type.dtype();
  if (dy->type.dtype() != other->type.dtype()) dy = b.convert(dy, other->type.dtype());
  // g = dot_general(dy, other): batch (dy batch, other batch), contract (dy other-free, other
  // free).
  DotDims dd;
  for (int64_t i = 0; i < nb; ++i) dd.lhs_batching.push_back(i);
  dd.rhs_batching = other_batch;
  dd.lhs_contracting = dy_other_free;
  dd.rhs_contracting = other_free;
  const DType out = is_float(acc) && is_float(self->type.dtype()) ? acc : self->type.dtype();
  Value* g = b.dot_general(dy, other, dd, {}, out);
  // g dims: [batch, self free (from dy), other's remaining dims = other_contract sorted].
  I64s oc_sorted = other_contract;
  std::sort(oc_sorted.begin(), oc_sorted.end());
  I64s perm(static_cast<size_t>(self->type.rank()));
  for (int64_t d = 0; d < self->type.rank(); ++d) {
    int64_t pos;
    if (contains(self_batch, d)) {
      pos = index_of(self_batch, d);
    } else if (contains(self_free, d)) {
      pos = nb + index_of(self_free, d);
    } else {  // contracting dim d pairs with other_contract[c]
      int64_t oc = other_contract[static_cast<size_t>(index_of(self_contract, d))];
      pos = nb + static_cast<int64_t>(self_free.size()) + index_of(oc_sorted, oc);
    }
    perm[static_cast<size_t>(d)] = pos;
  }
  (void)dy_self_free;
  g = transpose_if_needed(b, g, perm);
  return out == self->type.dtype() ? g : b.convert(g, self->type.dtype());
}

// y = dot_general(a, b): da = dot_general(dy, b) transposed to a's dims; db likewise with a.
std::vector<Value*> dot_general(VjpCtx& c) {
  const DotDims& d = c.op.attrs.get<DotDims>("dot_dimension_numbers");
  Value* a = c.x(0);
  Value* bv = c.x(1);
  Value* dy = c.dy[0];
  int64_t nb = static_cast<int64_t>(d.lhs_batching.size());
  int64_t na = static_cast<int64_t>(
      hlo::free_dims(a->type.rank(), d.lhs_batching, d.lhs_contracting).size());
  int64_t nbf = static_cast<int64_t>(
      hlo::free_dims(bv->type.rank(), d.rhs_batching, d.rhs_contracting).size());
  I64s dy_a_free, dy_b_free;
  for (int64_t i = 0; i < na; ++i) dy_a_free.push_back(nb + i);
  for (int64_t i = 0; i < nbf; ++i) dy_b_free.push_back(nb + na + i);
  Value* da = nullptr;
  Value* db = nullptr;
  if (c.wants[0])
    da = operand_cot(c.b, dy, a, bv, d.lhs_batching, d.lhs_contracting, d.rhs_batching,
                     d.rhs_contracting, dy_a_free, dy_b_free);
  if (c.wants[1])
    db = operand_cot(c.b, dy, bv, a, d.rhs_batching, d.rhs_contracting, d.lhs_batching,
                     d.lhs_contracting, dy_b_free, dy_a_free);
  return {da, db};
}

}  // namespace

void register_dot_vjps(VjpRule* t) {
  hlo::FamilyTable<VjpRule> ft(t, "vjp_dot.cpp", {"dot"});
  ft.set(OpKind::kDotGeneral, dot_general);
}

}  // namespace netspec::autodiff
