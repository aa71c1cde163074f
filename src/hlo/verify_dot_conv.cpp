// Type rules: dot_general and convolution. The result element type may differ from the
// operands' (preferred element type); the shape is always inferred and checked.
#include <set>

#include "hlo/op_family.h"
#include "hlo/verify_internal.h"

namespace netspec::hlo {
namespace {
using namespace vr;

// Given a stated result, keep its element type but check its shape against `inferred`.
std::vector<Type> check_shape_given(const Op& op, const std::vector<Type>& given,
                                    const Type& inferred) {
  if (given.empty()) return {inferred};
  if (given.size() != 1 || !given[0].is_tensor())
    fail(mn(op), "expected one tensor result (got ({}))", types_str(given));
  if (given[0].shape() != inferred.shape())
    fail(mn(op), "result shape mismatch (got {}, expected {})", given[0].str(),
         inferred.with_dtype(given[0].dtype()).str());
  if (is_bool(given[0].dtype()) != is_bool(inferred.dtype()))
    fail(mn(op), "result element type does not fit the operands (got {}, expected {})",
         given[0].str(), inferred.str());
  return given;
}

void check_precision(const Op& op) {
  auto* p = op.attrs.get_if<std::vector<EnumAttr>>("precision_config");
  if (!p) {
    if (op.attrs.has("precision_config"))
      fail(mn(op), "precision_config must be a list of precisions");
    return;
  }
  // C11 (dot_general) / C24 (convolution): size 2 (0 = omitted); DEFAULT, HIGH or HIGHEST.
  if (p->size() != 0 && p->size() != 2)
    fail(mn(op), "precision_config must have 0 or 2 entries (got {})", p->size());
  for (const auto& e : *p)
    if (e.value != "DEFAULT" && e.value != "HIGH" && e.value != "HIGHEST")
      fail(mn(op), "unknown precision (got {}, expected DEFAULT|HIGH|HIGHEST)", e.value);
}

// C21-C24: with an algorithm, precisions are DEFAULT and the decomposition counts positive.
void check_dot_algorithm(const Op& op) {
  if (!op.attrs.has("algorithm")) return;
  auto* a = op.attrs.get_if<DotAlgorithm>("algorithm");
  if (!a) fail(mn(op), "algorithm must be a #stablehlo.dot_algorithm");
  if (auto* p = op.attrs.get_if<std::vector<EnumAttr>>("precision_config"))
    for (const auto& e : *p)
      if (e.value != "DEFAULT")
        fail(mn(op), "precision_config must be DEFAULT when an algorithm is given (got {})",
             e.value);
  for (auto [n, v] :
       {std::pair<const char*, int64_t>{"lhs_component_count", a->lhs_component_count},
        {"rhs_component_count", a->rhs_component_count},
        {"num_primitive_operations", a->num_primitive_operations}})
    if (v < 1) fail(mn(op), "algorithm {} must be > 0 (got {})", n, v);
}

std::vector<Type> rule_dot_general(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 2);
  check_dot_algorithm(op);
  const Type& a = tensor_operand(op, 0, "lhs");
  const Type& b = tensor_operand(op, 1, "rhs");
  if (a.dtype() != b.dtype())
    fail("dot_general", "operand element types differ (got {} vs {})", a.str(), b.str());
  const DotDims& d = op.attrs.get<DotDims>("dot_dimension_numbers");
  // C1: batching sizes equal; C2: contracting sizes equal.
  if (d.lhs_batching.size() != d.rhs_batching.size())
    fail("dot_general", "batching dim counts differ (got {} vs {})", d.lhs_batching.size(),
         d.rhs_batching.size());
  if (d.lhs_contracting.size() != d.rhs_contracting.size())
    fail("dot_general", "contracting dim counts differ (got {} vs {})", d.lhs_contracting.size(),
         d.rhs_contracting.size());
  // C3/C4: batching+contracting dims unique per side; C5-C8: in range.
  I64s la = d.lhs_batching, ra = d.rhs_batching;
  la.insert(la.end(), d.lhs_contracting.begin(), d.lhs_contracting.end());
  ra.insert(ra.end(), d.rhs_contracting.begin(), d.rhs_contracting.end());
  check_dims(op, la, a.rank(), "lhs batching+contracting dims");
  check_dims(op, ra, b.rank(), "rhs batching+contracting dims");
  // C9: batch sizes equal; C10: contracting sizes equal.
  for (size_t i = 0; i < d.lhs_batching.size(); ++i)
    if (a.dim(d.lhs_batching[i]) != b.dim(d.rhs_batching[i]))
      fail("dot_general", "batching dims differ (got {} vs {})", a.dim(d.lhs_batching[i]),
           b.dim(d.rhs_batching[i]));
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i)
    if (a.dim(d.lhs_contracting[i]) != b.dim(d.rhs_contracting[i]))
      fail("dot_general", "contracting dims differ (got {} vs {})", a.dim(d.lhs_contracting[i]),
           b.dim(d.rhs_contracting[i]));
  check_precision(op);
  // C12: shape = batch dims ++ lhs free dims ++ rhs free dims.
  Shape s;
  for (int64_t x : d.lhs_batching) s.push_back(a.dim(x));
  for (int64_t i = 0; i < a.rank(); ++i)
    if (!contains(la, i)) s.push_back(a.dim(i));
  for (int64_t i = 0; i < b.rank(); ++i)
    if (!contains(ra, i)) s.push_back(b.dim(i));
  return check_shape_given(op, given, a.with_shape(s));
}

std::vector<Type> rule_convolution(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 2);
  const Type& lhs = tensor_operand(op, 0, "lhs");
  const Type& rhs = tensor_operand(op, 1, "rhs");
  const char* w = "convolution";
  // C1: rank(lhs) = rank(rhs) = N.
  int64_t n = lhs.rank();
  if (rhs.rank() != n) fail(w, "lhs and rhs ranks differ (got {} vs {})", n, rhs.rank());
  if (n < 2) fail(w, "operands must have rank >= 2 (got {})", n);
  if (lhs.dtype() != rhs.dtype())
    fail(w, "operand element types differ (got {} vs {})", lhs.str(), rhs.str());
  const ConvDims& cd = op.attrs.get<ConvDims>("dimension_numbers");
  size_t ns = static_cast<size_t>(n - 2);
  // C2-C9: window attribute sizes and positivity.
  I64s strides = i64s_or(op, "window_strides", ns, 1);
  auto pads = padding_attr(op, ns);
  I64s lhs_dil = i64s_or(op, "lhs_dilation", ns, 1);
  I64s rhs_dil = i64s_or(op, "rhs_dilation", ns, 1);
  for (size_t i = 0; i < ns; ++i) {
    if (strides[i] <= 0) fail(w, "window_strides must be > 0 (got {})", i64s_str(strides));
    if (lhs_dil[i] <= 0) fail(w, "lhs_dilation must be > 0 (got {})", i64s_str(lhs_dil));
    if (rhs_dil[i] <= 0) fail(w, "rhs_dilation must be > 0 (got {})", i64s_str(rhs_dil));
  }
  if (auto* rev = optional_attr<std::vector<bool>>(op, "window_reversal", "an i1 array"))
    check_size(op, rev->size(), ns, "window_reversal");
  // C12-C20: dimension numbers are permutations of each operand's / the output's dims.
  check_size(op, cd.input_spatial.size(), ns, "input spatial dimensions");
  check_size(op, cd.kernel_spatial.size(), ns, "kernel spatial dimensions");
  check_size(op, cd.output_spatial.size(), ns, "output spatial dimensions");
  I64s in = cd.input_spatial, kr = cd.kernel_spatial, out = cd.output_spatial;
  in.insert(in.begin(), {cd.input_batch, cd.input_feature});
  kr.insert(kr.begin(), {cd.kernel_input_feature, cd.kernel_output_feature});
  out.insert(out.begin(), {cd.output_batch, cd.output_feature});
  check_dims(op, in, n, "input dimension numbers");
  check_dims(op, kr, n, "kernel dimension numbers");
  check_dims(op, out, n, "output dimension numbers");
  int64_t fgc = op.attrs.get_int_or("feature_group_count", 1);
  int64_t bgc = op.attrs.get_int_or("batch_group_count", 1);
  // C21-C23: group counts positive, not both > 1.
  if (fgc <= 0) fail(w, "feature_group_count must be > 0 (got {})", fgc);
  if (bgc <= 0) fail(w, "batch_group_count must be > 0 (got {})", bgc);
  if (fgc > 1 && bgc > 1)
    fail(w, "feature_group_count and batch_group_count cannot both exceed 1 (got {} and {})", fgc,
         bgc);
  int64_t ib = lhs.dim(cd.input_batch), ifeat = lhs.dim(cd.input_feature);
  int64_t kif = rhs.dim(cd.kernel_input_feature), kof = rhs.dim(cd.kernel_output_feature);
  // C10: batch % batch_group_count == 0; C11: input features % feature_group_count == 0.
  if (ib % bgc != 0) fail(w, "input batch {} not divisible by batch_group_count {}", ib, bgc);
  if (ifeat % fgc != 0)
    fail(w, "input features {} not divisible by feature_group_count {}", ifeat, fgc);
  // C14: kernel input features = input features / feature_group_count.
  if (kif != ifeat / fgc)
    fail(w, "kernel input features differ (got {}, expected {} = {} / feature_group_count {})", kif,
         ifeat / fgc, ifeat, fgc);
  // C15/C16: kernel output features divisible by both group counts.
  if (kof % bgc != 0)
    fail(w, "kernel output features {} not divisible by batch_group_count {}", kof, bgc);
  if (kof % fgc != 0)
    fail(w, "kernel output features {} not divisible by feature_group_count {}", kof, fgc);
  check_precision(op);
  // C25: batch = ib / bgc, feature = kof, spatial dims = num_windows.
  Shape s(static_cast<size_t>(n));
  s[static_cast<size_t>(cd.output_batch)] = ib / bgc;
  s[static_cast<size_t>(cd.output_feature)] = kof;
  for (size_t i = 0; i < ns; ++i)
    s[static_cast<size_t>(cd.output_spatial[i])] =
        window_out_size(op, lhs.dim(cd.input_spatial[i]), lhs_dil[i], pads[i].first, pads[i].second,
                        rhs.dim(cd.kernel_spatial[i]), rhs_dil[i], strides[i]);
  return check_shape_given(op, given, lhs.with_shape(s));
}

}  // namespace

void register_dot_conv_rules(InferRule* t) {
  FamilyTable<InferRule> ft(t, "verify_dot_conv.cpp", {"dot", "conv"});
  ft.set(OpKind::kDotGeneral, rule_dot_general);
  ft.set(OpKind::kConvolution, rule_convolution);
}

}  // namespace netspec::hlo
