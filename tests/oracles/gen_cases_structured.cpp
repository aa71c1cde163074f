// Oracle cases for the structured op families: shape ops, dot_general, convolution, reduce,
// reduce_window, select_and_scatter, map, gather, scatter, sort, control flow, calls, tuples,
// constants and iota, rng_bit_generator, all_reduce, and a small network forward pass.
#include <cmath>
#include <limits>

#include "gen_cases.h"

namespace netspec::oracles {
namespace {

using hlo::ConvDims;
using hlo::ConvOptions;
using hlo::DotDims;
using hlo::GatherDims;
using hlo::ScatterDims;
using hlo::WindowOptions;
constexpr DType kF32 = DType::kF32;
constexpr DType kF64 = DType::kF64;
constexpr DType kI32 = DType::kI32;
constexpr DType kI64 = DType::kI64;
constexpr DType kI1 = DType::kI1;

Value* scalar_arg(CaseCtx& c, DType d, int64_t v) {  // a rank-0 integer input
  return c.arg(Tensor::from<int64_t>(d, {}, {v}));
}

// --- shape ops ------------------------------------------------------------------------------

ORACLE_CASE(reshape_transpose) {
  Value* x = c.arg(c.normal(kF32, {2, 3, 4}));
  Value* t = c.b.transpose(x, {2, 0, 1});
  c.ret({t, c.b.reshape(t, {8, 3})});
}
ORACLE_CASE(broadcast_in_dim) {  // size-1 expansion, new dims, a scalar
  Value* x = c.arg(c.normal(kF32, {3, 1}));
  Value* s = c.arg(Tensor::from<double>(kI32, {}, {7}));
  c.ret({c.b.broadcast_in_dim(x, {2, 3, 4}, {1, 2}), c.b.broadcast_in_dim(s, {2, 2}, {})});
}
ORACLE_CASE(slice_strided) {
  Value* x = c.arg(c.normal(kF32, {6, 7}));
  c.ret({c.b.slice(x, {1, 0}, {6, 7}, {2, 3}), c.b.slice(x, {2, 3}, {2, 5})});
}
ORACLE_CASE(dynamic_slice_clamped) {  // start indices are clamped into [0, dim - size]
  Value* x = c.arg(c.normal(kF32, {5, 6}));
  Value* i = scalar_arg(c, kI32, 3);
  Value* j = scalar_arg(c, kI32, -2);
  Value* k = scalar_arg(c, kI32, 9);
  c.ret({c.b.dynamic_slice(x, {i, j}, {3, 4}), c.b.dynamic_slice(x, {k, i}, {2, 3})});
}
ORACLE_CASE(dynamic_update_slice_clamped) {
  Value* x = c.arg(c.normal(kF32, {4, 5}));
  Value* u = c.arg(c.normal(kF32, {2, 3}));
  Value* i = scalar_arg(c, kI32, 3);
  Value* j = scalar_arg(c, kI32, 4);
  Value* z = scalar_arg(c, kI32, 1);
  c.ret({c.b.dynamic_update_slice(x, u, {i, j}), c.b.dynamic_update_slice(x, u, {z, z})});
}
ORACLE_CASE(concatenate_three) {
  Value* a = c.arg(c.normal(kF32, {2, 1}));
  Value* b = c.arg(c.normal(kF32, {2, 3}));
  Value* d = c.arg(c.normal(kF32, {2, 2}));
  c.ret({c.b.concatenate({a, b, d}, 1), c.b.concatenate({b, b}, 0)});
}
ORACLE_CASE(pad_negative_interior) {  // low/high may cut (negative); interior inserts between
  Value* x = c.arg(c.normal(kF32, {3, 4}));
  Value* v = c.b.scalar(-9.5, kF32);
  c.ret({c.b.pad(x, v, {1, -1}, {-1, 2}, {1, 0}), c.b.pad(x, v, {0, 2}, {0, 0}, {2, 1})});
}
ORACLE_CASE(pad_i32) {
  Value* x = c.arg(c.ints(kI32, {2, 3}, -5, 5));
  c.ret({c.b.pad(x, c.b.scalar(7, kI32), {2, -2}, {-1, 1}, {0, 1})});
}
ORACLE_CASE(reverse) {
  Value* x = c.arg(c.normal(kF32, {2, 3, 4}));
  c.ret({c.b.reverse(x, {0, 2}), c.b.reverse(x, {1})});
}

// --- dot_general ----------------------------------------------------------------------------

ORACLE_CASE(dot_matmul) {
  c.accum();
  Value* a = c.arg(c.normal(kF32, {3, 4}));
  Value* b = c.arg(c.normal(kF32, {4, 5}));
  c.ret({c.b.dot_general(a, b, DotDims{{}, {}, {1}, {0}})});
}
ORACLE_CASE(dot_batch) {
  c.accum();
  Value* a = c.arg(c.normal(kF32, {2, 3, 4}));
  Value* b = c.arg(c.normal(kF32, {2, 4, 5}));
  c.ret({c.b.dot_general(a, b, DotDims{{0}, {0}, {2}, {1}})});
}
ORACLE_CASE(dot_batch_middle) {  // result dims: batch, lhs free, rhs free
  c.accum();
  Value* a = c.arg(c.normal(kF32, {3, 2, 4}));
  Value* b = c.arg(c.normal(kF32, {4, 2, 5}));
  c.ret({c.b.dot_general(a, b, DotDims{{1}, {1}, {2}, {0}})});
}
ORACLE_CASE(dot_two_contracting) {
  c.accum();
  Value* a = c.arg(c.normal(kF32, {2, 3, 4}));
  Value* b = c.arg(c.normal(kF32, {3, 4, 5}));
  c.ret({c.b.dot_general(a, b, DotDims{{}, {}, {1, 2}, {0, 1}}, {"HIGHEST", "HIGHEST"})});
}
ORACLE_CASE(dot_outer) {
  c.accum();
  Value* a = c.arg(c.normal(kF32, {3}));
  Value* b = c.arg(c.normal(kF32, {4}));
  c.ret({c.b.dot_general(a, b, DotDims{})});
}
ORACLE_CASE(dot_i32) {
  Value* a = c.arg(c.ints(kI32, {3, 4}, -9, 9));
  Value* b = c.arg(c.ints(kI32, {4, 2}, -9, 9));
  c.ret({c.b.dot_general(a, b, DotDims{{}, {}, {1}, {0}})});
}
ORACLE_CASE(dot_f64) {
  c.accum(kF64);
  Value* a = c.arg(c.normal(kF64, {2, 3, 5}));
  Value* b = c.arg(c.normal(kF64, {2, 5, 3}));
  c.ret({c.b.dot_general(a, b, DotDims{{0}, {0}, {2}, {1}})});
}

// --- convolution ----------------------------------------------------------------------------

ORACLE_CASE(conv2d_basic) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {2, 3, 6, 6}));
  Value* w = c.arg(c.normal(kF32, {4, 3, 3, 3}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.padding = {{1, 1}, {1, 1}};
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv2d_strided_dilated) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {1, 2, 9, 8}));
  Value* w = c.arg(c.normal(kF32, {3, 2, 3, 2}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.window_strides = {2, 3};
  o.padding = {{1, 2}, {0, 1}};
  o.rhs_dilation = {2, 1};
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv2d_lhs_dilation) {  // the transposed convolution a VJP emits
  c.accum();
  Value* x = c.arg(c.normal(kF32, {1, 2, 4, 4}));
  Value* w = c.arg(c.normal(kF32, {2, 2, 3, 3}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.lhs_dilation = {2, 2};
  o.padding = {{2, 2}, {2, 1}};
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv2d_negative_padding) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {1, 1, 6, 6}));
  Value* w = c.arg(c.normal(kF32, {2, 1, 2, 2}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.padding = {{-1, 0}, {1, -2}};
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv2d_depthwise) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {1, 4, 5, 5}));
  Value* w = c.arg(c.normal(kF32, {8, 1, 3, 3}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.feature_group_count = 4;
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv2d_feature_groups) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {2, 4, 5, 4}));
  Value* w = c.arg(c.normal(kF32, {6, 2, 2, 3}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.feature_group_count = 2;
  o.padding = {{0, 1}, {1, 1}};
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv2d_batch_groups) {  // the weight-gradient form of a grouped convolution
  c.accum();
  Value* x = c.arg(c.normal(kF32, {4, 3, 5, 5}));
  Value* w = c.arg(c.normal(kF32, {2, 3, 3, 3}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.batch_group_count = 2;
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv2d_nhwc_hwio) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {2, 5, 5, 3}));
  Value* w = c.arg(c.normal(kF32, {3, 3, 3, 4}));
  ConvOptions o;
  o.dims = ConvDims{0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  o.window_strides = {2, 1};
  o.padding = {{1, 1}, {0, 0}};
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv2d_window_reversal) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {1, 1, 5, 5}));
  Value* w = c.arg(c.normal(kF32, {1, 1, 3, 3}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.window_reversal = {true, false};
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv1d) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {2, 3, 10}));
  Value* w = c.arg(c.normal(kF32, {4, 3, 3}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(1);
  o.window_strides = {2};
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv3d) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {1, 2, 4, 4, 4}));
  Value* w = c.arg(c.normal(kF32, {2, 2, 2, 2, 2}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(3);
  o.padding = {{0, 0}, {1, 0}, {0, 1}};
  c.ret({c.b.convolution(x, w, o)});
}
ORACLE_CASE(conv2d_f64) {
  c.accum(kF64);
  Value* x = c.arg(c.normal(kF64, {1, 2, 5, 5}));
  Value* w = c.arg(c.normal(kF64, {3, 2, 3, 3}));
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.window_strides = {2, 2};
  o.padding = {{1, 1}, {1, 1}};
  c.ret({c.b.convolution(x, w, o)});
}

// --- reduce, reduce_window, select_and_scatter, map ------------------------------------------

const double kInf = std::numeric_limits<double>::infinity();

ORACLE_CASE(reduce_sum_dims) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {2, 3, 4}));
  c.ret({c.b.reduce(x, c.b.scalar(0, kF32), {0, 2}, OpKind::kAdd)});
}
ORACLE_CASE(reduce_max_all_with_nan) {  // max propagates NaN
  Value* x = c.arg(c.normal(kF32, {3, 4}));
  Value* y = c.arg(mat(kF32, {2, 2}, {1.0, std::nan(""), -2.0, 3.0}));
  c.ret({c.b.reduce(x, c.b.scalar(-kInf, kF32), {0, 1}, OpKind::kMaximum),
         c.b.reduce(y, c.b.scalar(-kInf, kF32), {1}, OpKind::kMaximum)});
}
ORACLE_CASE(reduce_int_and_bool) {
  Value* x = c.arg(c.ints(kI32, {3, 5}, -50, 50));
  Value* p = c.arg(c.bools({4, 3}));
  c.ret({c.b.reduce(x, c.b.scalar(2147483647, kI32), {1}, OpKind::kMinimum),
         c.b.reduce(x, c.b.scalar(0, kI32), {0}, OpKind::kAdd),
         c.b.reduce(p, c.b.scalar(1, kI1), {0}, OpKind::kAnd),
         c.b.reduce(p, c.b.scalar(0, kI1), {1}, OpKind::kOr)});
}
ORACLE_CASE(reduce_multiply_f64) {
  Value* x = c.arg(c.normal(kF64, {4, 3}));
  c.ret({c.b.reduce(x, c.b.scalar(1, kF64), {0}, OpKind::kMultiply)});
}
ORACLE_CASE(reduce_argmax_variadic) {  // (value, index) pairs; ties take the smaller index
  Value* x = c.arg(c.normal(kF32, {3, 5}));
  Value* idx = c.b.iota(tt(kI32, {3, 5}), 1);
  auto r = c.b.reduce({x, idx}, {c.b.scalar(-kInf, kF32), c.b.scalar(0, kI32)}, {1},
                      [](Builder& b, const std::vector<Value*>& a) {
                        Value* gt = b.compare(a[0], a[2], "GT");
                        Value* eq = b.compare(a[0], a[2], "EQ");
                        Value* lt_i = b.compare(a[1], a[3], "LT");
                        Value* take_a = b.or_(gt, b.and_(eq, lt_i));
                        return std::vector<Value*>{b.select(take_a, a[0], a[2]),
                                                   b.select(take_a, a[1], a[3])};
                      });
  c.ret(r);
}
ORACLE_CASE(reduce_window_maxpool_padded) {
  Value* x = c.arg(c.normal(kF32, {1, 2, 6, 6}));
  WindowOptions w;
  w.window_dimensions = {1, 1, 3, 3};
  w.window_strides = {1, 1, 2, 2};
  w.padding = {{0, 0}, {0, 0}, {1, 1}, {1, 1}};
  c.ret({c.b.reduce_window(x, c.b.scalar(-kInf, kF32), w, OpKind::kMaximum)});
}
ORACLE_CASE(reduce_window_dilated_sum) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {5, 4}));
  WindowOptions w;
  w.window_dimensions = {2, 2};
  w.base_dilations = {1, 2};
  w.window_dilations = {2, 1};
  w.padding = {{0, 1}, {1, 0}};
  c.ret({c.b.reduce_window(x, c.b.scalar(0, kF32), w, OpKind::kAdd)});
}
ORACLE_CASE(reduce_window_i32_min) {
  Value* x = c.arg(c.ints(kI32, {4, 6}, -100, 100));
  WindowOptions w;
  w.window_dimensions = {2, 3};
  w.window_strides = {2, 2};
  c.ret({c.b.reduce_window(x, c.b.scalar(2147483647, kI32), w, OpKind::kMinimum)});
}
std::vector<Value*> select_ge(Builder& b, const std::vector<Value*>& a) {
  return {b.compare(a[0], a[1], "GE")};
}
std::vector<Value*> scatter_add(Builder& b, const std::vector<Value*>& a) {
  return {b.add(a[0], a[1])};
}
ORACLE_CASE(select_and_scatter_maxpool_grad) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {1, 1, 4, 4}));
  Value* s = c.arg(c.normal(kF32, {1, 1, 2, 2}));
  WindowOptions w;
  w.window_dimensions = {1, 1, 2, 2};
  w.window_strides = {1, 1, 2, 2};
  c.ret({c.b.select_and_scatter(x, s, c.b.scalar(0, kF32), w, select_ge, scatter_add)});
}
ORACLE_CASE(select_and_scatter_overlap_padded) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {5, 5}));
  Value* s = c.arg(c.normal(kF32, {3, 3}));
  WindowOptions w;
  w.window_dimensions = {3, 3};
  w.window_strides = {2, 2};
  w.padding = {{1, 1}, {1, 1}};
  c.ret({c.b.select_and_scatter(x, s, c.b.scalar(0, kF32), w, select_ge, scatter_add)});
  c.iree_cannot("IREE cannot legalize select_and_scatter with padding");
}
ORACLE_CASE(map_two_inputs) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {3, 4}));
  Value* y = c.arg(c.normal(kF32, {3, 4}));
  c.ret(c.b.map({x, y}, {0, 1}, [](Builder& b, const std::vector<Value*>& a) {
    return std::vector<Value*>{b.add(b.multiply(a[0], a[1]), b.maximum(a[0], a[1]))};
  }));
}

// --- gather, scatter, sort ------------------------------------------------------------------

ORACLE_CASE(gather_embedding_clamped) {  // out-of-range starts are clamped
  Value* table = c.arg(c.normal(kF32, {5, 3}));
  Value* ids = c.arg(ivec(kI32, {0, 4, 7, -1, 2}));
  GatherDims d;
  d.offset_dims = {1};
  d.collapsed_slice_dims = {0};
  d.start_index_map = {0};
  d.index_vector_dim = 1;
  c.ret({c.b.gather(table, ids, d, {1, 3})});
}
ORACLE_CASE(gather_2d_windows) {
  Value* x = c.arg(c.normal(kF32, {4, 5, 6}));
  Value* idx = c.arg(c.ints(kI32, {2, 3, 2}, 0, 4));
  GatherDims d;
  d.offset_dims = {2, 3};
  d.collapsed_slice_dims = {0};
  d.start_index_map = {0, 2};
  d.index_vector_dim = 2;
  c.ret({c.b.gather(x, idx, d, {1, 2, 3})});
}
ORACLE_CASE(gather_batching_dims) {
  Value* x = c.arg(c.normal(kF32, {2, 5, 3}));
  Value* idx = c.arg(c.ints(kI32, {2, 4, 1}, 0, 4));
  GatherDims d;
  d.offset_dims = {2};
  d.collapsed_slice_dims = {1};
  d.operand_batching_dims = {0};
  d.start_indices_batching_dims = {0};
  d.start_index_map = {1};
  d.index_vector_dim = 2;
  c.ret({c.b.gather(x, idx, d, {1, 1, 3})});
}
void scatter_rows_case(CaseCtx& c, const std::vector<int64_t>& rows) {
  Value* x = c.arg(c.ints(kI32, {5, 3}, -10, 10));
  Value* idx = c.arg(ivec(kI32, rows));
  Value* u = c.arg(c.ints(kI32, {static_cast<int64_t>(rows.size()), 3}, -10, 10));
  ScatterDims d;
  d.update_window_dims = {1};
  d.inserted_window_dims = {0};
  d.scatter_dims_to_operand_dims = {0};
  d.index_vector_dim = 1;
  c.ret(c.b.scatter({x}, idx, {u}, d, scatter_add));
}
ORACLE_CASE(scatter_add_duplicates_i32) { scatter_rows_case(c, {0, 2, 0, 3, 4, 2}); }
ORACLE_CASE(scatter_out_of_range_skipped) {  // the spec skips updates whose window leaves the operand
  scatter_rows_case(c, {1, 9, -1, 4, 5});
  c.iree_cannot("IREE's scatter does not bounds-check: out-of-range rows write past the buffer "
                "(iree-run-module crashes with --device=local-sync)");
}
ORACLE_CASE(scatter_replace_2d) {
  Value* x = c.arg(c.normal(kF32, {4, 4}));
  Value* idx = c.arg(Tensor::from<int64_t>(kI32, {3, 2}, {0, 1, 3, 3, 2, 0}));
  Value* u = c.arg(c.normal(kF32, {3}));
  ScatterDims d;
  d.inserted_window_dims = {0, 1};
  d.scatter_dims_to_operand_dims = {0, 1};
  d.index_vector_dim = 1;
  c.ret(c.b.scatter({x}, idx, {u}, d,
                    [](Builder&, const std::vector<Value*>& a) { return std::vector<Value*>{a[1]}; },
                    false, true));
}
ORACLE_CASE(scatter_add_window_f32) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {3, 6}));
  Value* idx = c.arg(Tensor::from<int64_t>(kI32, {2, 1}, {1, 3}));
  Value* u = c.arg(c.normal(kF32, {2, 3, 2}));
  ScatterDims d;
  d.update_window_dims = {1, 2};
  d.scatter_dims_to_operand_dims = {1};
  d.index_vector_dim = 1;
  c.ret(c.b.scatter({x}, idx, {u}, d, scatter_add));
  c.iree_cannot("iree_linalg_ext.scatter: 'mismatch in shape of indices and update value' for "
                "update_window_dims = [1, 2] without inserted_window_dims");
}
ORACLE_CASE(sort_f32_ascending) {
  Value* x = c.arg(c.normal(kF32, {3, 7}));
  c.ret(c.b.sort({x}, 1, false, [](Builder& b, const std::vector<Value*>& a) {
    return std::vector<Value*>{b.compare(a[0], a[1], "LT")};
  }));
}
ORACLE_CASE(sort_totalorder_specials) {  // -NaN < -inf < ... < -0 < +0 < ... < inf < NaN
  Value* x = c.arg(vec(kF32, {3.0, std::nan(""), -0.0, kInf, 0.0, -kInf, -1.0, 2.0}));
  c.ret(c.b.sort({x}, 0, true, [](Builder& b, const std::vector<Value*>& a) {
    return std::vector<Value*>{b.compare(a[0], a[1], "LT", "TOTALORDER")};
  }));
}
ORACLE_CASE(sort_stable_key_value) {  // equal keys keep their input order
  Value* k = c.arg(ivec(kI32, {3, 1, 2, 1, 3, 0, 2, 1}));
  Value* v = c.arg(c.normal(kF32, {8}));
  c.ret(c.b.sort({k, v}, 0, true, [](Builder& b, const std::vector<Value*>& a) {
    return std::vector<Value*>{b.compare(a[0], a[1], "LT")};
  }));
  c.iree_wrong("IREE's sort ignores is_stable: equal keys come out reordered");
}
ORACLE_CASE(sort_descending_dim0) {
  Value* x = c.arg(c.normal(kF32, {4, 3}));
  c.ret(c.b.sort({x}, 0, false, [](Builder& b, const std::vector<Value*>& a) {
    return std::vector<Value*>{b.compare(a[0], a[1], "GT")};
  }));
}

// --- control flow, calls, tuples ------------------------------------------------------------

ORACLE_CASE(while_fori) {  // acc = acc/2 + x, five times
  c.accum();
  Value* x = c.arg(c.normal(kF32, {3}));
  Value* i0 = c.b.scalar(0, kI32);
  auto r = c.b.while_(
      {i0, x},
      [](Builder& b, const std::vector<Value*>& a) {
        return std::vector<Value*>{b.compare(a[0], b.scalar(5, kI32), "LT")};
      },
      [x](Builder& b, const std::vector<Value*>& a) {
        Value* half = b.multiply(a[1], b.constant_splat(0.5, a[1]->type));
        return std::vector<Value*>{b.add(a[0], b.scalar(1, kI32)), b.add(half, x)};
      });
  c.ret(r);
}
ORACLE_CASE(if_both_ways) {
  Value* p = c.arg(Tensor::from<int64_t>(kI1, {}, {1}));
  Value* x = c.arg(c.normal(kF32, {2, 2}));
  auto branches = [&](Value* pred) {
    return c.b.if_(
        pred, [x](Builder& b, const std::vector<Value*>&) { return std::vector<Value*>{b.exponential(x)}; },
        [x](Builder& b, const std::vector<Value*>&) { return std::vector<Value*>{b.negate(x)}; })[0];
  };
  Value* a = branches(p);
  Value* b = branches(c.b.not_(p));
  c.ret({a, b});
}
ORACLE_CASE(case_in_and_out_of_range) {  // an out-of-range index runs the last branch
  Value* x = c.arg(c.normal(kF32, {3}));
  std::vector<hlo::RegionFn> br = {
      [x](Builder& b, const std::vector<Value*>&) { return std::vector<Value*>{b.sine(x)}; },
      [x](Builder& b, const std::vector<Value*>&) { return std::vector<Value*>{b.abs(x)}; },
      [x](Builder& b, const std::vector<Value*>&) { return std::vector<Value*>{b.add(x, x)}; }};
  Value* i1 = scalar_arg(c, kI32, 1);
  Value* i5 = scalar_arg(c, kI32, 5);
  Value* im = scalar_arg(c, kI32, -1);
  c.ret({c.b.case_(i1, br)[0], c.b.case_(i5, br)[0], c.b.case_(im, br)[0]});
}
ORACLE_CASE(call_private_function) {  // a private helper called from main and from a loop body
  c.accum();
  hlo::Func* h = c.m.add_func("helper", {tt(kF32, {3}), tt(kF32, {3})}, false);
  Builder hb(h->body.get());
  hb.func_return({hb.add(hb.tanh(h->arg(0)), hb.multiply(h->arg(1), h->arg(1)))});
  Value* x = c.arg(c.normal(kF32, {3}));
  Value* y = c.arg(c.normal(kF32, {3}));
  Value* once = c.b.call(*h, {x, y})[0];
  auto loop = c.b.while_(
      {c.b.scalar(0, kI32), once},
      [](Builder& b, const std::vector<Value*>& a) {
        return std::vector<Value*>{b.compare(a[0], b.scalar(2, kI32), "LT")};
      },
      [h, y](Builder& b, const std::vector<Value*>& a) {
        return std::vector<Value*>{b.add(a[0], b.scalar(1, kI32)), b.call(*h, {a[1], y})[0]};
      });
  c.ret({once, loop[1]});
}
ORACLE_CASE(tuple_and_barrier) {
  Value* x = c.arg(c.normal(kF32, {2}));
  Value* y = c.arg(c.ints(kI32, {3}, 0, 9));
  Value* t = c.b.tuple({x, y});
  auto ob = c.b.optimization_barrier({c.b.get_tuple_element(t, 1), c.b.get_tuple_element(t, 0)});
  c.ret({ob[1], ob[0]});
}

// --- constants, iota, rng, all_reduce -------------------------------------------------------

ORACLE_CASE(constants_special_values) {  // the printer's float spellings, round-tripped
  Value* x = c.arg(c.normal(kF32, {8}));
  Value* k = c.b.constant(vec(kF32, {std::nan(""), kInf, -kInf, -0.0, 1e-45, 3.4028234663852886e38,
                                     0.1, 1.0 / 3.0}));
  Value* d = c.b.constant(vec(kF64, {0.1, 1.0 / 3.0, 1e-310, -1.7976931348623157e308}));
  Value* i = c.b.constant(ivec(kI64, {std::numeric_limits<int64_t>::min(), -1, 0,
                                      std::numeric_limits<int64_t>::max()}));
  Value* p = c.b.constant(ivec(kI1, {1, 0, 1}));
  c.ret({c.b.add(x, k), d, i, p, c.b.constant_splat(-2.5, tt(kF32, {2, 3}))});
}
ORACLE_CASE(iota_types) {
  c.ret({c.b.iota(tt(kF32, {3, 4}), 1), c.b.iota(tt(kI32, {2, 3}), 0),
         c.b.iota(tt(kI64, {5}), 0), c.b.iota(tt(kF64, {2, 2, 3}), 2)});
}
ORACLE_CASE(rng_three_fry) {
  Value* s = c.arg(Tensor::from<int64_t>(DType::kUI64, {2}, {42, 7}));
  auto [ns, out] = c.b.rng_bit_generator(s, tt(DType::kUI32, {4, 3}), "THREE_FRY");
  c.ret({ns, out});
}
ORACLE_CASE(rng_philox) {
  Value* s = c.arg(Tensor::from<int64_t>(DType::kUI64, {3}, {1, 2, 3}));
  auto [ns, out] = c.b.rng_bit_generator(s, tt(DType::kUI64, {5}), "PHILOX");
  c.ret({ns, out});
  // The spec leaves the Philox variant to the implementation; ref follows XLA's.
  c.iree_wrong("IREE's Philox variant differs from XLA's (implementation-defined)");
}
ORACLE_CASE(rng_default_shapes) {  // DEFAULT is implementation-defined: compare shapes only
  Value* s = c.arg(Tensor::from<int64_t>(DType::kUI64, {2}, {5, 6}));
  auto [ns, out] = c.b.rng_bit_generator(s, tt(DType::kUI32, {2, 2}), "DEFAULT");
  c.ret({ns, out});
  c.meta["shape_only"] = {0, 1};
}
ORACLE_CASE(all_reduce_single_replica) {  // one replica: the sum over one group is the input
  Value* x = c.arg(c.normal(kF32, {2, 3}));
  c.ret(c.b.all_reduce({x}, {{0}}, OpKind::kAdd));
  c.meta["compile_only"]["iree"] = "IREE's local runtime has no collectives (hal.channel.create)";
}

// --- a small network: conv + bias + relu + maxpool + dense + log-softmax ----------------------

ORACLE_CASE(net_cnn_forward) {
  c.accum();
  Value* x = c.arg(c.normal(kF32, {2, 1, 8, 8}));
  Value* w = c.arg(c.normal(kF32, {4, 1, 3, 3}, 0.5));
  Value* bias = c.arg(c.normal(kF32, {4}, 0.1));
  Value* wd = c.arg(c.normal(kF32, {64, 10}, 0.2));
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.padding = {{1, 1}, {1, 1}};
  Value* y = c.b.convolution(x, w, o);
  y = c.b.add(y, c.b.broadcast_in_dim(bias, {2, 4, 8, 8}, {1}));
  y = c.b.maximum(y, c.b.constant_splat(0, y->type));
  WindowOptions pw;
  pw.window_dimensions = {1, 1, 2, 2};
  pw.window_strides = {1, 1, 2, 2};
  y = c.b.reduce_window(y, c.b.scalar(-kInf, kF32), pw, OpKind::kMaximum);
  y = c.b.reshape(y, {2, 64});
  Value* logits = c.b.dot_general(y, wd, DotDims{{}, {}, {1}, {0}});
  Value* m = c.b.reduce(logits, c.b.scalar(-kInf, kF32), {1}, OpKind::kMaximum);
  Value* z = c.b.subtract(logits, c.b.broadcast_in_dim(m, {2, 10}, {0}));
  Value* lse = c.b.log(c.b.reduce(c.b.exponential(z), c.b.scalar(0, kF32), {1}, OpKind::kAdd));
  c.ret({c.b.subtract(z, c.b.broadcast_in_dim(lse, {2, 10}, {0}))});
}

}  // namespace
}  // namespace netspec::oracles
