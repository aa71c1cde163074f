// Reference kernels: constant, iota (rng_bit_generator lives in rng.cpp).
#include "exec/ref/kernel_util.h"
#include "hlo/op_family.h"

namespace netspec::exec::ref {
namespace {

// constant: the `value` attribute; a one-element value is a splat of the result type.
std::vector<Tensor> eval_constant(const hlo::Op& op, const std::vector<Tensor>&, RunContext&) {
  const Tensor& v = op.attrs.get<hlo::DenseAttr>("value").value;
  Tensor out = result_tensor(op);
  if (v.dtype() != out.dtype())
    fail("constant", "value element type differs from the result (got {}, expected {})",
         dtype_name(v.dtype()), dtype_name(out.dtype()));
  if (v.numel() == out.numel()) {
    if (out.nbytes()) std::memcpy(out.raw(), v.raw(), out.nbytes());
  } else if (v.numel() == 1) {
    for (int64_t i = 0; i < out.numel(); ++i) copy_elem(out, i, v, 0);
  } else {
    fail("constant", "value has {} elements (expected {} or a splat)", v.numel(), out.numel());
  }
  return {out};
}

// iota: result[i0, ..., iN] = i_{iota_dimension}.
std::vector<Tensor> eval_iota(const hlo::Op& op, const std::vector<Tensor>&, RunContext&) {
  Tensor out = result_tensor(op);
  int64_t dim = op.attrs.get_int("iota_dimension");
  if (dim < 0 || dim >= out.rank()) fail("iota", "iota_dimension out of range (got {})", dim);
  visit_dtype(out.dtype(), "iota", [&](auto z) {
    using T = decltype(z);
    T* p = out.data<T>();
    int64_t k = 0;
    for_each_index(out.shape(), [&](const I64s& idx) {
      p[k++] = static_cast<T>(idx[static_cast<size_t>(dim)]);
    });
  });
  return {out};
}

}  // namespace

std::vector<Tensor> eval_rng_bit_generator(const hlo::Op& op, const std::vector<Tensor>& in,
                                           RunContext& ctx);

void register_misc_kernels(Kernel* t) {
  hlo::FamilyTable<Kernel> ft(t, "misc.cpp", {"misc"});
  ft.set(hlo::OpKind::kConstant, eval_constant);
  ft.set(hlo::OpKind::kIota, eval_iota);
  ft.set(hlo::OpKind::kRngBitGenerator, eval_rng_bit_generator);
}

}  // namespace netspec::exec::ref
