// JAX forms of the misc and collective families: constants (scalars inline where read), iota;
// the in-graph random bits and the cross-replica sum are refused (the reasons below).
#include "hlo/op_family.h"
#include "jax/ops.h"

namespace netspec::jax {

void register_misc_ops(OpRule* t) {
  hlo::FamilyTable<OpRule> ft(t, "jax/ops_misc.cpp", {"misc", "collective"});
  using K = hlo::OpKind;
  OpRule constant = translated([](Translator&, const hlo::Op& op) {
    return constant_expr(op.attrs.get<hlo::DenseAttr>("value").value);
  });
  constant.inline_scalar = true;
  ft.set(K::kConstant, constant);
  ft.set(K::kIota, translated([](Translator&, const hlo::Op& op) {
           const hlo::Type& rt = op.result()->type;
           return fmt::format("lax.broadcasted_iota({}, {}, {})", py_dtype(rt.dtype()),
                              py_tuple(rt.shape()), op.attrs.get_int("iota_dimension"));
         }));
  ft.set(K::kRngBitGenerator,
         refused("no forward, loss or optimizer draws in-graph random bits: the program takes its "
                 "randomness as inputs (the drop masks) or from jax.random (init)"));
  ft.set(K::kAllReduce,
         refused("replicas (gradient averaging, synchronised BN) exist only in netspec's data "
                 "parallel train_step; the program is one replica"));
}

}  // namespace netspec::jax
