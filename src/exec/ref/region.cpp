// ScalarRegion: per-element evaluation of reducer / comparator regions (see kernel_util.h).
#include "exec/ref/kernel_util.h"
#include "exec/scalar_ops.h"

namespace netspec::exec::ref {

void for_each_index_impl(const Shape& shape, void* fn, IndexVisitor visit) {
  int64_t n = num_elements(shape);
  if (n == 0) return;
  I64s idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    visit(fn, idx);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
}

ScalarRegion::ScalarRegion(const hlo::Block& block, RunContext& ctx) : block_(block), ctx_(ctx) {
  if (block.args.size() != 2 || block.ops.size() != 2) return;
  const hlo::Op& op = *block.ops[0];
  const hlo::Op& ret = *block.ops[1];
  if (op.operands.size() != 2 || op.regions.size() || !op.attrs.empty()) return;
  if (ret.operands.size() != 1 || ret.operand(0) != op.result()) return;
  if (!(ret.kind == hlo::OpKind::kReturn || ret.kind == hlo::OpKind::kFuncReturn)) return;
  bool direct = op.operand(0) == block.arg(0) && op.operand(1) == block.arg(1);
  bool swapped = op.operand(0) == block.arg(1) && op.operand(1) == block.arg(0);
  if (!direct && !swapped) return;
  if (block.arg(0)->type != op.result()->type || block.arg(1)->type != op.result()->type) return;
  std::optional<Domain> d = binary_domain(op.kind);  // the scalar table's binary ops
  if (!d || !op.result()->type.is_tensor() || !in_domain(*d, op.result()->type.dtype())) return;
  fast_kind_ = op.kind;
  swapped_ = swapped;
}

std::vector<Tensor> ScalarRegion::operator()(const std::vector<Tensor>& args) const {
  if (fast_kind_) {
    Tensor out(args[0].dtype(), {});
    apply_fast(args[0], 0, args[1], 0, out, 0);
    return {out};
  }
  return run_block(block_, args, ctx_);
}

void ScalarRegion::apply_fast(const Tensor& a, int64_t ia, const Tensor& b, int64_t ib, Tensor& out,
                              int64_t io) const {
  visit_dtype(a.dtype(), "region", [&](auto z) {
    using T = decltype(z);
    T x = a.data<T>()[ia], y = b.data<T>()[ib];
    out.data<T>()[io] =
        swapped_ ? apply_binary(*fast_kind_, y, x) : apply_binary(*fast_kind_, x, y);
  });
}

}  // namespace netspec::exec::ref
