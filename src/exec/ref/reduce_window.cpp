// Reference kernels: reduce (variadic, any body), reduce_window, select_and_scatter, map.
// Bodies run per element through ScalarRegion; reductions go in row-major order of the reduced
// indices starting from the init values (the spec allows any schedule).
#include <algorithm>

#include "exec/ref/kernel_util.h"
#include "hlo/op_family.h"

namespace netspec::exec::ref {
namespace {

// Folds element `src_i` of xs into accumulator slot `acc_i` of accs: accs = body(accs, xs).
void fold(const ScalarRegion& body, std::vector<Tensor>& accs, int64_t acc_i,
          const std::vector<Tensor>& xs, int64_t src_i) {
  if (body.fast() && accs.size() == 1) {
    body.apply_fast(accs[0], acc_i, xs[0], src_i, accs[0], acc_i);
    return;
  }
  std::vector<Tensor> args;
  for (const Tensor& a : accs) args.push_back(scalar_at(a, acc_i));
  for (const Tensor& x : xs) args.push_back(scalar_at(x, src_i));
  std::vector<Tensor> r = body(args);
  for (size_t k = 0; k < accs.size(); ++k) copy_elem(accs[k], acc_i, r.at(k), 0);
}

// reduce: results[r] = body-fold over the `dimensions` of inputs, starting at init_values.
std::vector<Tensor> eval_reduce(const hlo::Op& op, const std::vector<Tensor>& in, RunContext& ctx) {
  size_t n = in.size() / 2;
  std::vector<Tensor> xs(in.begin(), in.begin() + static_cast<long>(n));
  const I64s& dims = op.attrs.get_i64s("dimensions");
  std::vector<Tensor> outs;
  for (size_t k = 0; k < n; ++k) {
    outs.push_back(result_tensor(op, k));
    for (int64_t i = 0; i < outs[k].numel(); ++i) copy_elem(outs[k], i, in[n + k], 0);
  }
  const Shape& shape = xs[0].shape();
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t d : dims) reduced.at(static_cast<size_t>(d)) = true;
  Shape kept;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d]) kept.push_back(shape[d]);
  auto ks = row_major_strides(kept);
  ScalarRegion body(*op.region(0), ctx);
  int64_t src = 0;
  for_each_index(shape, [&](const I64s& idx) {
    int64_t dst = 0;
    for (size_t d = 0, j = 0; d < shape.size(); ++d)
      if (!reduced[d]) dst += idx[d] * ks[j++];
    fold(body, outs, dst, xs, src++);
  });
  return outs;
}

// reduce_window per the spec: inputs are padded (and base-dilated) with the init values, and
// each window [r*stride, ... step window_dilation] is reduced from the init values. Padding and
// dilation holes therefore contribute init values to the fold. (XLA CPU skips them instead; the
// two agree whenever init is the body's identity, as in every pooling JAX emits.)
std::vector<Tensor> eval_reduce_window(const hlo::Op& op, const std::vector<Tensor>& in,
                                       RunContext& ctx) {
  size_t n = in.size() / 2;
  const Shape& shape = in[0].shape();
  size_t r = shape.size();
  const I64s& wdim = op.attrs.get_i64s("window_dimensions");
  I64s wstr = i64s_or(op, "window_strides", r, 1);
  I64s bdil = i64s_or(op, "base_dilations", r, 1);
  I64s wdil = i64s_or(op, "window_dilations", r, 1);
  auto pad = padding_or_zero(op, "padding", r);
  std::vector<Tensor> outs, inits(in.begin() + static_cast<long>(n), in.end());
  for (size_t k = 0; k < n; ++k) {
    outs.push_back(result_tensor(op, k));
    for (int64_t i = 0; i < outs[k].numel(); ++i) copy_elem(outs[k], i, in[n + k], 0);
  }
  auto xs = row_major_strides(shape);
  ScalarRegion body(*op.region(0), ctx);
  std::vector<Tensor> srcs(in.begin(), in.begin() + static_cast<long>(n));
  int64_t dst = 0;
  for_each_index(outs[0].shape(), [&](const I64s& ridx) {
    for_each_index(wdim, [&](const I64s& w) {
      int64_t off = 0;
      bool is_pad = false;
      for (size_t d = 0; d < r; ++d) {
        int64_t pos = ridx[d] * wstr[d] + w[d] * wdil[d] - pad[d].first;  // in dilated coords
        if (pos < 0 || pos % bdil[d] != 0 || pos / bdil[d] >= shape[d]) {
          is_pad = true;
          break;
        }
        off += (pos / bdil[d]) * xs[d];
      }
      if (is_pad)
        fold(body, outs, dst, inits, 0);
      else
        fold(body, outs, dst, srcs, off);
    });
    ++dst;
  });
  return outs;
}

// select_and_scatter: per source window, pick the operand element kept by `select` (first
// candidate wins unless select(current, candidate) is false; padding is never a candidate),
// then result[picked] = scatter(result[picked], source) starting from init_value everywhere.
std::vector<Tensor> eval_select_and_scatter(const hlo::Op& op, const std::vector<Tensor>& in,
                                            RunContext& ctx) {
  const Tensor &x = in[0], &source = in[1], &init = in[2];
  const Shape& shape = x.shape();
  size_t r = shape.size();
  const I64s& wdim = op.attrs.get_i64s("window_dimensions");
  I64s wstr = i64s_or(op, "window_strides", r, 1);
  auto pad = padding_or_zero(op, "padding", r);
  Tensor out = result_tensor(op);
  for (int64_t i = 0; i < out.numel(); ++i) copy_elem(out, i, init, 0);
  auto xs = row_major_strides(shape);
  ScalarRegion select(*op.region(0), ctx);
  ScalarRegion scatter(*op.region(1), ctx);
  std::vector<Tensor> out_v{out};
  std::vector<Tensor> src_v{source};
  int64_t s = 0;
  for_each_index(source.shape(), [&](const I64s& sidx) {
    int64_t best = -1;
    for_each_index(wdim, [&](const I64s& w) {
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) {
        int64_t p = sidx[d] * wstr[d] + w[d] - pad[d].first;
        if (p < 0 || p >= shape[d]) return;
        off += p * xs[d];
      }
      if (best < 0) {
        best = off;
        return;
      }
      std::vector<Tensor> args;
      args.push_back(scalar_at(x, best));
      args.push_back(scalar_at(x, off));
      if (!pred_at(select(args).at(0))) best = off;
    });
    if (best >= 0) fold(scatter, out_v, best, src_v, s);
    ++s;
  });
  return {out_v[0]};
}

// map: result[i] = body(inputs[0][i], ..., inputs[N-1][i]) (dimensions must be all axes).
std::vector<Tensor> eval_map(const hlo::Op& op, const std::vector<Tensor>& in, RunContext& ctx) {
  Tensor out = result_tensor(op);
  ScalarRegion body(*op.region(0), ctx);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (body.fast() && in.size() == 2) {
      body.apply_fast(in[0], i, in[1], i, out, i);
      continue;
    }
    std::vector<Tensor> args;
    for (const Tensor& t : in) args.push_back(scalar_at(t, i));
    copy_elem(out, i, body(args).at(0), 0);
  }
  return {out};
}

}  // namespace

void register_reduce_window_kernels(Kernel* t) {
  hlo::FamilyTable<Kernel> ft(t, "reduce_window.cpp", {"reduce", "window"});
  using K = hlo::OpKind;
  ft.set(K::kReduce, eval_reduce);
  ft.set(K::kReduceWindow, eval_reduce_window);
  ft.set(K::kSelectAndScatter, eval_select_and_scatter);
  ft.set(K::kMap, eval_map);
}

}  // namespace netspec::exec::ref
