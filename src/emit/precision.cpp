// bf16 mixed precision (TrainConfig bf16 / bf16Conv, the seed's definition): f32 master weights
// and activations; the contractions chosen by Precision read bf16 copies of their operands
// (convert f32 -> bf16, round to nearest even) and accumulate into an f32 result. No loss
// scaling (bf16 has f32's exponent range). The backward follows from the VJP rules: a convert's
// cotangent is converted back, a contraction's operand cotangent is a contraction of the dy
// rounded to bf16 with the other bf16 operand, f32-accumulated, then rounded to bf16 (what
// PyTorch's CPU autocast computes for a bf16 matmul's input gradients).
#include <algorithm>

#include "emit/emit.h"
#include "hlo/passes.h"

namespace netspec::emit {
namespace {

using hlo::OpKind;

bool all_f32(const hlo::Op& op) {
  return std::all_of(op.operands.begin(), op.operands.end(),
                     [](const hlo::Value* v) { return v->type.dtype() == DType::kF32; }) &&
         op.result(0)->type.dtype() == DType::kF32;
}

int64_t i64_at(const hlo::Op& op, const char* name, size_t i, int64_t dflt) {
  const auto* v = op.attrs.get_if<hlo::I64s>(name);
  return v && i < v->size() ? (*v)[i] : dflt;
}

// A convolution that is a matmul over non-overlapping patches (timm PatchEmbed, ConvNeXt's
// stem): window = stride > 1 per spatial dim, no padding, dilation or groups.
bool is_patchify(const hlo::Op& op, const hlo::ConvDims& d) {
  if (op.attrs.get_int_or("feature_group_count", 1) != 1 ||
      op.attrs.get_int_or("batch_group_count", 1) != 1)
    return false;
  if (const auto* p = op.attrs.get_if<hlo::DenseAttr>("padding"))
    for (int64_t i = 0; i < p->value.numel(); ++i)
      if (p->value.as_int64(i) != 0) return false;
  for (size_t i = 0; i < d.kernel_spatial.size(); ++i) {
    const int64_t k = op.operand_type(1).dim(d.kernel_spatial[i]);
    if (k < 2 || i64_at(op, "window_strides", i, 1) != k || i64_at(op, "lhs_dilation", i, 1) != 1 ||
        i64_at(op, "rhs_dilation", i, 1) != 1)
      return false;
  }
  return true;
}

bool wants_bf16(const hlo::Op& op, const Precision& p) {
  if (op.operands.size() != 2 || op.results.size() != 1 || !all_f32(op)) return false;
  if (op.kind == OpKind::kDotGeneral) return true;
  if (op.kind != OpKind::kConvolution) return false;
  const auto* d = op.attrs.get_if<hlo::ConvDims>("dimension_numbers");
  if (!d) return false;
  if (is_patchify(op, *d)) return true;
  const int64_t groups = op.attrs.get_int_or("feature_group_count", 1);
  const bool depthwise = groups > 1 && groups == op.operand_type(0).dim(d->input_feature);
  return p.bf16_conv && !depthwise;
}

}  // namespace

void cast_contractions(hlo::Block& block, size_t begin, const Precision& p) {
  if (!p.bf16) return;
  std::vector<std::unique_ptr<hlo::Op>> ops = std::move(block.ops);
  block.ops.clear();
  for (size_t i = 0; i < ops.size(); ++i) {
    hlo::Op& op = *ops[i];
    if (i >= begin) {
      for (auto& r : op.regions) cast_contractions(*r, 0, p);
      if (wants_bf16(op, p))
        for (auto& v : op.operands)
          v = hlo::append_op(&block, OpKind::kConvert, {v}, {}, {v->type.with_dtype(DType::kBF16)})
                  ->result();
    }
    block.ops.push_back(std::move(ops[i]));
  }
}

}  // namespace netspec::emit
