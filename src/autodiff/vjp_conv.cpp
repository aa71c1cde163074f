// VJP rule of convolution, as XLA writes it: the input gradient is a convolution of dy with the
// spatially reversed kernel (features swapped, lhs_dilation = forward strides, padding adjusted),
// the weight gradient a convolution of x with dy over the batch. Feature groups stay grouped
// (input grad: feature_group_count; weight grad: batch_group_count). General dimension numbers.
// A batch-grouped convolution (what a grouped weight gradient is) is differentiated per group.
#include "autodiff/rules.h"
#include "hlo/op_family.h"
#include "hlo/window_attrs.h"

namespace netspec::autodiff {
namespace {

using hlo::ConvDims;
using hlo::ConvOptions;
using hlo::I64s;
using hlo::OpKind;
using hlo::Value;

struct ConvAttrs {
  ConvDims d;
  I64s strides, lhs_dil, rhs_dil;
  std::vector<std::pair<int64_t, int64_t>> pad;
  std::vector<bool> rev;
  int64_t fgc = 1, bgc = 1;
};

ConvAttrs read_attrs(const hlo::Op& op) {
  ConvAttrs a;
  a.d = op.attrs.get<ConvDims>("dimension_numbers");
  size_t ns = a.d.input_spatial.size();
  a.strides = hlo::attr_i64s_or(op, "window_strides", ns, 1);
  a.lhs_dil = hlo::attr_i64s_or(op, "lhs_dilation", ns, 1);
  a.rhs_dil = hlo::attr_i64s_or(op, "rhs_dilation", ns, 1);
  a.pad = hlo::attr_padding(op, ns);
  a.rev.assign(ns, false);
  if (auto* r = op.attrs.get_if<std::vector<bool>>("window_reversal")) a.rev = *r;
  a.fgc = op.attrs.get_int_or("feature_group_count", 1);
  a.bgc = op.attrs.get_int_or("batch_group_count", 1);
  return a;
}

// dx = conv(dy, reverse(W with in/out features swapped per group), lhs_dilation = s,
//           window_strides = lhs_dilation, padding lo' = ke-1-lo, hi' = ke-1-hi + slack).
Value* input_grad(hlo::Builder& b, const ConvAttrs& a, Value* x, Value* w, Value* dy, DType acc) {
  const ConvDims& d = a.d;
  size_t ns = d.input_spatial.size();
  int64_t G = a.fgc;
  // W'' in layout [out = C, in = O/G, spatial...]: W''[g·I + c, o] = W[g·(O/G) + o, c].
  I64s perm{d.kernel_output_feature, d.kernel_input_feature};
  for (int64_t s : d.kernel_spatial) perm.push_back(s);
  Value* wt = b.transpose(w, perm);  // [O, I, S...]
  const Shape& ws = wt->type.shape();
  int64_t O = ws[0], I = ws[1];
  Shape spatial(ws.begin() + 2, ws.end());
  // G == 1: no second transpose; the dx conv reads [O, I, S...] with its kernel feature roles
  // swapped (kernel_input_feature = 0, kernel_output_feature = 1), which every engine takes as
  // a layout (one fewer pass over the weights per backward conv).
  const bool swapped = G == 1;
  if (!swapped) {
    Shape s5{G, O / G, I};
    s5.insert(s5.end(), spatial.begin(), spatial.end());
    I64s p5{0, 2, 1};
    for (size_t i = 0; i < ns; ++i) p5.push_back(static_cast<int64_t>(i + 3));
    Shape s4{G * I, O / G};
    s4.insert(s4.end(), spatial.begin(), spatial.end());
    wt = b.reshape(b.transpose(b.reshape(wt, s5), p5), s4);
  }
  I64s rev_dims;
  for (size_t i = 0; i < ns; ++i)
    if (!a.rev[i]) rev_dims.push_back(static_cast<int64_t>(i + 2));
  if (!rev_dims.empty()) wt = b.reverse(wt, rev_dims);

  ConvOptions o;
  o.dims.input_batch = d.output_batch;
  o.dims.input_feature = d.output_feature;
  o.dims.input_spatial = d.output_spatial;
  o.dims.kernel_output_feature = swapped ? 1 : 0;
  o.dims.kernel_input_feature = swapped ? 0 : 1;
  o.dims.output_batch = d.input_batch;
  o.dims.output_feature = d.input_feature;
  o.dims.output_spatial = d.input_spatial;
  for (size_t i = 0; i < ns; ++i) {
    o.dims.kernel_spatial.push_back(static_cast<int64_t>(i + 2));
    int64_t n = x->type.dim(d.input_spatial[i]);
    int64_t k = w->type.dim(d.kernel_spatial[i]);
    int64_t m = dy->type.dim(d.output_spatial[i]);
    int64_t ke = (k - 1) * a.rhs_dil[i] + 1;
    int64_t full = (n - 1) * a.lhs_dil[i] + 1 + a.pad[i].first + a.pad[i].second;
    int64_t lo = ke - 1 - a.pad[i].first;
    int64_t hi = ke - 1 - a.pad[i].second + (full - ke - (m - 1) * a.strides[i]);
    o.padding.push_back({lo, hi});
  }
  o.window_strides = a.lhs_dil;
  o.lhs_dilation = a.strides;
  o.rhs_dilation = a.rhs_dil;
  o.feature_group_count = G;
  return b.convolution(dy, wt, o, acc);
}

// dW = conv(x as [C as batch, N as feature], dy as kernel [N in, O out]) over the batch:
// window_strides = rhs_dilation, rhs_dilation = s, lhs_dilation kept; groups via batch_group_count.
Value* weight_grad(hlo::Builder& b, const ConvAttrs& a, Value* x, Value* w, Value* dy, DType acc) {
  const ConvDims& d = a.d;
  size_t ns = d.input_spatial.size();
  ConvOptions o;
  o.dims.input_batch = d.input_feature;
  o.dims.input_feature = d.input_batch;
  o.dims.input_spatial = d.input_spatial;
  o.dims.kernel_input_feature = d.output_batch;
  o.dims.kernel_output_feature = d.output_feature;
  o.dims.kernel_spatial = d.output_spatial;
  o.dims.output_batch = d.kernel_input_feature;
  o.dims.output_feature = d.kernel_output_feature;
  o.dims.output_spatial = d.kernel_spatial;
  for (size_t i = 0; i < ns; ++i) {
    int64_t n = x->type.dim(d.input_spatial[i]);
    int64_t k = w->type.dim(d.kernel_spatial[i]);
    int64_t m = dy->type.dim(d.output_spatial[i]);
    int64_t lo = a.pad[i].first;
    // Padded length so that exactly k window positions fit: (k-1)·rd + (m-1)·s + 1.
    int64_t need = (k - 1) * a.rhs_dil[i] + (m - 1) * a.strides[i] + 1;
    o.padding.push_back({lo, need - ((n - 1) * a.lhs_dil[i] + 1) - lo});
  }
  o.window_strides = a.rhs_dil;
  o.rhs_dilation = a.strides;
  o.lhs_dilation = a.lhs_dil;
  o.batch_group_count = a.fgc;
  Value* dw = b.convolution(x, dy, o, acc);
  I64s rev_dims;
  for (size_t i = 0; i < ns; ++i)
    if (a.rev[i]) rev_dims.push_back(d.kernel_spatial[i]);
  if (!rev_dims.empty()) dw = b.reverse(dw, rev_dims);
  return dw;
}

// Slice [g·n/groups, (g+1)·n/groups) of dim `d`.
Value* group_slice(hlo::Builder& b, Value* v, int64_t d, int64_t g, int64_t groups) {
  const hlo::Type& t = v->type;
  I64s start(static_cast<size_t>(t.rank()), 0), limit = t.shape();
  int64_t n = t.dim(d) / groups;
  start[static_cast<size_t>(d)] = g * n;
  limit[static_cast<size_t>(d)] = (g + 1) * n;
  return b.slice(v, start, limit);
}

std::vector<Value*> convolution(VjpCtx& c) {
  ConvAttrs a = read_attrs(c.op);
  Value* x = c.x(0);
  Value* w = c.x(1);
  Value* dy = c.dy[0];
  if (dy->type.numel() == 0)
    return {c.wants[0] ? zeros(c.b, x->type) : nullptr, c.wants[1] ? zeros(c.b, w->type) : nullptr};
  // Mixed precision (bf16 operands, f32 result): dy rounded to the operands' type, both
  // gradient convolutions accumulate in dy's type, then round to the operand's type.
  const DType acc = dy->type.dtype(), xt = x->type.dtype();
  const bool mixed = acc != xt && is_float(acc) && is_float(xt) && w->type.dtype() == xt;
  if (mixed) dy = c.b.convert(dy, xt);
  const DType xacc = mixed ? acc : xt, wacc = mixed ? acc : w->type.dtype();
  auto to = [&](Value* v, DType t) { return v && v->type.dtype() != t ? c.b.convert(v, t) : v; };
  if (a.bgc == 1)
    return {c.wants[0] ? to(input_grad(c.b, a, x, w, dy, xacc), xt) : nullptr,
            c.wants[1] ? to(weight_grad(c.b, a, x, w, dy, wacc), w->type.dtype()) : nullptr};
  // batch_group_count G (e.g. a weight gradient being differentiated again): group g is an
  // ordinary convolution of batch slice g with output-feature slice g of the kernel, so
  // dx = concat_g(dx_g) along the batch, dW = concat_g(dW_g) along the output features.
  int64_t G = a.bgc;
  ConvAttrs one = a;
  one.bgc = 1;
  std::vector<Value*> dxs, dws;
  for (int64_t g = 0; g < G; ++g) {
    Value* xg = group_slice(c.b, x, a.d.input_batch, g, G);
    Value* wg = group_slice(c.b, w, a.d.kernel_output_feature, g, G);
    Value* dyg = group_slice(c.b, dy, a.d.output_feature, g, G);
    if (c.wants[0]) dxs.push_back(to(input_grad(c.b, one, xg, wg, dyg, xacc), xt));
    if (c.wants[1]) dws.push_back(to(weight_grad(c.b, one, xg, wg, dyg, wacc), w->type.dtype()));
  }
  return {c.wants[0] ? c.b.concatenate(dxs, a.d.input_batch) : nullptr,
          c.wants[1] ? c.b.concatenate(dws, a.d.kernel_output_feature) : nullptr};
}

}  // namespace

void register_conv_vjps(VjpRule* t) {
  hlo::FamilyTable<VjpRule> ft(t, "vjp_conv.cpp", {"conv"});
  ft.set(OpKind::kConvolution, convolution);
}

}  // namespace netspec::autodiff
