// Reference kernels: dot_general and convolution. Float results accumulate in double and round
// once (an oracle at least as exact as any fast kernel); integer results accumulate in int64
// and wrap to the result type. Precision config is accepted and ignored. bf16 operands are
// widened exactly; a bf16 result rounds the double sum to f32, then to bf16.
#include <algorithm>

#include "core/bf16.h"
#include "exec/ref/kernel_util.h"
#include "hlo/dims_fields.h"
#include "hlo/op_family.h"

namespace netspec::exec::ref {
namespace {

// Operand elements as double (float results) or int64 (integer results).
template <typename A>
std::vector<A> widen(const Tensor& t) {
  std::vector<A> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kBF16) {  // exact in f32 (and f64): products of two bf16 are exact too
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<A>(bf16_to_f32(t.data<uint16_t>()[i]));
    return v;
  }
  visit_dtype(t.dtype(), "dot_general", [&](auto z) {
    using T = decltype(z);
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<A>(p[i]);
  });
  return v;
}

template <typename A>
void store_all(Tensor& out, const std::vector<A>& acc) {
  if (out.dtype() == DType::kBF16) {  // rounded to f32, then to bf16 (nearest even)
    for (size_t i = 0; i < acc.size(); ++i)
      out.data<uint16_t>()[i] = f32_to_bf16(static_cast<float>(acc[i]));
    return;
  }
  visit_dtype(out.dtype(), "store", [&](auto z) {
    using T = decltype(z);
    T* o = out.data<T>();
    for (size_t i = 0; i < acc.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>)
        o[i] = acc[i] != 0;
      else if constexpr (std::is_integral_v<T>)
        o[i] = static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(acc[i])));
      else
        o[i] = static_cast<T>(acc[i]);
    }
  });
}

// sum + x·y in the accumulator type: integers wrap (two's complement), floats stay in double.
template <typename A>
A multiply_add(A sum, A x, A y) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<uint64_t>(sum) +
                          static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
  else
    return sum + x * y;
}

// dot_general: result dims = batch dims, lhs free dims, rhs free dims (in operand order);
// result[b, l, r] = sum over contracting k of lhs[b, l, k] * rhs[b, r, k].
template <typename A>
void dot_general_impl(const hlo::Op& op, const Tensor& lhs, const Tensor& rhs, Tensor& out) {
  const auto& dn = op.attrs.get<hlo::DotDims>("dot_dimension_numbers");
  I64s lf = hlo::free_dims(lhs.rank(), dn.lhs_batching, dn.lhs_contracting);
  I64s rf = hlo::free_dims(rhs.rank(), dn.rhs_batching, dn.rhs_contracting);
  auto ls = row_major_strides(lhs.shape()), rs = row_major_strides(rhs.shape());
  Shape cshape;
  for (int64_t d : dn.lhs_contracting) cshape.push_back(lhs.shape()[static_cast<size_t>(d)]);
  std::vector<A> a = widen<A>(lhs), b = widen<A>(rhs);
  std::vector<A> acc(static_cast<size_t>(out.numel()), A(0));
  size_t nb = dn.lhs_batching.size();
  int64_t k = 0;
  for_each_index(out.shape(), [&](const I64s& idx) {
    int64_t lo = 0, ro = 0;
    for (size_t i = 0; i < nb; ++i) {
      lo += idx[i] * ls[static_cast<size_t>(dn.lhs_batching[i])];
      ro += idx[i] * rs[static_cast<size_t>(dn.rhs_batching[i])];
    }
    for (size_t i = 0; i < lf.size(); ++i) lo += idx[nb + i] * ls[static_cast<size_t>(lf[i])];
    for (size_t i = 0; i < rf.size(); ++i)
      ro += idx[nb + lf.size() + i] * rs[static_cast<size_t>(rf[i])];
    A sum = 0;
    for_each_index(cshape, [&](const I64s& c) {
      int64_t l = lo, r = ro;
      for (size_t i = 0; i < c.size(); ++i) {
        l += c[i] * ls[static_cast<size_t>(dn.lhs_contracting[i])];
        r += c[i] * rs[static_cast<size_t>(dn.rhs_contracting[i])];
      }
      sum = multiply_add(sum, a[static_cast<size_t>(l)], b[static_cast<size_t>(r)]);
    });
    acc[static_cast<size_t>(k++)] = sum;
  });
  store_all(out, acc);
}

// convolution per the spec: feature groups split lhs features and kernel output features;
// batch groups split lhs batch and kernel output features. With x the output spatial index and
// k the kernel index, the padded, lhs-dilated input position is x*stride + k*rhs_dilation - low;
// it reads input (pos / lhs_dilation) when divisible and in range, else zero.
template <typename A>
void convolution_impl(const hlo::Op& op, const Tensor& lhs, const Tensor& rhs, Tensor& out) {
  const auto& dn = op.attrs.get<hlo::ConvDims>("dimension_numbers");
  size_t ns = dn.input_spatial.size();
  I64s stride = i64s_or(op, "window_strides", ns, 1);
  auto pad = padding_or_zero(op, "padding", ns);
  I64s ldil = i64s_or(op, "lhs_dilation", ns, 1);
  I64s rdil = i64s_or(op, "rhs_dilation", ns, 1);
  std::vector<bool> rev = bools_or(op, "window_reversal", ns);
  int64_t fgc = op.attrs.get_int_or("feature_group_count", 1);
  int64_t bgc = op.attrs.get_int_or("batch_group_count", 1);
  auto dim = [](const Tensor& t, int64_t d) { return t.shape()[static_cast<size_t>(d)]; };
  int64_t n_in = dim(lhs, dn.input_batch);
  int64_t c_k = dim(rhs, dn.kernel_input_feature);  // input features per feature group
  int64_t o_total = dim(rhs, dn.kernel_output_feature);
  int64_t o_per_fg = o_total / fgc, o_per_bg = o_total / bgc;
  int64_t n_per_bg = n_in / bgc;
  Shape kspatial;
  for (int64_t d : dn.kernel_spatial) kspatial.push_back(dim(rhs, d));
  auto ls = row_major_strides(lhs.shape()), rs = row_major_strides(rhs.shape());
  auto at = [](const std::vector<int64_t>& s, int64_t d) { return s[static_cast<size_t>(d)]; };
  std::vector<A> a = widen<A>(lhs), b = widen<A>(rhs);
  auto os = row_major_strides(out.shape());
  std::vector<A> acc(static_cast<size_t>(out.numel()), A(0));
  for_each_index(out.shape(), [&](const I64s& idx) {
    int64_t ob = idx[static_cast<size_t>(dn.output_batch)],
            of = idx[static_cast<size_t>(dn.output_feature)];
    int64_t fg = of / o_per_fg, bg = of / o_per_bg;
    int64_t batch = bg * n_per_bg + ob;
    A sum = 0;
    for_each_index(kspatial, [&](const I64s& kidx) {
      int64_t loff = batch * at(ls, dn.input_batch);
      int64_t roff = of * at(rs, dn.kernel_output_feature);
      for (size_t s = 0; s < ns; ++s) {
        int64_t x = idx[static_cast<size_t>(dn.output_spatial[s])];
        int64_t pos = x * stride[s] + kidx[s] * rdil[s] - pad[s].first;
        if (pos < 0 || pos % ldil[s] != 0) return;
        int64_t i = pos / ldil[s];
        if (i >= dim(lhs, dn.input_spatial[s])) return;
        loff += i * at(ls, dn.input_spatial[s]);
        int64_t kk = rev[s] ? kspatial[s] - 1 - kidx[s] : kidx[s];
        roff += kk * at(rs, dn.kernel_spatial[s]);
      }
      for (int64_t c = 0; c < c_k; ++c) {
        int64_t l = loff + (fg * c_k + c) * at(ls, dn.input_feature);
        int64_t r = roff + c * at(rs, dn.kernel_input_feature);
        sum = multiply_add(sum, a[static_cast<size_t>(l)], b[static_cast<size_t>(r)]);
      }
    });
    acc[static_cast<size_t>(linear_index(idx, os))] = sum;
  });
  store_all(out, acc);
}

// The result tensor, filled by impl(A{}, out) with accumulator A = double for a float result,
// int64 for an integer one.
template <typename F>
std::vector<Tensor> accumulate_into_result(const hlo::Op& op, F&& impl) {
  Tensor out = result_tensor(op);
  if (is_float(out.dtype()))
    impl(double{}, out);
  else
    impl(int64_t{}, out);
  return {out};
}

std::vector<Tensor> eval_dot_general(const hlo::Op& op, const std::vector<Tensor>& in,
                                     RunContext&) {
  return accumulate_into_result(
      op, [&](auto a, Tensor& out) { dot_general_impl<decltype(a)>(op, in[0], in[1], out); });
}

std::vector<Tensor> eval_convolution(const hlo::Op& op, const std::vector<Tensor>& in,
                                     RunContext&) {
  return accumulate_into_result(
      op, [&](auto a, Tensor& out) { convolution_impl<decltype(a)>(op, in[0], in[1], out); });
}

}  // namespace

void register_dot_conv_kernels(Kernel* t) {
  hlo::FamilyTable<Kernel> ft(t, "dot_conv.cpp", {"dot", "conv"});
  ft.set(hlo::OpKind::kDotGeneral, eval_dot_general);
  ft.set(hlo::OpKind::kConvolution, eval_convolution);
}

}  // namespace netspec::exec::ref
