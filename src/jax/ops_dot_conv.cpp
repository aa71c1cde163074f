// JAX forms of the dot and conv families: lax.dot_general and lax.conv_general_dilated at
// HIGHEST precision with the result dtype preferred (window reversal written as lax.rev).
#include "hlo/op_family.h"
#include "jax/ops.h"

namespace netspec::jax {
namespace {

std::string dot_general(Translator& t, const hlo::Op& op) {
  const auto& d = op.attrs.get<hlo::DotDims>("dot_dimension_numbers");
  return fmt::format(
      "lax.dot_general({}, {}, (({}, {}), ({}, {})), precision=lax.Precision.HIGHEST, "
      "preferred_element_type={})",
      t.name(op.operand(0)), t.name(op.operand(1)), py_tuple(d.lhs_contracting),
      py_tuple(d.rhs_contracting), py_tuple(d.lhs_batching), py_tuple(d.rhs_batching),
      py_dtype(op.result()->type.dtype()));
}

std::string convolution(Translator& t, const hlo::Op& op) {
  const auto& d = op.attrs.get<hlo::ConvDims>("dimension_numbers");
  size_t ns = d.input_spatial.size();
  auto spec = [](int64_t a, int64_t b, const hlo::I64s& s) {
    hlo::I64s v{a, b};
    v.insert(v.end(), s.begin(), s.end());
    return py_tuple(v);
  };
  std::string rhs = t.name(op.operand(1));
  if (const auto* rev = op.attrs.get_if<std::vector<bool>>("window_reversal")) {
    hlo::I64s dims;
    for (size_t i = 0; i < rev->size(); ++i)
      if ((*rev)[i]) dims.push_back(d.kernel_spatial[i]);
    if (!dims.empty()) rhs = fmt::format("lax.rev({}, {})", rhs, py_tuple(dims));
  }
  return fmt::format(
      "lax.conv_general_dilated({}, {}, window_strides={}, padding={}, lhs_dilation={}, "
      "rhs_dilation={}, dimension_numbers=lax.ConvDimensionNumbers(lhs_spec={}, rhs_spec={}, "
      "out_spec={}), feature_group_count={}, batch_group_count={}, "
      "precision=lax.Precision.HIGHEST, preferred_element_type={})",
      t.name(op.operand(0)), rhs, py_tuple(attr_i64s_or(op, "window_strides", ns, 1)),
      padding_pairs(op, ns), py_tuple(attr_i64s_or(op, "lhs_dilation", ns, 1)),
      py_tuple(attr_i64s_or(op, "rhs_dilation", ns, 1)),
      spec(d.input_batch, d.input_feature, d.input_spatial),
      spec(d.kernel_output_feature, d.kernel_input_feature, d.kernel_spatial),
      spec(d.output_batch, d.output_feature, d.output_spatial),
      op.attrs.get_int_or("feature_group_count", 1), op.attrs.get_int_or("batch_group_count", 1),
      py_dtype(op.result()->type.dtype()));
}

}  // namespace

void register_dot_conv_ops(OpRule* t) {
  hlo::FamilyTable<OpRule> ft(t, "jax/ops_dot_conv.cpp", {"dot", "conv"});
  ft.set(hlo::OpKind::kDotGeneral, translated(dot_general));
  ft.set(hlo::OpKind::kConvolution, translated(convolution));
}

}  // namespace netspec::jax
