// Type rules: reduce, reduce_window, select_and_scatter, map (the region-carrying reductions).
#include "hlo/op_family.h"
#include "hlo/verify_internal.h"

namespace netspec::hlo {
namespace {
using namespace vr;

// Splits N inputs + N init values, checks inputs share a shape and inits are 0-d of the
// inputs' element types; returns N.
size_t check_inputs_inits(const Op& op, size_t num_operands) {
  if (num_operands < 2 || num_operands % 2 != 0)
    fail(mn(op), "expected N inputs and N init values (got {} operands)", num_operands);
  size_t n = num_operands / 2;
  const Type& a = tensor_operand(op, 0, "input");
  for (size_t i = 0; i < n; ++i) {
    const Type& x = tensor_operand(op, i, "input");
    const Type& init = tensor_operand(op, n + i, "init_value");
    if (x.shape() != a.shape())
      fail(mn(op), "inputs must share a shape (got {} vs {})", a.str(), x.str());
    if (init.rank() != 0 || init.dtype() != x.dtype())
      fail(mn(op), "init_value #{} must be tensor<{}> (got {})", i, dtype_name(x.dtype()),
           init.str());
  }
  return n;
}

// Body of reduce / reduce_window: (tensor<E0>..., tensor<E0>...) -> (tensor<E0>...) with
// is_promotable(element_type(inputs[i]), Ei); results get element types Ei.
std::vector<Type> check_reducer(const Op& op, size_t n, std::string_view what) {
  expect_num_regions(op, 1);
  std::vector<DType> in;
  for (size_t i = 0; i < n; ++i) in.push_back(op.operand_type(i).dtype());
  std::vector<Type> accs;
  for (DType e : check_accumulator_region(op, 0, in, what)) accs.push_back(scalar(e));
  return accs;
}

std::vector<Type> rule_reduce(const Op& op, const std::vector<Type>& given) {
  size_t n = check_inputs_inits(op, op.operands.size());
  const Type& x = op.operand_type(0);
  const I64s& dims = op.attrs.get_i64s("dimensions");
  // C4: dimensions unique and in range.
  check_dims(op, dims, x.rank(), "dimensions");
  auto inits = check_reducer(op, n, "body");
  // C8: result shape = input shape without `dimensions`.
  Shape s;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!contains(dims, i)) s.push_back(x.dim(i));
  std::vector<Type> res;
  for (const auto& t : inits) res.push_back(t.with_shape(s));
  return check_given(op, given, res);
}

struct Window {
  I64s dims, strides, base, wdil;
  std::vector<std::pair<int64_t, int64_t>> pads;
};

Window window_attrs(const Op& op, int64_t rank) {
  Window w;
  size_t r = static_cast<size_t>(rank);
  w.dims = op.attrs.get_i64s("window_dimensions");
  check_size(op, w.dims.size(), r, "window_dimensions");
  w.strides = i64s_or(op, "window_strides", r, 1);
  w.base = i64s_or(op, "base_dilations", r, 1);
  w.wdil = i64s_or(op, "window_dilations", r, 1);
  w.pads = padding_attr(op, r);
  for (size_t i = 0; i < r; ++i) {
    if (w.dims[i] <= 0) fail(mn(op), "window_dimensions must be > 0 (got {})", i64s_str(w.dims));
    if (w.strides[i] <= 0) fail(mn(op), "window_strides must be > 0 (got {})", i64s_str(w.strides));
    if (w.base[i] <= 0) fail(mn(op), "base_dilations must be > 0 (got {})", i64s_str(w.base));
    if (w.wdil[i] <= 0) fail(mn(op), "window_dilations must be > 0 (got {})", i64s_str(w.wdil));
  }
  return w;
}

Shape window_shape(const Op& op, const Shape& in, const Window& w) {
  Shape s;
  for (size_t i = 0; i < in.size(); ++i)
    s.push_back(window_out_size(op, in[i], w.base[i], w.pads[i].first, w.pads[i].second, w.dims[i],
                                w.wdil[i], w.strides[i]));
  return s;
}

std::vector<Type> rule_reduce_window(const Op& op, const std::vector<Type>& given) {
  size_t n = check_inputs_inits(op, op.operands.size());
  const Type& x = op.operand_type(0);
  Window w = window_attrs(op, x.rank());
  auto inits = check_reducer(op, n, "body");
  Shape s = window_shape(op, x.shape(), w);
  std::vector<Type> res;
  for (const auto& t : inits) res.push_back(t.with_shape(s));
  return check_given(op, given, res);
}

std::vector<Type> rule_select_and_scatter(const Op& op, const std::vector<Type>& given) {
  expect_num_operands(op, 3);
  expect_num_regions(op, 2);
  const Type& x = tensor_operand(op, 0, "operand");
  const Type& src = tensor_operand(op, 1, "source");
  const Type& init = tensor_operand(op, 2, "init_value");
  for (const char* a : {"base_dilations", "window_dilations"})
    if (op.attrs.has(a)) fail("select_and_scatter", "unexpected attribute '{}'", a);
  Window w = window_attrs(op, x.rank());
  // C1: element types agree; C2: shape(source) = reduce_window shape of operand.
  if (src.dtype() != x.dtype() || init.dtype() != x.dtype() || init.rank() != 0)
    fail("select_and_scatter", "source/init_value element types must match operand {} (got {}, {})",
         x.str(), src.str(), init.str());
  Shape s = window_shape(op, x.shape(), w);
  if (src.shape() != s)
    fail("select_and_scatter", "source shape differs from the window output (got {}, expected {})",
         src.str(), src.with_shape(s).str());
  // C9: select : (tensor<E>, tensor<E>) -> tensor<i1>; C10: scatter : (E, E) -> E.
  // C11: result has the operand's shape and the scatter region's element type.
  Type e = scalar(x.dtype());
  expect_region_args(op, 0, {e, e}, "select");
  expect_region_results(op, 0, {scalar(DType::kI1)}, "select");
  DType se = check_accumulator_region(op, 1, {x.dtype()}, "scatter")[0];
  return check_given(op, given, {x.with_dtype(se)});
}

std::vector<Type> rule_map(const Op& op, const std::vector<Type>& given) {
  expect_min_operands(op, 1);
  expect_num_regions(op, 1);
  const Type& a = tensor_operand(op, 0, "input");
  std::vector<Type> args;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Type& x = tensor_operand(op, i, "input");
    // C1: all inputs share a shape.
    if (x.shape() != a.shape())
      fail("map", "inputs must share a shape (got {} vs {})", a.str(), x.str());
    args.push_back(scalar(x.dtype()));
  }
  // C2: dimensions = [0, ..., R-1].
  const I64s& dims = op.attrs.get_i64s("dimensions");
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i) || dims.size() != static_cast<size_t>(a.rank()))
      fail("map", "dimensions must be [0, ..., {}] (got {})", a.rank() - 1, i64s_str(dims));
  if (dims.size() != static_cast<size_t>(a.rank()))
    fail("map", "dimensions must list every dim (got {}, rank {})", i64s_str(dims), a.rank());
  // C3: computation : (tensor<E0>, ..., tensor<EN-1>) -> tensor<E'>.
  expect_region_args(op, 0, args, "computation");
  auto rs = region_results(op, 0, "computation");
  if (rs.size() != 1 || !rs[0].is_tensor() || rs[0].rank() != 0)
    fail("map", "computation must return one 0-d tensor (got ({}))", types_str(rs));
  return check_given(op, given, {a.with_dtype(rs[0].dtype())});
}

}  // namespace

void register_reduce_window_rules(InferRule* t) {
  FamilyTable<InferRule> ft(t, "verify_reduce_window.cpp", {"reduce", "window"});
  ft.set(OpKind::kReduce, rule_reduce);
  ft.set(OpKind::kReduceWindow, rule_reduce_window);
  ft.set(OpKind::kSelectAndScatter, rule_select_and_scatter);
  ft.set(OpKind::kMap, rule_map);
}

}  // namespace netspec::hlo
