// bf16 convolutions rewritten as f32 convolutions of widened operands: conv(a, b) with bf16
// operands and an f32 result becomes conv(convert(a), convert(b)) in f32. The products of two
// bf16 values are exact in f32 and the sum is accumulated in f32 either way, so the result is
// the same computation; an executor without native bf16 kernels then runs its f32 convolutions
// (blocked layouts, Winograd) instead of widening inside each call. Each convolution gets its own
// converts, right before it, so a bf16 value saved for the backward pass stays bf16 until used.
#include "hlo/passes.h"

namespace netspec::hlo {
namespace {

bool widenable(const Op& op) {
  if (op.kind != OpKind::kConvolution || op.operands.size() != 2) return false;
  if (op.results.size() != 1 || op.result(0)->type.dtype() != DType::kF32) return false;
  for (size_t i = 0; i < 2; ++i)
    if (op.operand_type(i).dtype() != DType::kBF16) return false;
  return true;
}

int widen_block(Block& b) {
  int n = 0;
  for (auto& op : b.ops)
    for (auto& r : op->regions) n += widen_block(*r);
  bool any = false;
  for (auto& op : b.ops) any = any || widenable(*op);
  if (!any) return n;
  std::vector<std::unique_ptr<Op>> old = std::move(b.ops);
  b.ops.clear();
  for (auto& op : old) {
    if (widenable(*op)) {
      Value* wide[2] = {nullptr, nullptr};
      for (size_t i = 0; i < 2; ++i) {
        Value* v = op->operands[i];
        if (i == 1 && v == op->operands[0]) {
          wide[1] = wide[0];
          continue;
        }
        wide[i] = append_op(&b, OpKind::kConvert, {v}, {}, {v->type.with_dtype(DType::kF32)})
                      ->result(0);
      }
      op->operands[0] = wide[0];
      op->operands[1] = wide[1];
      ++n;
    }
    b.ops.push_back(std::move(op));
  }
  return n;
}

}  // namespace

int widen_bf16_convolutions(Func& f) { return widen_block(*f.body); }

}  // namespace netspec::hlo
