// Transposes read by dot_general, folded into the dot's dimension numbers. dot(transpose(x, p))
// reads dim p[d] of x wherever it read dim d of the transpose, so its batching and contracting
// lists map through p; the free dims fix the result's order, so they must keep their relative
// order in x. An executor whose matmul takes strided operands then reads x where it is instead of
// a transposed copy (vit's head split: q, k, v as [B, T, H, D] -> [B, H, T, D] before q·kᵀ and
// p·v). The transpose is left for dce once no other op reads it.
#include "hlo/dims_fields.h"
#include "hlo/passes.h"

namespace netspec::hlo {
namespace {

// Folds operand i's transpose into `nd` when the free dims keep their order; true if folded.
bool fold_operand(Op& dot, size_t i, DotDims& nd) {
  const Op* t = dot.operand(i)->def;
  if (!t || t->kind != OpKind::kTranspose || t->operands.size() != 1) return false;
  const I64s& p = t->attrs.get_i64s("permutation");
  I64s& batch = i == 0 ? nd.lhs_batching : nd.rhs_batching;
  I64s& contracting = i == 0 ? nd.lhs_contracting : nd.rhs_contracting;
  const I64s free = free_dims(static_cast<int64_t>(p.size()), batch, contracting);
  for (size_t k = 1; k < free.size(); ++k)
    if (p[static_cast<size_t>(free[k])] < p[static_cast<size_t>(free[k - 1])]) return false;
  for (int64_t& d : batch) d = p[static_cast<size_t>(d)];
  for (int64_t& d : contracting) d = p[static_cast<size_t>(d)];
  dot.operands[i] = t->operand(0);
  return true;
}

int fold_block(Block& b) {
  int n = 0;
  for (auto& up : b.ops) {
    Op& op = *up;
    for (auto& r : op.regions) n += fold_block(*r);
    if (op.kind != OpKind::kDotGeneral || op.operands.size() != 2) continue;
    auto* dims = op.attrs.get_if<DotDims>("dot_dimension_numbers");
    if (!dims) continue;
    DotDims nd = *dims;
    int here = 0;
    for (size_t i = 0; i < 2; ++i) here += fold_operand(op, i, nd);
    if (here) op.attrs.set("dot_dimension_numbers", nd);
    n += here;
  }
  return n;
}

}  // namespace

int fold_transposes_into_dots(Func& f) {
  const int n = fold_block(*f.body);
  if (n) dce(f);
  return n;
}

}  // namespace netspec::hlo
