// Reference kernels: elementwise unary ops (their scalar math is exec/scalar_ops.h), convert,
// bitcast_convert, reduce_precision. Float math is the C library's in the element type.
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/bf16.h"
#include "exec/ref/kernel_util.h"
#include "exec/scalar_ops.h"
#include "hlo/op_family.h"

namespace netspec::exec::ref {
namespace {

[[noreturn]] void bad_type(const hlo::Op& op, DType t) {
  fail(op_mnemonic(op.kind), "element type {} is not supported", dtype_name(t));
}

// Applies f to every element; f receives the element (typed) and returns the result element.
template <typename F>
Tensor map_same(const hlo::Op& op, const Tensor& x, F&& f) {
  Tensor out = result_tensor(op);
  std::string where(op_mnemonic(op.kind));
  visit_dtype(x.dtype(), where.c_str(), [&](auto z) {
    using T = decltype(z);
    const T* a = x.data<T>();
    T* o = out.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = f(a[i]);
  });
  return out;
}

// An op of the scalar table (exec/scalar_ops.h): result[i] = Scalar<K>::apply(x[i]).
template <hlo::OpKind K>
std::vector<Tensor> eval_unary(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  using S = Scalar<K>;
  const Tensor& x = in[0];
  if (!in_domain(S::kDomain, x.dtype())) bad_type(op, x.dtype());
  Tensor out = result_tensor(op);
  std::string where(op_mnemonic(op.kind));
  visit_dtype(x.dtype(), where.c_str(), [&](auto z) {
    using T = decltype(z);
    if constexpr (in_domain<S::kDomain, T>()) {
      using R = decltype(S::apply(T{}));
      const T* a = x.data<T>();
      R* o = out.data<R>();
      for (int64_t i = 0; i < x.numel(); ++i) o[i] = S::apply(a[i]);
    }
  });
  return {out};
}

// bf16 <-> any: through f32 (core/bf16.h: round to nearest even, NaN kept). Wider sources round
// to f32 first (f64 -> bf16 may then round twice, as XLA's CPU convert does).
bool convert_bf16(const Tensor& x, Tensor& out) {
  const int64_t n = x.numel();
  if (x.dtype() == DType::kBF16) {
    Tensor f(DType::kF32, x.shape());
    bf16_to_f32_n(x.data<uint16_t>(), f.data<float>(), n);
    if (out.dtype() == DType::kBF16) {
      std::memcpy(out.raw(), x.raw(), out.nbytes());
      return true;
    }
    visit_dtype(out.dtype(), "convert", [&](auto zt) {
      using To = decltype(zt);
      To* o = out.data<To>();
      for (int64_t i = 0; i < n; ++i) o[i] = convert_scalar<To>(f.data<float>()[i]);
    });
    return true;
  }
  if (out.dtype() != DType::kBF16) return false;
  Tensor f(DType::kF32, x.shape());
  visit_dtype(x.dtype(), "convert", [&](auto zf) {
    using From = decltype(zf);
    for (int64_t i = 0; i < n; ++i) f.data<float>()[i] = convert_scalar<float>(x.data<From>()[i]);
  });
  f32_to_bf16_n(f.data<float>(), out.data<uint16_t>(), n);
  return true;
}

std::vector<Tensor> eval_convert(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  Tensor out = result_tensor(op);
  if (convert_bf16(in[0], out)) return {out};
  visit_dtype(in[0].dtype(), "convert", [&](auto zf) {
    using From = decltype(zf);
    visit_dtype(out.dtype(), "convert", [&](auto zt) {
      using To = decltype(zt);
      const From* a = in[0].data<From>();
      To* o = out.data<To>();
      for (int64_t i = 0; i < in[0].numel(); ++i) o[i] = convert_scalar<To>(a[i]);
    });
  });
  return {out};
}

// bitcast_convert: same bytes, reinterpreted. A narrower result gains a trailing dim of
// ratio elements (little-endian order); a wider one drops the operand's trailing dim.
// i1 is one bit: i1 element k is bit k of the other side's little-endian bytes (LSB first, as
// StableHLO's interpreter does: 0x..EF -> [1, 1, 1, 1, 0, 1, 1, 1, ...]).
std::vector<Tensor> eval_bitcast_convert(const hlo::Op& op, const std::vector<Tensor>& in,
                                         RunContext&) {
  Tensor out = result_tensor(op);
  bool bits_in = is_bool(in[0].dtype()), bits_out = is_bool(out.dtype());
  if (bits_in != bits_out) {
    const Tensor& bits = bits_in ? in[0] : out;
    const Tensor& bytes = bits_in ? out : in[0];
    if (bits.numel() != static_cast<int64_t>(bytes.nbytes()) * 8)
      fail("bitcast_convert", "bit counts differ (got {} -> {})", in[0].type_str(), out.type_str());
    const auto* b = static_cast<const uint8_t*>(in[0].raw());
    auto* o = static_cast<uint8_t*>(out.raw());
    if (bits_in) {
      std::memset(o, 0, out.nbytes());
      for (int64_t k = 0; k < bits.numel(); ++k)
        o[k / 8] |= static_cast<uint8_t>((b[k] != 0) << (k % 8));
    } else {
      for (int64_t k = 0; k < bits.numel(); ++k) o[k] = (b[k / 8] >> (k % 8)) & 1;
    }
    return {out};
  }
  if (out.nbytes() != in[0].nbytes())
    fail("bitcast_convert", "byte sizes differ (got {} -> {})", in[0].type_str(), out.type_str());
  if (out.nbytes()) std::memcpy(out.raw(), in[0].raw(), out.nbytes());
  return {out};
}

// reduce_precision: rounds the mantissa to `mantissa_bits` (round to nearest even) and clamps
// the exponent range to `exponent_bits` (overflow -> ±inf, underflow -> ±0), as XLA does.
// NaN stays NaN unless mantissa_bits is 0 (then +inf, the spec). Checked against XLA CPU (jaxlib
// 0.10) on the values in unary_test.
template <typename F, typename U>
F reduce_precision_one(F x, int exp_bits, int man_bits) {
  constexpr int kBits = sizeof(F) * 8;
  constexpr int kMan = std::numeric_limits<F>::digits - 1;
  constexpr int kExp = kBits - kMan - 1;
  U b = std::bit_cast<U>(x);
  if (man_bits < kMan) {
    U last = U(1) << (kMan - man_bits);
    U base_bias = (last >> 1) - 1;
    U last_bit = (b & last) >> (kMan - man_bits);
    U trunc_mask = ~(last - 1);
    b = (b + last_bit + base_bias) & trunc_mask;
  }
  if (exp_bits < kExp) {
    U sign = U(1) << (kBits - 1);
    U exp_mask = ((U(1) << kExp) - 1) << kMan;
    U bias = (U(1) << (kExp - 1)) - 1;
    U red_bias = (U(1) << (exp_bits - 1)) - 1;
    U max_e = bias + red_bias, min_e = bias - red_bias;
    U e = b & exp_mask;
    if (e > (max_e << kMan))
      b = (b & sign) | exp_mask;
    else if (e <= (min_e << kMan))
      b = b & sign;
  }
  // NaN stays NaN while a mantissa bit is left to hold it; with none it becomes +inf, as the
  // StableHLO spec's interpreter gives (XLA CPU keeps the NaN there).
  if (std::isnan(x)) return man_bits > 0 ? x : std::numeric_limits<F>::infinity();
  return std::bit_cast<F>(b);
}

std::vector<Tensor> eval_reduce_precision(const hlo::Op& op, const std::vector<Tensor>& in,
                                          RunContext&) {
  int eb = static_cast<int>(op.attrs.get_int("exponent_bits"));
  int mb = static_cast<int>(op.attrs.get_int("mantissa_bits"));
  if (eb < 1 || mb < 0)
    fail("reduce_precision", "bad bit counts (got exponent {}, mantissa {})", eb, mb);
  if (in[0].dtype() != DType::kF32 && in[0].dtype() != DType::kF64) bad_type(op, in[0].dtype());
  return {map_same(op, in[0], [&](auto x) -> decltype(x) {
    if constexpr (std::is_same_v<decltype(x), float>)
      return reduce_precision_one<float, uint32_t>(x, eb, mb);
    else if constexpr (std::is_same_v<decltype(x), double>)
      return reduce_precision_one<double, uint64_t>(x, eb, mb);
    else
      return x;  // not reached: f32 and f64 only
  })};
}

}  // namespace

void register_unary_kernels(Kernel* t) {
  hlo::FamilyTable<Kernel> ft(t, "unary.cpp", {"unary"});
  using K = hlo::OpKind;
#define SET_UNARY(KIND) ft.set(K::KIND, eval_unary<K::KIND>);
  NETSPEC_SCALAR_UNARY_KINDS(SET_UNARY)
#undef SET_UNARY
  ft.set(K::kConvert, eval_convert);
  ft.set(K::kBitcastConvert, eval_bitcast_convert);
  ft.set(K::kReducePrecision, eval_reduce_precision);
}

}  // namespace netspec::exec::ref
